#!/usr/bin/env bash
# The linters CI runs: ruff (lint rules and the formatter, checked) over the code, and mypy (with the pydantic plugin; settings
# in pyproject.toml's [tool.mypy]) over the package and the app. Both must be clean.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== ruff"
.venv/bin/ruff check inspector tests app.py bench tools
echo "== ruff format (check only: run \`.venv/bin/ruff format inspector tests app.py bench tools\` to apply)"
.venv/bin/ruff format --check inspector tests app.py bench tools
echo "== mypy"
.venv/bin/mypy
