#!/usr/bin/env bash
# Run the whole test suite (unit, parity with pi, app, real browser). Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
