#!/usr/bin/env bash
# Wheels the offline GPU host lacks beyond the CuTeDSL bundle (../shared/gpu/make-bundle.sh): greenlet, which
# cutekit's simulator needs when a check grades a kernel on the CPU of a GPU machine. The host runs Python
# 3.12 on x86-64. Carry `.gpu-extra` with the run and install with
#   python3 -m pip install --no-index --no-deps .gpu-extra/*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-extra
"${PYTHON:-.venv/bin/python}" -m pip download greenlet --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .gpu-extra --quiet
grep -qx ".gpu-extra/" .git/info/exclude 2>/dev/null || echo ".gpu-extra/" >> .git/info/exclude
ls .gpu-extra
