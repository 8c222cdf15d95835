#!/usr/bin/env bash
# Create .venv (if missing) and install Context Inspector with its dev/test extras (and the notebook one:
# the notebook tests run notebooks/ on a real kernel).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[dev,llm,corpus,dask,notebook]"
