#!/usr/bin/env bash
# The installable OpenClaw plugin: builds the component and its JavaScript
# host (the jco transpilation in hosts/openclaw/component/), then packs
# hosts/openclaw as an npm tarball: index.js, lib/, the transpiled component,
# openclaw.plugin.json and the README (package.json `files`). Installing it
# needs no Rust: `openclaw plugins install <tarball>` unpacks it and runs
# `npm install --omit=dev` for its one dependency,
# @bytecodealliance/preview2-shim (which has a native, per-platform part, so
# it is installed on the user's machine rather than bundled).
#
# Usage: scripts/pack-plugin.sh [out-dir]   (default: $CARGO_TARGET_DIR or
# target/, under pack/). The tarball's path is the last line printed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="${1:-$target/pack}"
node="$(bash "$root/scripts/node.sh")"
export PATH="$(dirname "$node"):$PATH"

(cd "$root" && cargo build --locked -p memory-core --target wasm32-wasip2 --release) >&2
bash "$root/scripts/build-js.sh" >&2

host="$root/hosts/openclaw"
for f in index.js openclaw.plugin.json README.md component/memory_core.js; do
  [ -f "$host/$f" ] || { echo "pack-plugin: $host/$f is missing" >&2; exit 1; }
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"
name="$(cd "$host" && npm pack --pack-destination "$out" --silent | tail -n 1)"
tarball="$out/$name"
# The runtime must not reach outside the package (tests/, the harness).
if tar -xOzf "$tarball" --wildcards 'package/index.js' 'package/lib/*.js' | grep -nE "from ['\"]\.\./\.\./|/tests/conformance" >&2; then
  echo "pack-plugin: the packed runtime imports from outside the package" >&2
  exit 1
fi
echo "pack-plugin: $(tar -tzf "$tarball" | wc -l) files, $(du -h "$tarball" | cut -f1)" >&2
echo "$tarball"
