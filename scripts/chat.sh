#!/usr/bin/env bash
# One command: install into .venv and start the offline console chat.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/intake-bot chat "$@"
