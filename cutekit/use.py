"""`cutekit.use(...)`: one switch, before the kernel code is imported or defined, that decides what
`import cutlass` means for the rest of the session.

  use("sim")   cutekit's CPU simulator (any machine; torch CPU tensors and NumPy arrays)
  use("gpu")   the real CuTeDSL package on an sm_80+ GPU (an error says what is missing)
  use("auto")  the GPU when CuTeDSL and an sm_80+ GPU are both there, the simulator otherwise
"""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass

_MODES = ("auto", "sim", "gpu")


@dataclass(frozen=True)
class Backend:
    """What `import cutlass` gives now."""
    name: str        # "sim" or "gpu"
    detail: str

    def __str__(self):
        return f"cutlass = {self.detail}"

    def _repr_html_(self):
        return f"<b>cutlass</b> = {self.detail}"

    __repr__ = __str__


_ACTIVE: list = []

# set in the environment of cutekit's CuTeDSL worker processes (checks/cutedsl.py run_worker): the module a
# learner wrote is compiled (or run on the GPU) by the real library, whatever its `use(...)` at import asks for
WORKER = "CUTEKIT_REAL_CUTLASS"


def active() -> Backend | None:
    """The backend chosen by the last `use(...)` (None before the first)."""
    return _ACTIVE[-1] if _ACTIVE else None


def _is_sim_module(module) -> bool:
    return getattr(module, "__cutekit_sim__", False)


def _cutlass_names() -> list:
    return [name for name in sys.modules if name == "cutlass" or name.startswith("cutlass.")]


def _gpu_available() -> str | None:
    """A description of the sm_80+ GPU CuTeDSL can use, or None (no torch CUDA, no CuTeDSL, too old)."""
    try:
        import importlib.util
        if importlib.util.find_spec("torch") is None:
            return None
        import torch
        if not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability()
        if major < 8:
            return None
        saved = {name: sys.modules.pop(name) for name in _cutlass_names() if _is_sim_module(sys.modules[name])}
        try:
            if importlib.util.find_spec("cutlass") is None:
                return None
        finally:
            sys.modules.update(saved)
        return f"CuTeDSL on {torch.cuda.get_device_name()} (sm_{major}{minor})"
    except Exception:  # noqa: BLE001 - any failure to probe means "no GPU tier"
        return None


def use(mode: str = "auto") -> Backend:
    """Choose what `import cutlass` gives: "sim", "gpu" or "auto" (GPU if usable, else simulator)."""
    if mode not in _MODES:
        raise ValueError(f"cutekit.use(mode): mode must be one of {', '.join(map(repr, _MODES))}, got {mode!r}")
    if os.environ.get(WORKER):
        # a compile worker on a machine without a GPU would otherwise get the simulator from "auto", whose
        # cute.sym_int and kernels refuse what cute.compile needs: keep the real library
        for name in _cutlass_names():
            if _is_sim_module(sys.modules[name]):
                del sys.modules[name]
        backend = Backend("gpu", f"CuTeDSL (a cutekit worker process: use({mode!r}) keeps the real library)")
        _ACTIVE.append(backend)
        return backend
    gpu = _gpu_available() if mode in ("auto", "gpu") else None
    if mode == "gpu" and gpu is None:
        raise RuntimeError("cutekit.use('gpu'): needs nvidia-cutlass-dsl and an sm_80 or newer GPU that torch "
                           "can see; `python -m cutekit doctor` says which is missing. use('sim') runs "
                           "kernels on the CPU instead.")
    if gpu is not None:
        for name in _cutlass_names():
            if _is_sim_module(sys.modules[name]):
                del sys.modules[name]
        backend = Backend("gpu", gpu)
    else:
        from .sim.dsl import build_modules
        real = [name for name in _cutlass_names() if not _is_sim_module(sys.modules[name])]
        for name in real:
            del sys.modules[name]
        sys.modules.update(build_modules())
        backend = Backend("sim", "cutekit's CPU simulator (no GPU needed; every thread runs on the CPU)")
    _ACTIVE.append(backend)
    return backend


@contextlib.contextmanager
def using(mode: str, fresh: tuple = ()):
    """`use(mode)` for the length of a `with` block, then what `import cutlass` gave before, back.

    Modules named in `fresh` (and their submodules) are imported anew inside the block, so kernels written
    against `cutlass` bind to the chosen backend, and the earlier copies return after it. For tests and tools
    that need the simulator for a while in a process that otherwise uses real CuTeDSL."""
    prefixes = ("cutlass",) + tuple(fresh)

    def swapped(name):
        return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)

    saved = {name: module for name, module in sys.modules.items() if swapped(name)}
    for name in saved:
        del sys.modules[name]
    chosen = list(_ACTIVE)
    try:
        yield use(mode)
    finally:
        for name in [name for name in sys.modules if swapped(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
        _ACTIVE[:] = chosen
