#!/usr/bin/env bash
# Builds the JavaScript host of the component (hosts/openclaw/): installs its
# npm dependencies from the lockfile and transpiles the built component with
# jco into hosts/openclaw/component/. Needs the component built first
# (`cargo build -p memory-core --target wasm32-wasip2 --release`).
#
# Host imports that wait on JavaScript promises (the embedder's `embed`, the
# model's `complete`) suspend the component through JSPI, so every export
# that can reach them is async. `store.open` and `store.status` stay
# synchronous: OpenClaw's manager `status()` is synchronous, and jco 1.35
# cannot make a static constructor async. `status` reaches `embed` only when
# it finds the index corrupt and rebuilds it; that call traps, and the host
# answers with its last status (lib/component.js) until the next sync.
# `config.describe` and `config.resolve` are pure (no import, no file) and
# stay synchronous too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
host="$root/hosts/openclaw"
node="$(bash "$root/scripts/node.sh")"
export PATH="$(dirname "$node"):$PATH" # npm ci and its scripts run on that Node
target="${CARGO_TARGET_DIR:-$root/target}"
component="${MEMORY_CORE_COMPONENT:-$target/wasm32-wasip2/release/memory_core.wasm}"
[ -f "$component" ] || { echo "build-js: no component at $component; build it first" >&2; exit 1; }

if [ ! -f "$host/node_modules/.package-lock.json" ] || [ "$host/package-lock.json" -nt "$host/node_modules/.package-lock.json" ]; then
  (cd "$host" && npm ci --no-fund --no-audit --loglevel=error)
fi

async_exports=(
  'openclaw:memory/store#[method]memory.sync'
  'openclaw:memory/bootstrap#load'
  'openclaw:memory/recall#search' 'openclaw:memory/recall#get'
  'openclaw:memory/write#note' 'openclaw:memory/write#ingest'
  'openclaw:memory/write#flush' 'openclaw:memory/write#forget'
  'openclaw:memory/inject#trigger-inject' 'openclaw:memory/inject#escalate'
  'openclaw:memory/intents#create' 'openclaw:memory/intents#list'
  'openclaw:memory/intents#cancel' 'openclaw:memory/intents#due'
  'openclaw:memory/user#show' 'openclaw:memory/user#set'
  'openclaw:memory/dream#run' 'openclaw:memory/dream#rollback'
  'openclaw:memory/report#gather'
)
out="$host/component"
rm -rf "$out.tmp"
"$node" "$host/node_modules/@bytecodealliance/jco/dist/jco.js" transpile "$component" \
  --name memory_core -o "$out.tmp" --quiet --no-typescript -I async \
  --async-mode jspi \
  --async-imports 'openclaw:memory/embedder#embed' 'openclaw:memory/model#complete' \
  --async-exports "${async_exports[@]}"
rm -rf "$out" && mv "$out.tmp" "$out"
echo "build-js: $out ($(du -sh "$out" | cut -f1))" >&2
