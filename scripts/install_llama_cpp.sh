#!/usr/bin/env bash
# Install llama-cpp-python (the embedded model's runtime) into the venv given as $1, built
# portable: no -march=native, so the binary runs on any x86-64 CPU with AVX2 (with or without
# AVX-512/AMX) and on any arm64 CPU. A native build on AMX CPUs loads weights into llama.cpp's
# AMX buffer and segfaults on the first decode.
#
# pip's wheel cache is keyed by the sdist alone, not by CMAKE_ARGS, so it would silently reuse a
# wheel built earlier with other flags. The build therefore bypasses pip's cache and keeps its
# own, keyed by version + architecture + flags.
set -euo pipefail
VENV=${1:?usage: install_llama_cpp.sh VENV}
VERSION=0.3.36
case "$(uname -m)" in
  x86_64|amd64) FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" ;;
  aarch64|arm64) FLAGS="-DGGML_NATIVE=OFF" ;;
  *) FLAGS="-DGGML_NATIVE=OFF" ;;
esac
PY="$VENV/bin/python"
PYTAG=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
KEY=$(printf '%s|%s|%s|%s' "$VERSION" "$(uname -m)" "$PYTAG" "$FLAGS" | sha256sum | cut -c1-16)
STAMP="$VENV/.llama_cpp_build"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$KEY" ] && "$PY" -c "import llama_cpp" 2>/dev/null; then
  exit 0
fi
WHEELS="${VF_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/verifiers_lite/wheels}/llama-cpp-python-$KEY"
if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo "setup: building llama-cpp-python $VERSION portable ($FLAGS); ~6-10 min on 2 cores, once" >&2
  tmp="$WHEELS.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  CMAKE_ARGS="$FLAGS" FORCE_CMAKE=1 "$PY" -m pip wheel -q --no-cache-dir --no-deps \
    --no-binary llama-cpp-python -w "$tmp" "llama-cpp-python==$VERSION"
  rm -rf "$WHEELS" && mv "$tmp" "$WHEELS"
fi
# --force-reinstall --no-deps replaces any other build already in the venv (a user's native one).
"$PY" -m pip install -q --force-reinstall --no-deps "$WHEELS"/llama_cpp_python-*.whl
"$PY" -m pip install -q "llama-cpp-python[server]==$VERSION"
echo "$KEY" > "$STAMP"
