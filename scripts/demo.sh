#!/usr/bin/env bash
# The demo on a fresh machine: installs what is missing, builds, then builds a
# sample workspace, indexes it with the local MiniLM embedder and shows
# bootstrap, search and get through the sandboxed component.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
bash scripts/build.sh
target_dir="${CARGO_TARGET_DIR:-target}"
exec "$target_dir/release/memory-harness" demo "$@"
