"""Copy and MMA atoms, tiled across threads, as CuTeDSL (`cutlass.cute`) names and prints them.

An *atom* is one instruction seen as layouts. A copy atom has (thread, value) -> offset layouts for its
source, its destination and a reference; an MMA atom has (thread, value) -> (m,k) / (n,k) / (m,n) layouts
for A, B and C. A *tiled* copy or MMA repeats the atom over more threads and values; a *thread slice*
(`get_slice(t)`) then partitions any tensor into the elements thread t touches.

The algorithms are CuTe's (cute/atom/copy_atom.hpp: TiledCopy::tidfrg_S, tile2thrfrg, retile;
cute/atom/mma_atom.hpp: TiledMMA::thrfrg_A/B/C, get_layoutA/B/C_TV), written over the reference algebra.
"""
import functools
import warnings
from dataclasses import dataclass, fields

import numpy

from .layout import (Layout, make_layout, size, cosize, composition, complement, right_inverse, coalesce,
                     logical_divide, logical_product, make_layout_tv, recast_layout)
from .inttuple import CuteError
from .tensor import Tensor, make_tensor

__all__ = ["CopyOp", "MmaOp", "CopyAtom", "TiledCopy", "ThrCopy", "MmaAtom", "TiledMma", "ThrMma",
           "make_copy_atom", "make_tiled_copy", "make_tiled_copy_tv", "make_tiled_copy_A", "make_tiled_copy_B",
           "make_tiled_copy_C", "make_tiled_copy_S", "make_tiled_copy_D", "make_mma_atom", "make_tiled_mma"]


class AtomDoesNotFitWarning(UserWarning):
    """A tiled copy whose TV layout is not a whole number of its atom's threads and values (an ldmatrix.x4,
    8 values per thread, over an MMA operand whose threads hold 4): CuTeDSL 4.8.1 builds it, and cutekit builds
    the same, but each atom then reaches past the tile or writes a register twice."""


# --------------------------------------------------------------------------------------------------
# Small layout helpers on the plain (shape, stride) data
# --------------------------------------------------------------------------------------------------

def _mode(layout, i):
    """Mode i of a layout, as a layout (`layout<i>` in C++)."""
    if not isinstance(layout.shape, tuple):
        assert i == 0
        return layout
    return make_layout(layout.shape[i], stride=layout.stride[i])


def _modes(layout):
    if not isinstance(layout.shape, tuple):
        return [layout]
    return [_mode(layout, i) for i in range(len(layout.shape))]


def _join(*layouts):
    """The layout whose modes are `layouts` (`make_layout(a, b, ...)` in C++)."""
    return make_layout(tuple(l.shape for l in layouts), stride=tuple(l.stride for l in layouts))


def _by_mode(operation, layout, tile):
    """Apply a layout operation mode by mode (a tuple tile), leaving a mode alone where the tile is None."""
    if tile is None:
        return layout
    if isinstance(tile, tuple):
        modes = _modes(layout)
        return _join(*[_by_mode(operation, modes[i], tile[i]) if i < len(tile) else modes[i]
                       for i in range(len(modes))])
    return operation(layout, tile if isinstance(tile, Layout) else make_layout(tile))


def _zip2_by(layout, guide):
    """Gather the (tile, rest) halves of a divided layout: where `guide` is a tuple, recurse; elsewhere the
    mode is rank 2 and splits into its two halves (C++ `zip2_by`, the unzip step of zipped_divide).
    Returns (tile layout, rest layout)."""
    if isinstance(guide, tuple):
        modes = _modes(layout)
        halves = [_zip2_by(modes[i], guide[i]) for i in range(len(guide))]
        return (_join(*[h[0] for h in halves]),
                _join(*([h[1] for h in halves] + modes[len(guide):])))
    return _mode(layout, 0), _mode(layout, 1)


def _zipped_divide_by(layout, tiler):
    """zipped_divide by a tuple tiler, with C++'s meaning of None in it: that mode is already (tile, rest).

    ((M,N,...) by (TileM,TileN)) -> ((TileM,TileN),(RestM,RestN,...)).
    """
    divided = _by_mode(logical_divide, layout, tiler)
    return _join(*_zip2_by(divided, tiler))


