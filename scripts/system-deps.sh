#!/usr/bin/env bash
# System packages the report needs beyond Python: Chromium renders the PDF (fallback
# renderer) and runs the browser tests. Installs from Debian when missing and we are root;
# otherwise says what to install. Quarto is optional (conda-forge, see environment.yml).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
  || command -v google-chrome >/dev/null 2>&1; then
  exit 0
fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Chromium (Debian package) for PDF rendering and browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
else
  echo "Chromium is missing: install it (Debian/Ubuntu: sudo apt-get install chromium)" >&2
  echo "or set CHROMIUM=/path/to/chrome. HTML reports work without it; PDF does not." >&2
fi
