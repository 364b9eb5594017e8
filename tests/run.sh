#!/usr/bin/env bash
# Install everything the tests need, then run the whole suite headless:
# lint (ruff), the import contract (import-linter), and pytest (which builds the packaged binary
# and starts its own PostgreSQL server). Exits non-zero when anything fails or no test ran.
set -euo pipefail
cd "$(dirname "$0")/.."

bash packaging/setup-env.sh --test

export QT_QPA_PLATFORM=offscreen
echo "== ruff"
.venv/bin/ruff check .
echo "== import-linter"
.venv/bin/lint-imports
echo "== pytest"
# pytest exits 5 when it collected no test; that is a failure here too.
.venv/bin/python -m pytest "$@"