def _coalesce_by(layout, profile):
    """coalesce mode by mode down to `profile` (C++ `coalesce(layout, profile)`): where the profile is an
    int, that whole sub-layout is coalesced into as few modes as possible; where it is a tuple, recurse."""
    if not isinstance(profile, tuple):
        return coalesce(layout)
    modes = _modes(layout)
    return _join(*[_coalesce_by(modes[i], profile[i]) if i < len(profile) else modes[i] for i in range(len(modes))])


def _zip(layout):
    """((a,b),(c,d)) -> ((a,c),(b,d)) on a rank-2 layout of rank-2 modes (C++ `zip`)."""
    (a, b), (c, d) = [_modes(m) for m in _modes(layout)]
    return _join(_join(a, c), _join(b, d))


def _flat_coordinate(layout, index):
    """The coordinate of `index` in each top-level mode of a compact layout, each mode's coordinate as one
    integer (C++ `get_flat_coord`: idx2crd by the layout's strides, then colexicographic within a mode)."""
    def leaves(shape, stride):
        if isinstance(shape, tuple):
            return [leaf for s, d in zip(shape, stride) for leaf in leaves(s, d)]
        return [(shape, stride)]
    coordinate = []
    for mode in _modes(layout):
        value, scale = 0, 1
        for shape, stride in leaves(mode.shape, mode.stride):
            value += scale * ((index // stride) % shape if stride != 0 else 0)
            scale *= shape
        coordinate.append(value)
    return tuple(coordinate)


def _pretty(value):
    """CuTeDSL's `pretty_str`: tuples without spaces, None as `_`."""
    if isinstance(value, tuple):
        return "(" + ",".join(_pretty(v) for v in value) + ")"
    return "_" if value is None else str(value)


def _as_tile_layout(entry):
    return entry if entry is None or isinstance(entry, Layout) else make_layout(entry)


# A thread slice repeats its tiled copy's or MMA's layout work for every thread; these caches make that once.

@functools.lru_cache(maxsize=1024)
def _zipped_divide_cached(layout, tiler):
    return _zipped_divide_by(layout, tiler)


@functools.lru_cache(maxsize=1024)
def _tile2thrfrg(layout_tv_tiled, atom_thr, atom_val, ref_to_target, layout):
    """((TileM,TileN,...),(Rest...)) -> (Thr,(FrgV,FrgX),(Rest...)) for the target (src or dst) numbering.

    The atom's threads and values are the lowest ones of layout_tv_tiled: split them off, renumber them
    from the reference to the target order, put all thread modes together and all value modes together.
    """
    atom_tv = _zipped_divide_by(layout_tv_tiled, (make_layout(atom_thr), make_layout(atom_val)))
    # ((atom_tid,atom_val),(rest_tid,rest_val)) -> tile index
    target_tv = _join(composition(_mode(atom_tv, 0), ref_to_target), _mode(atom_tv, 1))
    thread_value_to_tile = _coalesce_by(_zip(target_tv), (1, (1, 1)))
    # (Thr,(FrgV,FrgX)) -> tile index
    tiled = _join(composition(_mode(layout, 0), thread_value_to_tile), *_modes(layout)[1:])
    return _join(*_modes(_mode(tiled, 0)), *_modes(tiled)[1:])


# --------------------------------------------------------------------------------------------------
# Operations (the nvgpu package defines the concrete ones)
# --------------------------------------------------------------------------------------------------

class CopyOp:
    """A copy instruction. Subclasses define `_atom_layouts(value_type, **kwargs)`, which returns
    (thr_id, src, dst, ref): thr_id maps the atom's logical thread to a thread index, and src, dst, ref map
    (thread, value) to an offset in elements of `value_type`."""

    @staticmethod
    def bits_to_values(layout, value_type):
        """A (thread, bit) -> bit layout read in elements of `value_type` (C++ `recast_layout<uint1_t, T>`)."""
        return recast_layout(value_type.width, 1, layout)


class MmaOp:
    """An MMA instruction. Subclasses define `_atom_layouts()`, returning (thr_id, shape_mnk, A, B, C), and
    `operand_dtypes`, the element types of A, B and C."""


# --------------------------------------------------------------------------------------------------
# Copy atoms
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CopyAtom:
    """One copy instruction: which logical threads take part and, per thread, which values it moves."""
    op: CopyOp
    value_type: type
    thr_id: Layout
    layout_src_tv: Layout
    layout_dst_tv: Layout
    _layout_ref_tv: Layout  # C++ ValLayoutRef; CuTeDSL keeps it inside its IR (= dst for every op here)

    def _atom_lines(self, width):
        return ["Copy Atom",
                "  ThrID:".ljust(width) + str(self.thr_id),
                "  TV Layout Src:".ljust(width) + str(self.layout_src_tv),
                "  TV Layout Dst:".ljust(width) + str(self.layout_dst_tv),
                "  Value type:".ljust(width) + self.value_type.mlir_type]

    def __str__(self):
        return "\n".join(self._atom_lines(17))

    # cutekit-only (CuTeDSL keeps these inside its IR): cutekit.cute.not_in_cutedsl shows them
    @property
    def _src_to_ref(self):
        """(src thread, src value) -> (ref thread, ref value): right_inverse(ref) o src."""
        return composition(right_inverse(self._layout_ref_tv), self.layout_src_tv)

    @property
    def _dst_to_ref(self):
        """(dst thread, dst value) -> (ref thread, ref value): right_inverse(ref) o dst."""
        return composition(right_inverse(self._layout_ref_tv), self.layout_dst_tv)


def make_copy_atom(op, copy_internal_type, **kwargs):
    """The copy atom of `op` for elements of `copy_internal_type`; kwargs go to the op (`num_bits_per_copy`).

    >>> from cutekit.cute import nvgpu, typing
    >>> atom = make_copy_atom(nvgpu.cpasync.CopyG2SOp(), typing.Float16, num_bits_per_copy=128)
    >>> str(atom.layout_src_tv)
    '(1,8):(0,1)'
    """
    thr_id, src, dst, ref = op._atom_layouts(copy_internal_type, **kwargs)
    return CopyAtom(op, copy_internal_type, thr_id, src, dst, ref)


# --------------------------------------------------------------------------------------------------
# Tiled copies
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TiledCopy(CopyAtom):
    """A copy atom repeated over a tile: `layout_tv_tiled` maps (thread, value) to a coordinate (as an index,
    column-major) of the `tiler_mn` tile; the atom's threads and values come first (lowest) in it."""
    layout_tv_tiled: Layout
    tiler_mn: tuple  # one Layout per mode, as CuTeDSL returns it: (16:1,64:1)

    def __str__(self):
        return "\n".join(["Tiled Copy",
                          "  Tiler MN:        " + _pretty(self.tiler_mn),
                          "  TV Layout tiled: " + str(self.layout_tv_tiled)] + self._atom_lines(19))

    @property
    def size(self):
        """The number of threads."""
        return size(_mode(self.layout_tv_tiled, 0))

    def _atom_num_thr_val(self):
        return size(_mode(self._layout_ref_tv, 0)), size(_mode(self._layout_ref_tv, 1))

    def _tile2thrfrg(self, layout, ref_to_target):
        atom_thr, atom_val = self._atom_num_thr_val()
        return _tile2thrfrg(self.layout_tv_tiled, atom_thr, atom_val, ref_to_target, layout)

    def _tidfrg_S(self, layout):
        """(M,N,...) -> (Thr,(FrgV,FrgX),(RestM,RestN,...)) in the source's (thread, value) order."""
        return self._tile2thrfrg(_zipped_divide_cached(layout, self.tiler_mn), self._src_to_ref)

    def _tidfrg_D(self, layout):
        """(M,N,...) -> (Thr,(FrgV,FrgX),(RestM,RestN,...)) in the destination's (thread, value) order."""
        return self._tile2thrfrg(_zipped_divide_cached(layout, self.tiler_mn), self._dst_to_ref)

    def _reference_tile(self):
        shapes = tuple(t.shape for t in self.tiler_mn)
        return make_layout((shapes, 1))

    @property
    def layout_src_tv_tiled(self):
        """(thread, value) -> tile index in the source's order (C++ get_layoutS_TV)."""
        tv = self._tile2thrfrg(self._reference_tile(), self._src_to_ref)
        return _join(_mode(tv, 0), _mode(tv, 1))

    @property
    def layout_dst_tv_tiled(self):
        """(thread, value) -> tile index in the destination's order (C++ get_layoutD_TV)."""
        tv = self._tile2thrfrg(self._reference_tile(), self._dst_to_ref)
        return _join(_mode(tv, 0), _mode(tv, 1))

    def get_slice(self, thr_idx):
        """The part of this copy that thread `thr_idx` performs."""
        thread = ThrCopy(*[getattr(self, f.name) for f in fields(TiledCopy)], thr_idx)
        object.__setattr__(thread, "_tiled", self._tiled if isinstance(self, ThrCopy) else self)
        return thread

    def _retile_layout(self, layout):
        """(V,Rest...) of a thread's fragment -> ((AtomV,RestV),Rest...): regroup a fragment's values so the
        first mode holds one atom's values, in the order layout_tv_tiled gives them (C++ TiledCopy::retile)."""
        rank = len(layout.shape) if isinstance(layout.shape, tuple) else 1
        values = size(_mode(layout, 0))
        tile_shape = tuple(t.shape for t in self.tiler_mn)
        # (m,n) -> value index: the order of the values inside layout_tv_tiled
        # (upcast: C++ retile reads it in units of one value of every thread)
        value_of_mn = recast_layout(self.size * values, 1,
                                    composition(right_inverse(self.layout_tv_tiled), make_layout(tile_shape)))
        atom_val = self._atom_num_thr_val()[1]
        # (atom_vals, rest_vals) -> (v, m, n)
        values_split = logical_divide(logical_product(make_layout(values), right_inverse(value_of_mn)),
                                      make_layout(atom_val))
        per_mode = tuple(size(m) for m in _modes(value_of_mn))
        tiled = _zipped_divide_by(layout, tuple(make_layout(s) for s in (values,) + per_mode))
        # ((TileV,TileM,TileN,...),(1,RestM,RestN,...)); the leading 1 is sliced off
        return _join(composition(_mode(tiled, 0), values_split), *_modes(_mode(tiled, 1))[1:rank])

    def retile(self, src):
        """The same registers as `src`, viewed as ((AtomV,RestV),Rest...) for this copy."""
        return src.with_layout(self._retile_layout(src.layout))


@dataclass(frozen=True)
class ThrCopy(TiledCopy):
    """One thread's view of a tiled copy: partition_S / partition_D give the elements it moves."""
    thr_idx: int

    def _partition(self, tensor, source: bool):
        tiled = getattr(self, "_tiled", None) or TiledCopy(*[getattr(self, f.name) for f in fields(TiledCopy)])
        piece = tensor.with_layout(_thread_major(tiled, tensor.layout, source))[(self.thr_idx, None)]
        return piece.with_layout(_mode(piece.layout, 0))      # the one kept mode, unwrapped

    def partition_S(self, src):
        """This thread's elements of `src`: ((FrgV,FrgX),RestM,RestN,...), in source order."""
        return self._partition(src, True)

    def partition_D(self, dst):
        """This thread's elements of `dst`: ((FrgV,FrgX),RestM,RestN,...), in destination order."""
        return self._partition(dst, False)


@functools.lru_cache(maxsize=4096)
def _thread_major(tiled, layout, source: bool):
    """(Thr,Frg,(RestM,RestN,...)) -> (Thr,(Frg,RestM,RestN,...)): fixing Thr then leaves the thread's piece
    with the rest modes side by side, ((FrgV,FrgX),RestM,RestN,...), as CuTe's slice flattens them. The same
    for every thread of a copy, so it is computed once."""
    threads, fragment, rest = _modes(tiled._tidfrg_S(layout) if source else tiled._tidfrg_D(layout))
    return _join(threads, _join(fragment, *_modes(rest)))


def make_tiled_copy(atom, layout_tv, tiler_mn):
    """A tiled copy from a (thread, value) -> tile-index layout and the tile it covers."""
    tiler = tuple(_as_tile_layout(t) for t in tiler_mn)
    fields_of_atom = [getattr(atom, f.name) for f in fields(CopyAtom)]
    tiled = TiledCopy(*fields_of_atom, layout_tv, tiler)
    atom_thr, atom_val = tiled._atom_num_thr_val()
    threads, values = size(_mode(layout_tv, 0)), size(_mode(layout_tv, 1))
    if threads % atom_thr or values % atom_val:
        op = atom.op
        ldmatrix = hasattr(op, "num_matrices")
        what = "ldmatrix.x%d" % op.num_matrices if ldmatrix else type(op).__name__
        smaller = "a smaller ldmatrix" if ldmatrix else "a narrower num_bits_per_copy"
        warnings.warn(AtomDoesNotFitWarning(
            f"the TV layout {layout_tv} gives its {threads} threads {values} values each, which is not a whole "
            f"number of atoms: one {what} moves {atom_val} values per thread over {atom_thr} threads. CuTeDSL "
            "4.8.1 builds this copy all the same, and so does cutekit, but an atom then reaches past the thread's "
            "values: partition_S/D can hold elements past the tile, and retile can map two copy values to one "
            "register (a stride 0), which is then written twice. C++ CuTe refuses such a copy at compile time; "
            f"choose an atom whose values per thread divide the thread's ({smaller})."), stacklevel=3)
    return tiled


def make_tiled_copy_tv(atom, thr_layout, val_layout):
    """A tiled copy where `thr_layout` places threads on the tile and `val_layout` each thread's values
    (the tile is their raked product)."""
    tiler_mn, layout_tv = make_layout_tv(thr_layout, val_layout)
    return make_tiled_copy(atom, layout_tv, tuple(size(make_layout(t)) for t in tiler_mn))


def make_tiled_copy_S(atom, tiled_copy):
    """A tiled copy of `atom` whose threads and values are `tiled_copy`'s source side (its
    layout_src_tv_tiled over its tile)."""
    return make_tiled_copy(atom, tiled_copy.layout_src_tv_tiled, tiled_copy.tiler_mn)


def make_tiled_copy_D(atom, tiled_copy):
    """A tiled copy of `atom` whose threads and values are `tiled_copy`'s destination side: the registers a
    TMEM load left in each thread, stored on by another atom (the epilogue's registers -> shared memory)."""
    return make_tiled_copy(atom, tiled_copy.layout_dst_tv_tiled, tiled_copy.tiler_mn)


def make_tiled_copy_A(atom, tiled_mma):
    """A tiled copy whose threads and values are the MMA's A operand's (tv_layout_A_tiled on an M x K tile)."""
    return make_tiled_copy(atom, tiled_mma.tv_layout_A_tiled, (tiled_mma.get_tile_size(0), tiled_mma.get_tile_size(2)))


def make_tiled_copy_B(atom, tiled_mma):
    """A tiled copy whose threads and values are the MMA's B operand's (tv_layout_B_tiled on an N x K tile)."""
    return make_tiled_copy(atom, tiled_mma.tv_layout_B_tiled, (tiled_mma.get_tile_size(1), tiled_mma.get_tile_size(2)))


def make_tiled_copy_C(atom, tiled_mma):
    """A tiled copy whose threads and values are the MMA's C operand's (tv_layout_C_tiled on an M x N tile)."""
    return make_tiled_copy(atom, tiled_mma.tv_layout_C_tiled, (tiled_mma.get_tile_size(0), tiled_mma.get_tile_size(1)))


# --------------------------------------------------------------------------------------------------
# MMA atoms
# --------------------------------------------------------------------------------------------------

_NUMPY_TYPES = {"f16": numpy.float16, "bf16": numpy.float32, "f32": numpy.float32, "tf32": numpy.float32,
                "f64": numpy.float64,
                "i8": numpy.int8, "i16": numpy.int16, "i32": numpy.int32}


def _fragment(dtype, input, operand="A"):
    """Registers for a partition: a compact column-major tensor of `dtype` with the partition's shape
    (bfloat16 values are held as float32, which NumPy lacks). `input` is a shape, a layout or a memory tensor;
    a coordinate tensor (make_identity_tensor) is refused, as CuTeDSL 4.8.1 refuses it."""
    if isinstance(input, Tensor) and input.is_coordinate:
        raise CuteError(f"make_fragment_{operand}: expects a shape, a layout or a memory tensor, but got a "
                        f"coordinate tensor {input}: registers are made for a partition of memory (or for its "
                        f"shape: make_fragment_{operand}(partition.shape))")
    shape = input.layout.shape if isinstance(input, Tensor) else input.shape if isinstance(input, Layout) else input
    layout = make_layout(shape)
    return make_tensor(numpy.zeros(cosize(layout), dtype=_NUMPY_TYPES[dtype.mlir_type]), layout)


@dataclass(frozen=True)
class MmaAtom:
    """One MMA instruction: its threads, its M x N x K shape, and (thread, value) layouts for A, B and C
    (into (m,k), (n,k) and (m,n) indices, column-major)."""
    op: MmaOp
    thr_id: Layout
    shape_mnk: tuple
    tv_layout_A: Layout
    tv_layout_B: Layout
    tv_layout_C: Layout

    def _atom_lines(self, width):
        return ["MMA Atom",
                "  ThrID:".ljust(width) + str(self.thr_id),
                "  Shape MNK:".ljust(width) + _pretty(self.shape_mnk),
                "  TV Layout A:".ljust(width) + str(self.tv_layout_A),
                "  TV Layout B:".ljust(width) + str(self.tv_layout_B),
                "  TV Layout C:".ljust(width) + str(self.tv_layout_C)]

    def __str__(self):
        return "\n".join(self._atom_lines(15))

    def make_fragment_A(self, input):
        """Registers for A: a tensor of the A type shaped like `input` (a partition or a shape); for a tcgen05
        MMA, the shared-memory tensor seen as one descriptor per MMA."""
        if hasattr(self.op, "_make_fragment_AB"):
            return self.op._make_fragment_AB("A", input)
        return _fragment(self.op.operand_dtypes[0], input, "A")

    def make_fragment_B(self, input):
        """Registers for B: a tensor of the B type shaped like `input` (a partition or a shape); for a tcgen05
        MMA, the shared-memory tensor seen as one descriptor per MMA."""
        if hasattr(self.op, "_make_fragment_AB"):
            return self.op._make_fragment_AB("B", input)
        return _fragment(self.op.operand_dtypes[1], input, "B")

    def make_fragment_C(self, input):
        """Registers for C: a tensor of the accumulator type shaped like `input` (a partition or a shape); for a
        tcgen05 MMA, the accumulator in tensor memory (input: partition_shape_C of the MMA tile)."""
        if hasattr(self.op, "_make_fragment_C"):
            return self.op._make_fragment_C(input)
        return _fragment(self.op.operand_dtypes[2], input, "C")


def make_mma_atom(op):
    """The MMA atom of `op`.

    >>> from cutekit.cute import nvgpu, typing
    >>> atom = make_mma_atom(nvgpu.warp.MmaF16BF16Op(typing.Float16, typing.Float32, (16, 8, 16)))
    >>> str(atom.tv_layout_C)
    '((4,8),(2,2)):((32,1),(16,8))'
    """
    thr_id, shape_mnk, layout_a, layout_b, layout_c = op._atom_layouts()
    return MmaAtom(op, thr_id, shape_mnk, layout_a, layout_b, layout_c)


# --------------------------------------------------------------------------------------------------
# Tiled MMAs
# --------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def _thrfrg(layout, permutation, atom_shape, atom_tv, thread_groups):
    """Permute the two modes, cut them into atom tiles, turn each atom tile into (thread, value), then
    deal the atom tiles out among the thread groups of those two modes:
    (M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))."""
    permuted = _by_mode(logical_divide, layout, permutation)
    in_atoms = _zipped_divide_by(permuted, tuple(make_layout(s) for s in atom_shape))  # ((AtomM,AtomK),(RestM,RestK,...))
    thread_value = _join(composition(_mode(in_atoms, 0), atom_tv), _mode(in_atoms, 1))
    return _zipped_divide_by(thread_value, (None, tuple(make_layout(g) for g in thread_groups)))


_OPERAND_MODES = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}  # which of M, N, K each operand spans


@dataclass(frozen=True)
class TiledMma(MmaAtom):
    """An MMA atom repeated over threads (`thr_layout_vmnk`: (atom thread, M, N, K) -> thread index) and
    optionally permuted (`permutation_mnk`: one Layout or None per mode, the order in which M, N and K
    coordinates are handed to the atoms)."""
    thr_layout_vmnk: Layout
    permutation_mnk: tuple

    def __str__(self):
        return "\n".join(["Tiled MMA",
                          "  Thr Layout VMNK: " + str(self.thr_layout_vmnk),
                          "  Permutation MNK: " + _pretty(self.permutation_mnk)] + self._atom_lines(19))

    @property
    def size(self):
        """The number of threads."""
        return size(self.thr_layout_vmnk)

    def get_tile_size(self, mode_idx):
        """The extent of the tile in M (0), N (1) or K (2): the permutation's size, or atoms x atom extent."""
        assert 0 <= mode_idx < 3
        permutation = self.permutation_mnk[mode_idx]
        if permutation is None:
            return self.shape_mnk[mode_idx] * size(_mode(self.thr_layout_vmnk, mode_idx + 1))
        return size(permutation)

    def _permutation_tile(self, mode_idx):
        permutation = self.permutation_mnk[mode_idx]
        return make_layout(self.get_tile_size(mode_idx)) if permutation is None else permutation

    def _thrfrg(self, operand, layout):
        """(M,K,...) -> ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...))) for A; likewise B over (N,K) and C
        over (M,N)."""
        first, second = _OPERAND_MODES[operand]
        return _thrfrg(layout, (self._permutation_tile(first), self._permutation_tile(second)),
                       (self.shape_mnk[first], self.shape_mnk[second]), getattr(self, "tv_layout_" + operand),
                       (size(_mode(self.thr_layout_vmnk, first + 1)), size(_mode(self.thr_layout_vmnk, second + 1))))

    def _thread_index_to_vmnk(self):
        # thr_idx -> (ThrV,ThrM,ThrN,ThrK) index: invert thr_layout_vmnk (padded by its complement)
        vmnk = self.thr_layout_vmnk
        inverse = right_inverse(_join(vmnk, complement(vmnk, cosize(vmnk))))
        return composition(make_layout((size(vmnk), 1), stride=(1, 0)), inverse)

    def _tv_layout_tiled(self, operand):
        first, second = _OPERAND_MODES[operand]
        reference = make_layout((self.get_tile_size(first), self.get_tile_size(second)))
        partitioned = self._thrfrg(operand, reference)
        threads, values = _mode(partitioned, 0), _mode(partitioned, 1)
        vmnk = self.thr_layout_vmnk
        thr_m, thr_n = size(_mode(vmnk, 1)), size(_mode(vmnk, 2))
        if operand == "A":  # (ThrM,ThrK) -> ((ThrM,ThrN),ThrK): threads that differ only in N share A
            threads = _by_mode(composition, threads, (None, (make_layout((thr_m, thr_n), stride=(1, 0)), None)))
        elif operand == "B":
            threads = _by_mode(composition, threads, (None, (make_layout((thr_m, thr_n), stride=(0, 1)), None)))
        threads = composition(threads, self._thread_index_to_vmnk())
        return _join(threads, values)

    @property
    def tv_layout_A_tiled(self):
        """(thread index, value) -> (m,k) index in the M x K tile (C++ get_layoutA_TV)."""
        return self._tv_layout_tiled("A")

    @property
    def tv_layout_B_tiled(self):
        """(thread index, value) -> (n,k) index in the N x K tile (C++ get_layoutB_TV)."""
        return self._tv_layout_tiled("B")

    @property
    def tv_layout_C_tiled(self):
        """(thread index, value) -> (m,n) index in the M x N tile (C++ get_layoutC_TV)."""
        return self._tv_layout_tiled("C")

    def get_slice(self, thr_idx):
        """The part of this MMA that thread `thr_idx` computes."""
        return ThrMma(*[getattr(self, f.name) for f in fields(TiledMma)], thr_idx)

    def _partition_shape(self, operand, shape):
        # C++ partition_shape_A/B/C: the atom's values, then each mode divided by what the atoms cover
        first, second = _OPERAND_MODES[operand]
        modes = shape if isinstance(shape, tuple) else (shape,)
        if len(modes) < 2:
            raise CuteError(f"partition_shape_{operand}({shape}): the shape needs at least two modes")
        values = _mode(getattr(self, "tv_layout_" + operand), 1).shape
        covered = [self.shape_mnk[m] * size(_mode(self.thr_layout_vmnk, m + 1)) for m in (first, second)]
        if hasattr(self.op, "_make_fragment_C"):        # tcgen05: CuTeDSL 4.8.1 partitions whole MMA tiles only
            names = "MNK"
            for extent, tile, m in zip(modes[:2], covered, (first, second)):
                if size(extent) % tile:
                    raise CuteError(f"partition_shape_{operand}({shape}): {size(extent)} is not a whole number of the "
                                    f"MMA's {names[m]} extent {tile} (CuTeDSL 4.8.1 fails to partition it): make the "
                                    f"tile a multiple of the instruction shape {tuple(self.shape_mnk)}")
        # CuTe's shape_div: the quotient, or 1 when the mode is smaller than the divisor
        rests = tuple(size(s) // d if size(s) // d else 1 for s, d in zip(modes[:2], covered))
        return (values,) + rests + tuple(modes[2:])

    def partition_shape_A(self, shape_mk):
        """The shape of one thread's partition_A of an (M,K,...) tensor, (FrgV,RestM,RestK,...), from the
        atom and the atom layout alone (CuTe's partition_shape_A; a permutation does not change it)."""
        return self._partition_shape("A", shape_mk)

    def partition_shape_B(self, shape_nk):
        """The shape of one thread's partition_B of an (N,K,...) tensor: (FrgV,RestN,RestK,...)."""
        return self._partition_shape("B", shape_nk)

    def partition_shape_C(self, shape_mn):
        """The shape of one thread's partition_C of an (M,N,...) tensor: (FrgV,RestM,RestN,...).

        >>> from cutekit.cute import nvgpu, typing
        >>> op = nvgpu.warp.MmaF16BF16Op(typing.Float16, typing.Float32, (16, 8, 16))
        >>> make_tiled_mma(op, (4, 1, 1), permutation_mnk=(64, 16, 16)).partition_shape_C((128, 64))
        ((2, 2), 2, 8)
        """
        return self._partition_shape("C", shape_mn)


@dataclass(frozen=True)
class ThrMma(TiledMma):
    """One thread's view of a tiled MMA: partition_A/B/C give the elements it reads or accumulates."""
    thr_idx: int

    def _partition(self, operand, tensor):
        first, second = _OPERAND_MODES[operand]
        v, m, n, k = _flat_coordinate(self.thr_layout_vmnk, self.thr_idx)
        groups = (m, n, k)
        # ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...))) -> fix the thread, keep (FrgV,RestM,RestK,...)
        threads, values = _modes(self._thrfrg(operand, tensor.layout))
        fragment, rest = _modes(values)
        kept = _join(fragment, *_modes(rest))
        piece = tensor.with_layout(_join(threads, kept))[((v, (groups[first], groups[second])), None)]
        return piece.with_layout(_mode(piece.layout, 0))      # the one kept mode, unwrapped

    def partition_A(self, input_mk):
        """This thread's elements of A: (FrgV,RestM,RestK,...)."""
        return self._partition("A", input_mk)

    def partition_B(self, input_nk):
        """This thread's elements of B: (FrgV,RestN,RestK,...)."""
        return self._partition("B", input_nk)

    def partition_C(self, input_mn):
        """This thread's elements of C: (FrgV,RestM,RestN,...)."""
        return self._partition("C", input_mn)


def make_tiled_mma(op_or_atom, atom_layout_mnk=(1, 1, 1), permutation_mnk=None):
    """Tile an MMA atom over threads: `atom_layout_mnk` (rank 3) places atoms in M, N and K;
    `permutation_mnk` (three entries, each None, an int or a Layout) sets the tile each mode covers and the
    order of its coordinates.

    >>> from cutekit.cute import nvgpu, typing
    >>> op = nvgpu.warp.MmaF16BF16Op(typing.Float16, typing.Float32, (16, 8, 16))
    >>> str(make_tiled_mma(op, (2, 2, 1)).thr_layout_vmnk)
    '(32,2,2,1):(1,32,64,0)'
    """
    atom = op_or_atom if isinstance(op_or_atom, MmaAtom) else make_mma_atom(op_or_atom)
    if isinstance(atom_layout_mnk, tuple):
        atom_layout_mnk = make_layout(atom_layout_mnk)
    if not isinstance(atom_layout_mnk.shape, tuple) or len(atom_layout_mnk.shape) != 3:
        raise ValueError("expects rank-3 MNK atom layout, but got %s" % atom_layout_mnk)
    # (ThrV,ThrM,ThrN,ThrK) -> thread index: atom threads first, then the atoms' own layout (tiled_product)
    spread = composition(complement(atom.thr_id, size(atom.thr_id) * cosize(atom_layout_mnk)), atom_layout_mnk)
    thr_layout_vmnk = _join(atom.thr_id, *_modes(spread))
    if permutation_mnk is None:
        permutation = (None, None, None)
    else:
        permutation = tuple(_as_tile_layout(p) for p in permutation_mnk)
        if len(permutation) != 3:
            raise ValueError("expects a rank-3 permutation_mnk, but got %s" % (permutation_mnk,))
    fields_of_atom = [getattr(atom, f.name) for f in fields(MmaAtom)]
    return TiledMma(*fields_of_atom, thr_layout_vmnk, permutation)
