#!/usr/bin/env bash
# Creates .venv with the Python interop peers from PyPI (Tests/Interop/requirements.txt).
# Re-installs only when the requirements file changed (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
req=Tests/Interop/requirements.txt
stamp=.venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
