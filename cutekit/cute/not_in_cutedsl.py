"""What cutekit's atoms can show that CuTeDSL 4.8.1's Python API does not expose.

CuTeDSL keeps a copy atom's reference layout and the steps of partition_S / retile inside its IR; C++ CuTe
names them (Copy_Traits::RefLayout, TiledCopy::tidfrg_S, TiledCopy::retile). cutekit computes them the same
way and shows them here, as functions of a cutekit atom, so that no cutekit object carries an attribute that
CuTeDSL's lacks: code that calls these runs on cutekit only, and says so where it is called.

    layout_ref_tv(copy_atom)          (thread, value) -> offset of the reference (= destination for every atom)
    src_to_ref(copy_atom)             (src thread, src value) -> (ref thread, ref value)
    dst_to_ref(copy_atom)             (dst thread, dst value) -> (ref thread, ref value)
    tidfrg_S(tiled_copy, layout)      (M,N,...) -> (Thr,(FrgV,FrgX),(RestM,RestN,...)), the source's order
    tidfrg_D(tiled_copy, layout)      the same in the destination's order
    retile_layout(tiled_copy, layout) what retile(fragment) does to the fragment's layout
    tensor_over(array, layout)        a tensor over a NumPy array, to read a layout's offsets as data on the CPU
                                      (CuTeDSL's make_tensor takes a pointer, inside @cute.jit)
    swizzled(swizzle, offset)         the offset a swizzle S<B,M,S> sends `offset` to (CuTeDSL's Swizzle is
                                      not callable from Python)

>>> from cutekit.cute import make_copy_atom, nvgpu, Float16
>>> atom = make_copy_atom(nvgpu.warp.LdMatrix8x8x16bOp(False, 4), Float16)
>>> str(layout_ref_tv(atom)), str(src_to_ref(atom))
('(32,(2,4)):(2,(1,64))', '((8,4),(2,4)):((4,64),(32,1))')
"""
from .atom import AtomDoesNotFitWarning, CopyAtom, TiledCopy
from .inttuple import CuteError

__all__ = ["layout_ref_tv", "src_to_ref", "dst_to_ref", "tidfrg_S", "tidfrg_D", "retile_layout",
           "tensor_over", "swizzled", "AtomDoesNotFitWarning"]


def _cutekit(obj, kind, name):
    if not isinstance(obj, kind):
        raise CuteError(f"not_in_cutedsl.{name} takes a cutekit {kind.__name__}, got {type(obj).__module__}."
                        f"{type(obj).__name__}: CuTeDSL 4.8.1 does not expose {name}")
    return obj


def layout_ref_tv(copy_atom):
    """The atom's reference (thread, value) -> offset layout (C++ ValLayoutRef; the destination's here)."""
    return _cutekit(copy_atom, CopyAtom, "layout_ref_tv")._layout_ref_tv


def src_to_ref(copy_atom):
    """(src thread, src value) -> (ref thread, ref value): composition(right_inverse(ref), src)."""
    return _cutekit(copy_atom, CopyAtom, "src_to_ref")._src_to_ref


def dst_to_ref(copy_atom):
    """(dst thread, dst value) -> (ref thread, ref value): composition(right_inverse(ref), dst)."""
    return _cutekit(copy_atom, CopyAtom, "dst_to_ref")._dst_to_ref


def tidfrg_S(tiled_copy, layout):
    """(M,N,...) -> (Thr,(FrgV,FrgX),(RestM,RestN,...)) in the source's (thread, value) order: what
    get_slice(t).partition_S slices thread t out of (C++ TiledCopy::tidfrg_S)."""
    return _cutekit(tiled_copy, TiledCopy, "tidfrg_S")._tidfrg_S(layout)


def tidfrg_D(tiled_copy, layout):
    """The same as tidfrg_S in the destination's (thread, value) order (C++ TiledCopy::tidfrg_D)."""
    return _cutekit(tiled_copy, TiledCopy, "tidfrg_D")._tidfrg_D(layout)


def retile_layout(tiled_copy, layout):
    """(V,Rest...) of a thread's fragment -> ((AtomV,RestV),Rest...): the layout tiled_copy.retile gives it."""
    return _cutekit(tiled_copy, TiledCopy, "retile_layout")._retile_layout(layout)


def tensor_over(array, layout):
    """A tensor over a NumPy array (or CPU torch tensor) seen through `layout`: its elements are data on the CPU.

    >>> import numpy
    >>> from cutekit.cute import make_layout
    >>> t = tensor_over(numpy.arange(6), make_layout((2, 3), stride=(3, 1)))
    >>> int(t[1, 2])
    5
    """
    from .tensor import make_tensor
    return make_tensor(array, layout)


def swizzled(swizzle, offset: int) -> int:
    """Where the swizzle S<B,M,S> sends `offset`: the B bits above bit M+S xored into the B bits above bit M.

    >>> from cutekit.cute import make_swizzle
    >>> swizzled(make_swizzle(3, 4, 3), 128)
    144
    """
    return swizzle(offset)
