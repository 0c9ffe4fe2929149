#!/usr/bin/env bash
# Debian's headless-capable Chromium for the notebook browser tests. Idempotent: does nothing
# when a chromium binary is already on PATH. Needs root (or sudo) and the Debian archive.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "install_chromium: $(chromium --version 2>/dev/null || echo chromium) already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "install_chromium: $(chromium --version)"
