#!/usr/bin/env bash
# Retrieval quality by one command (issue 23): the supersession benchmark
# (generated, in the repository: does the latest value of a changed fact
# come first, and are unchanged old facts still found) over several seeds,
# as hand-written daily notes and as notes written with supersedes keys,
# and beside it LoCoMo's R@4k (dev split) in the four modes — FTS-only and
# hybrid, each with the configured ranking and time-neutral — when
# ../shared's data and evaluation tool are there (they are not part of the
# project, so they are skipped, saying so, when absent).
#
#   bash scripts/recall-quality.sh [SEEDS...]     (default: 1 2 3)
#
# Any global flag of the harness can be given in MEMORY_FLAGS (e.g.
# MEMORY_FLAGS="--embedder none" for the supersession runs FTS-only).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SEEDS=("$@")
[ ${#SEEDS[@]} -gt 0 ] || SEEDS=(1 2 3)
bash scripts/build.sh >&2
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
BIN="$TARGET_DIR/release/memory-harness"
read -r -a FLAGS <<< "${MEMORY_FLAGS:-}"

echo "== supersession (hybrid unless MEMORY_FLAGS says otherwise; top 10 hits)"
for seed in "${SEEDS[@]}"; do
  "$BIN" "${FLAGS[@]}" bench-supersession --seed "$seed" | tail -n 3 | head -n 2 | sed "s/^/seed $seed, hand-written: /"
  "$BIN" "${FLAGS[@]}" bench-supersession --seed "$seed" --keyed | tail -n 3 | head -n 2 | sed "s/^/seed $seed, keyed notes: /"
done

DATA=${LOCOMO_DATA:-../shared/data/locomo-dev.json}
TOOL=${LOCOMO_TOOL:-../shared/tools/locomo_eval.py}
if [ ! -f "$DATA" ] || [ ! -f "$TOOL" ]; then
  echo "== LoCoMo skipped: $DATA or $TOOL is missing"
  exit 0
fi
echo "== LoCoMo (dev split): R@5, R@10 and R@4k of every question (the tool also prints each category)"
echo "mode ranking:        category   n     R@5    R@10    R@4k   empty    hits/q lines/hit"
for mode in "fts-only|--embedder none" "hybrid|"; do
  name=${mode%%|*}
  embedder=${mode#*|}
  for ranking in "configured|" "time-neutral|--half-life-days 0"; do
    label=${ranking%%|*}
    half=${ranking#*|}
    line=$(python3 "$TOOL" --data "$DATA" --system harness --bin "$BIN" \
      --harness-index-args "$embedder" --harness-args "$embedder $half" | grep -E '^overall' || true)
    echo "$name $label: $line"
  done
done
