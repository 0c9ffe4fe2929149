#!/usr/bin/env bash
# Print the path of the newest CPython on this machine whose version is at least $1 (e.g. 3.12)
# and at most $2 when given; exit 1, printing nothing, when there is none. pyenv's versions first (when pyenv exists), then
# python3.N on PATH. Each candidate is asked its own version: a name is not trusted.
set -uo pipefail
MIN=${1:?usage: find_python.sh MIN_VERSION [MAX_VERSION]}
MAX=${2:-99.999}
candidates=()
if command -v pyenv >/dev/null 2>&1; then
  root=$(pyenv root)
  for v in $(pyenv versions --bare 2>/dev/null); do
    for exe in "$root/versions/$v/bin/python3" "$root/versions/$v/bin/python"; do
      if [ -x "$exe" ]; then candidates+=("$exe"); break; fi
    done
  done
fi
for minor in 20 19 18 17 16 15 14 13 12 11; do
  exe=$(command -v "python3.$minor" 2>/dev/null || true)
  if [ -n "$exe" ]; then candidates+=("$exe"); fi
done
best=""; best_key=-1
min_key=$(echo "$MIN" | awk -F. '{print $1 * 1000 + $2}')
max_key=$(echo "$MAX" | awk -F. '{print $1 * 1000 + $2}')
for exe in "${candidates[@]}"; do
  ver=$("$exe" -c 'import sys; assert sys.implementation.name == "cpython"; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
  [ -n "$ver" ] || continue
  key=$(echo "$ver" | awk -F. '{print $1 * 1000 + $2}')
  if [ "$key" -ge "$min_key" ] && [ "$key" -le "$max_key" ] && [ "$key" -gt "$best_key" ]; then best=$exe; best_key=$key; fi
done
[ -n "$best" ] || exit 1
echo "$best"
