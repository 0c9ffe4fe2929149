#!/usr/bin/env bash
# Make DIR a venv (Python 3.11-3.13) holding a reference package at an exact version, for a
# differential test's oracle; kept when it already answers with that version and has each also-package.
#   usage: bash .ci/oracle_venv.sh LABEL DIR PACKAGE VERSION [ALSO_PACKAGE...]
set -euo pipefail
cd "$(dirname "$0")/.."
LABEL=${1:?usage: oracle_venv.sh LABEL DIR PACKAGE VERSION [ALSO_PACKAGE...]}
DIR=${2:?}
PACKAGE=${3:?}
VERSION=${4:?}
shift 4
ALSO=("$@")

ready() {
  [ -x "$DIR/bin/python" ] && "$DIR/bin/python" - "$PACKAGE" "$VERSION" "${ALSO[@]}" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
package, version, *also = sys.argv[1:]
sys.exit(m.version(package) != version or any(m.version(a) == "" for a in also))
PY
}

if ready; then
  echo "$LABEL: $DIR already has $PACKAGE $VERSION"
  exit 0
fi
PY=$(bash .ci/find_python.sh 3.11 3.13) || { echo "$LABEL: no Python 3.11-3.13 here" >&2; exit 1; }
rm -rf "$DIR"
"$PY" -m venv "$DIR"
"$DIR/bin/python" -m pip install -q --upgrade pip
"$DIR/bin/python" -m pip install -q "$PACKAGE==$VERSION" "${ALSO[@]}"
echo "$LABEL: $DIR ready ($PACKAGE $VERSION, $("$DIR/bin/python" --version))"
