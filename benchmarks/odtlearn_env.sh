#!/usr/bin/env bash
# Creates a benchmark-private venv with ODTlearn (GPL; used only as an external baseline, never vendored).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv-odtlearn"
if ! "$venv/bin/python" -c "import odtlearn, mip; assert mip.__version__ == '1.15.0'" 2>/dev/null; then
  [ -x "$venv/bin/python" ] || python3.11 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q odtlearn "mip==1.15.0"   # mip 2.x ships a CBC library ODTlearn 1.1 cannot load
fi
"$venv/bin/python" -c "import odtlearn, mip; print('odtlearn', odtlearn.__version__ if hasattr(odtlearn, '__version__') else '?', 'mip', mip.__version__)"
