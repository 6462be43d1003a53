#!/usr/bin/env bash
# The plugin in the real OpenClaw, end to end, as a user installs it: packs
# the plugin (scripts/pack-plugin.sh builds the component and its
# JavaScript host), installs OpenClaw (pinned, from the npm registry, into
# the cache directory; the home directory is untouched), and runs
# hosts/openclaw/test/e2e.mjs, which installs the tarball into a fresh
# OpenClaw state (`openclaw plugins install`) and runs `openclaw memory …`,
# agent turns against a local fake model and the cron jobs against that
# installed copy, in `plugins.slots.memory`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
openclaw_version="${OPENCLAW_VERSION:-2026.9.6}"
cache="${MEMORY_CORE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-core}"

bash "$root/scripts/setup.sh"
node="$(bash "$root/scripts/node.sh")"
export PATH="$(dirname "$node"):$PATH"
tarball="$(bash "$root/scripts/pack-plugin.sh" | tail -n 1)"

prefix="$cache/openclaw-$openclaw_version"
if [ ! -x "$prefix/node_modules/.bin/openclaw" ]; then
  echo "openclaw-e2e: installing openclaw@$openclaw_version into $prefix" >&2
  mkdir -p "$prefix"
  [ -f "$prefix/package.json" ] || echo '{"name":"openclaw-e2e","private":true}' > "$prefix/package.json"
  (cd "$prefix" && npm install --no-fund --no-audit --loglevel=error "openclaw@$openclaw_version")
fi
"$node" "$root/hosts/openclaw/test/e2e.mjs" "$prefix/node_modules/.bin/openclaw" "$tarball"
