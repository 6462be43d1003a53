#!/usr/bin/env bash
# The test command: installs what is missing, builds the component, then runs
# every test — the plugin's unit tests (native), the harness's unit tests, the
# MiniLM check against pinned reference values, and the conformance suite
# through the wasmtime sandbox.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cargo build --locked -p memory-core --target wasm32-wasip2 --release
cargo test --locked --workspace --release
