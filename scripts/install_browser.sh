#!/usr/bin/env bash
# Installs what tests/e2e/test_browser.py needs: Playwright's Python package (into the project venv) and
# Debian's chromium (Playwright drives it through executable_path, so no Playwright browser download).
# Idempotent; run as root (or with sudo available) on Debian/Ubuntu. Used by .ci/run before `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
"$PYTHON" -m pip install --quiet "playwright>=1.40"
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium
fi
command -v chromium || command -v chromium-browser
