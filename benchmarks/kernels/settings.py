"""Compile-time settings of a kernel module, changed for one trace and restored (the GEMMs' `configured`)."""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def overridden(namespace: dict, module: str, allowed: tuple, knobs: dict):
    """Set `knobs` in the module's `namespace` (its globals, which the kernel reads as compile-time constants)
    while the block runs, then restore them; a name not in `allowed` is refused before anything changes."""
    unknown = sorted(set(knobs) - set(allowed))
    if unknown:
        raise ValueError(f"unknown {module} setting(s) {unknown}: use some of {list(allowed)}")
    saved = {name: namespace[name] for name in knobs}
    namespace.update(knobs)
    try:
        yield
    finally:
        namespace.update(saved)
