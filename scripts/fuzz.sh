#!/usr/bin/env bash
# Fuzz the parsers for a bounded time each (cargo-fuzz, libFuzzer, nightly):
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Targets: markdown, query, transcript, rewrite (default: all, 60 s each).
# Inputs that crash are saved under fuzz/artifacts/<target>/; once fixed,
# copy them to fuzz/regressions/<target>/, where the unit tests replay them.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(markdown query transcript rewrite)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
for target in "${targets[@]}"; do
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus"
  cp -n fuzz/regressions/"$target"/* "$corpus"/ 2>/dev/null || true
  echo "== $target: ${seconds}s"
  cargo +nightly fuzz run "$target" "$corpus" -- \
    -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 2>&1 \
    | grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY|ERROR|panicked|Done' || true
done
