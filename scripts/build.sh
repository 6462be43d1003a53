#!/usr/bin/env bash
# Builds the component (wasm32-wasip2) and the harness, both in release.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --locked -p memory-core --target wasm32-wasip2 --release
cargo build --locked -p memory-harness --release
