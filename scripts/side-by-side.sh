#!/usr/bin/env bash
# Measures the real OpenClaw (its in-process memory search, FTS-only) and
# memory-core (sandboxed and native) on the same corpora and the same
# queries, in one run, and prints the ratios. OpenClaw comes from
# ../shared/peer/setup.sh (Node 24 and openclaw from the npm registry,
# under /tmp/peer); it is set up first when missing.
#
#   bash scripts/side-by-side.sh [--hybrid] [CORPUS...]    (default: n100 n1000)
#   (--hybrid: also memory-core with all-MiniLM-L6-v2, each query once)
#
# Writes target/side-by-side.json as well.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PEER=${PEER:-/tmp/peer}
SETUP=${PEER_SETUP:-../shared/peer/setup.sh}
if [ ! -x "$PEER/inproc.sh" ] || [ ! -d "$PEER/ws/n1000" ]; then
  [ -f "$SETUP" ] || { echo "OpenClaw is not set up under $PEER and $SETUP is missing" >&2; exit 1; }
  bash "$SETUP" >&2
fi
bash scripts/build.sh >&2
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
exec python3 scripts/side_by_side.py --peer "$PEER" --harness "$TARGET_DIR/release/memory-harness" \
  --out "$TARGET_DIR/side-by-side.json" "$@"
