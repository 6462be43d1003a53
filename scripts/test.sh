#!/usr/bin/env bash
# The test command: installs what is missing, checks formatting and lints
# (rustfmt, clippy with warnings as errors), builds the component, then runs
# every test — the plugin's unit tests (native), the harness's unit tests, the
# MiniLM check against pinned reference values, and the conformance suite
# through the wasmtime sandbox; then the JavaScript host (hosts/openclaw):
# its unit tests, and the same conformance suite under Node through jco; and
# the release artifacts, checked outside the repository.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
# Style and lints first: they fail in seconds, before the long builds. The
# component module (contract/component.rs) only compiles for wasm32, so
# clippy also runs for that target.
cargo fmt --all -- --check
cargo clippy --locked --workspace --release --all-targets -- -D warnings
cargo clippy --locked -p memory-core --target wasm32-wasip2 --release -- -D warnings
cargo build --locked -p memory-core --target wasm32-wasip2 --release
cargo test --locked --workspace --release

bash scripts/build-js.sh
node="$(bash scripts/node.sh)"
"$node" --test hosts/openclaw/test/*.test.mjs
"$node" hosts/openclaw/conformance/run.mjs tests/conformance
# The poisoning suite under Node: the same attacks, written as scenarios by
# the harness (one source of truth), run by the Node host's runner.
poisoning="$(mktemp -d)"
trap 'rm -rf "$poisoning"' EXIT
cargo run --locked --release -q -p memory-harness -- poisoning-scenarios "$poisoning"
"$node" hosts/openclaw/conformance/run.mjs "$poisoning"
# The release artifacts: built into a scratch dist/, checked by their sums,
# and the packed harness run outside the repository (scripts/release.sh).
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  bash scripts/release.sh "$poisoning/dist" >/dev/null
else
  echo "test: release artifacts are built for Linux x86-64 only; skipped on $(uname -s)-$(uname -m)" >&2
fi
