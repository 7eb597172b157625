"""On a machine without a GPU, every test sees CuTeDSL compile for sm_80.

CuTeDSL reads CUTE_DSL_ARCH once, when `cutlass` is first imported, so it is set here, before any test
module imports it (the Makefile exports it too; this covers a bare `pytest`). With a GPU, CuTeDSL
targets the GPU it finds."""
import os
import shutil

if not shutil.which("nvidia-smi"):
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_80")
