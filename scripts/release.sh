#!/usr/bin/env bash
# A release in dist/, for users without a Rust toolchain:
#   memory-harness-<version>-x86_64-linux.tar.gz   the harness binary with the
#       component beside it (where it looks first), fetch-model.sh for the
#       MiniLM weights, and the README;
#   memory-core-<version>.wasm                     the component alone, for
#       other hosts (WIT package in `memory-harness --version`);
#   openclaw-memory-memory-wasm-<version>.tgz      the OpenClaw plugin
#       (`openclaw plugins install`);
#   SHA256SUMS                                     `sha256sum -c SHA256SUMS`.
# Then it checks what it made: the sums; the packed binary, run from a
# scratch directory, names the packed component's version, and writes and
# finds a note in a new workspace.
#
# Usage: scripts/release.sh [dist-dir]   (default: dist/ in the repository)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="${1:-$root/dist}"
target="${CARGO_TARGET_DIR:-$root/target}"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "release: builds the Linux x86-64 binary; this is $(uname -s)-$(uname -m)" >&2
  exit 1
fi

bash "$root/scripts/setup.sh"
(cd "$root" && bash scripts/build.sh) >&2
plugin="$(bash "$root/scripts/pack-plugin.sh" | tail -n 1)"

harness="$target/release/memory-harness"
component="$target/wasm32-wasip2/release/memory_core.wasm"
version="$("$harness" --version | sed -n '1s/^memory-harness //p')"
name="memory-harness-$version-x86_64-linux"

rm -rf "$dist"
mkdir -p "$dist/$name"
cp "$harness" "$component" "$root/scripts/fetch-model.sh" "$root/README.md" "$dist/$name/"
# Reproducible: the same build packs to the same bytes.
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - -C "$dist" "$name" \
  | gzip -n > "$dist/$name.tar.gz"
rm -rf "$dist/$name"
cp "$component" "$dist/memory-core-$version.wasm"
cp "$plugin" "$dist/"
(cd "$dist" && sha256sum -- *.tar.gz *.wasm *.tgz > SHA256SUMS)

# Check: the sums hold, and the unpacked binary finds its component.
(cd "$dist" && sha256sum --quiet -c SHA256SUMS)
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
tar -xzf "$dist/$name.tar.gz" -C "$scratch"
said="$(cd "$scratch" && env -u MEMORY_CORE_COMPONENT "$scratch/$name/memory-harness" --version)"
echo "$said" >&2
echo "$said" | grep -q "^component $version ($scratch/$name/memory_core.wasm)$" || {
  echo "release: the packed harness does not find its packed component" >&2
  exit 1
}
# And it works without the repository: a note written and found again in a
# new workspace, with a fresh cache (FTS-only: the weights are not fetched).
run=(env -u MEMORY_CORE_COMPONENT HOME="$scratch/home" XDG_CACHE_HOME="$scratch/cache" XDG_CONFIG_HOME="$scratch/config" \
  "$scratch/$name/memory-harness" --embedder none --workspace "$scratch/ws")
(cd "$scratch" && "${run[@]}" -q init >/dev/null \
  && "${run[@]}" note --source owner "The release check note names the kestrel gateway." >/dev/null \
  && "${run[@]}" search kestrel | grep -q "kestrel gateway") || {
  echo "release: the packed harness could not write and find a note" >&2
  exit 1
}
ls -l "$dist" >&2
cat "$dist/SHA256SUMS"
