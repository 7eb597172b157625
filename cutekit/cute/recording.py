"""Record the calls a piece of code makes to cutekit.cute, so that each can be asked again of real CuTeDSL.

A chapter builds its layouts with `cutekit.cute` outside any `@cute.jit` function, where CuTeDSL cannot run
them. Inside `recording(keep)` every public function of `cutekit.cute` (and of its `nvgpu` modules), and every
public method and property of its layouts, tensors and atoms, logs one `Call` whenever the frame calling it
passes `keep(frame)`: its name, its arguments (the objects themselves), its result and the result as printed.
Calls made from inside a recorded call are not logged again: only what the caller wrote is.

    with recording(lambda frame: frame.f_code.co_filename == cell_file) as calls:
        exec(code, namespace)
    [(c.name, c.printed) for c in calls]      # [("make_layout", "(4,8):(8,1)"), (".__call__", "10"), ...]

A function's name is its name in `cutekit.cute` ("make_layout", "nvgpu.warpgroup.make_smem_layout_atom"); a
method's or property's starts with a dot (".get_slice", ".layout_src_tv"), its object being the first argument.
"""
from __future__ import annotations

import contextlib
import functools
import sys
import threading
import types
from dataclasses import dataclass

_state = threading.local()


@dataclass
class Call:
    name: str
    args: tuple
    kwargs: dict
    result: object = None
    printed: str = ""
    error: str = ""                    # "TypeError: ..." where the call raised (and `result` is None)
    where: tuple = ()                  # (file name, line) of the line that made the call
    kind: str = "function"             # "function", "method" or "property"


def show(value) -> str:
    """A result as CuTeDSL's and cutekit's objects print, tuples and lists element by element."""
    if isinstance(value, tuple):
        return "(" + ", ".join(show(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


def _modules():
    from cutekit import cute
    from cutekit.cute import memory, tensor_utils  # noqa: F401  (a chapter may import them after recording starts)
    from cutekit.cute.utils import blackwell_helpers  # noqa: F401
    found = [("", cute)]
    for name in ("nvgpu", "nvgpu.warp", "nvgpu.warpgroup", "nvgpu.cpasync", "nvgpu.tcgen05", "utils",
                 "utils.blackwell_helpers", "memory", "tensor_utils"):
        module = sys.modules.get(f"cutekit.cute.{name}")
        if module is not None:
            found.append((name + ".", module))
    return found


def _classes():
    from cutekit.cute import atom, layout, tensor
    classes = [layout.Layout, layout.ComposedLayout, layout.Swizzle, tensor.Tensor]
    classes += [getattr(atom, name) for name in ("CopyAtom", "MmaAtom", "TiledCopy", "TiledMma", "ThrCopy", "ThrMma")
                if hasattr(atom, name)]
    tma = sys.modules.get("cutekit.cute.nvgpu.cpasync.tma")
    if tma is not None and hasattr(tma, "TmaCopyAtom"):
        classes.append(tma.TmaCopyAtom)
    return classes


def _logged(name, function, args, kwargs, caller, kind, calls):
    """Call `function`, logging the call (made from the frame `caller`) into `calls`."""
    call = Call(name, args, dict(kwargs), where=(caller.f_code.co_filename, caller.f_lineno), kind=kind)
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    try:
        call.result = function(*args, **kwargs)
    except Exception as error:
        call.error = f"{type(error).__name__}: {error}"
        raise
    finally:
        _state.depth = depth
        if not call.error:
            try:
                call.printed = show(call.result)
            except Exception as error:        # an object that cannot print is a finding too
                call.printed = f"<print failed: {type(error).__name__}: {error}>"
        calls.append(call)
    return call.result


def _recorder(name, function, keep, calls, kind):
    @functools.wraps(function)
    def recorded(*args, **kwargs):
        caller = sys._getframe(1)
        if getattr(_state, "depth", 0) or not keep(caller):
            return function(*args, **kwargs)
        return _logged(name, function, args, kwargs, caller, kind, calls)
    return recorded


def _property_recorder(name, prop, keep, calls):
    def fget(self):
        caller = sys._getframe(1)
        if getattr(_state, "depth", 0) or not keep(caller):
            return prop.fget(self)
        return _logged(name, prop.fget, (self,), {}, caller, "property", calls)
    return property(fget, prop.fset, prop.fdel, prop.__doc__)


@contextlib.contextmanager
def recording(keep=lambda frame: True):
    """Log every call of cutekit.cute's public functions, methods and properties whose caller's frame passes
    `keep` into the list this yields, until the block ends (then everything is as it was)."""
    calls: list = []
    restore = []
    for prefix, module in _modules():
        for name, value in list(vars(module).items()):
            if name.startswith("_") or not isinstance(value, types.FunctionType):
                continue
            if not (value.__module__ or "").startswith("cutekit.cute"):
                continue
            restore.append((module, name, value))
            setattr(module, name, _recorder(prefix + name, value, keep, calls, "function"))
    for cls in _classes():
        for klass in cls.__mro__:
            if not klass.__module__.startswith("cutekit.cute"):
                continue
            for name, value in list(vars(klass).items()):
                if any(owner is klass and attribute == name for owner, attribute, _ in restore):
                    continue
                public = not name.startswith("_") or name in ("__call__", "__getitem__")
                if not public:
                    continue
                if isinstance(value, types.FunctionType):
                    wrapped = _recorder("." + name, value, keep, calls, "method")
                elif isinstance(value, property) and value.fget is not None:
                    wrapped = _property_recorder("." + name, value, keep, calls)
                else:
                    continue
                restore.append((klass, name, value))
                setattr(klass, name, wrapped)
    try:
        yield calls
    finally:
        for owner, name, value in reversed(restore):
            setattr(owner, name, value)

