#!/usr/bin/env bash
# The plugin in the real OpenClaw, end to end: builds the component and its
# JavaScript host, installs OpenClaw (pinned, from the npm registry, into the
# cache directory; the home directory is untouched), and runs
# hosts/openclaw/test/e2e.mjs: `openclaw memory status|index|search` and one
# agent turn against a local fake model, with the plugin in
# `plugins.slots.memory`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
openclaw_version="${OPENCLAW_VERSION:-2026.9.6}"
cache="${MEMORY_CORE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-core}"

bash "$root/scripts/setup.sh"
node="$(bash "$root/scripts/node.sh")"
export PATH="$(dirname "$node"):$PATH"
(cd "$root" && cargo build --locked -p memory-core --target wasm32-wasip2 --release)
bash "$root/scripts/build-js.sh"

prefix="$cache/openclaw-$openclaw_version"
if [ ! -x "$prefix/node_modules/.bin/openclaw" ]; then
  echo "openclaw-e2e: installing openclaw@$openclaw_version into $prefix" >&2
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || echo '{"name":"openclaw-e2e","private":true}' > "$prefix/package.json"
  (cd "$prefix" && npm install --no-fund --no-audit --loglevel=error "openclaw@$openclaw_version")
fi
"$node" "$root/hosts/openclaw/test/e2e.mjs" "$prefix/node_modules/.bin/openclaw"
