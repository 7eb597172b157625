"""tcgen05.ld: loads from tensor memory (TMEM) to registers, sm_100, as CuTeDSL 4.8.1 describes them.

A TMEM load is issued by a whole warp; warp w of a warpgroup reaches only lanes 32(w%4) .. 32(w%4)+31 (its
sub-partition). The shape names what one warp moves per repetition:

    Ld32x32bOp      32 lanes x 32 bits: thread t gets lane t's column(s)
    Ld16x32bx2Op    16 lanes x 32 bits, twice (a second block of columns): threads 0-15 and 16-31
    Ld16x64bOp      16 lanes x 64 bits: a pair of threads per lane
    Ld16x128bOp     16 lanes x 128 bits: four threads per lane, lanes l and l+8 in one thread
    Ld16x256bOp     16 lanes x 256 bits

`repeat` (Repetition.x1 .. x128) repeats it along the columns; `pack` PACK_16b_IN_32b reads 16-bit values
that sit one per 32-bit column and packs two into each register. The stores St32x32bOp ... (tcgen05.st,
`repeat` required, `unpack` UNPACK_32b_IN_16b the other way round) move the same registers back.

The atom prints as CuTeDSL prints it: the source (TMEM) side is every thread seeing the whole block,
(32, elements):(0,1), the destination side is the registers each thread receives. `make_tmem_copy(atom,
tmem_tensor)` tiles the atom over the 4 warps of a warpgroup and over the tensor (CuTe's make_cotiled_copy).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ...atom import CopyOp, make_tiled_copy, _by_mode, _join, _mode
from ...inttuple import CuteError, is_tuple
from ...layout import (coalesce, composition, cosize, filter as _filter, left_inverse, make_layout,
                       recast_layout, size)

DP_BITS = 1 << 21          # one TMEM lane in bit addresses (65536 32-bit columns)


class Repetition(Enum):
    x1 = 1
    x2 = 2
    x4 = 4
    x8 = 8
    x16 = 16
    x32 = 32
    x64 = 64
    x128 = 128

    def __str__(self):
        return f"Repetition.{self.name}"


class Pack(Enum):
    NONE = 1
    PACK_16b_IN_32b = 2

    def __str__(self):
        return f"Pack.{self.name}"


class Unpack(Enum):
    NONE = 1
    UNPACK_32b_IN_16b = 2

    def __str__(self):
        return f"Unpack.{self.name}"


class _TmemShape:
    """What a TMEM load and the store of the same shape share: lanes a warp reaches, bits per lane and
    repetition, and which register bits each thread holds."""
    lanes = 32                 # data paths one warp reaches
    bits = 32                  # bits per lane and repetition (both halves for 16x32bx2)
    max_repeat = 128

    def _check_repeat(self):
        if not isinstance(self.repeat, Repetition):
            raise CuteError("expects the 'repeat' Op parameter to be a tcgen05.Repetition instance")
        if self.repeat.value > self.max_repeat:
            refused = "x128" if self.max_repeat == 64 else "x64 and x128"
            raise CuteError(f"{type(self).__name__}: {refused} repetition is not supported (choose one of x1 .. "
                            f"x{self.max_repeat}), got {self.repeat}")

    def _columns_bits(self):
        """Bits of one lane, all repetitions."""
        return self.bits * self.repeat.value

    def _value_bits(self):
        """(logical bit, lane) -> TMEM bit address (CuTe's ValID); 16-bit values packed in registers sit one
        per 32-bit column."""
        c = self._columns_bits()
        if self._sixteen_per_column():
            return make_layout(((16, c // 16), self.lanes), stride=((1, 32), DP_BITS))
        return make_layout((c, self.lanes), stride=(1, DP_BITS))

    def _registers_bits(self):
        """(thread, register bit) -> logical bit."""
        c, r = self._columns_bits(), self.repeat.value
        if self._shape == "32x32b":             # thread t: lane t
            return make_layout((32, c), stride=(c, 1))
        if self._shape == "16x32bx2":           # threads 0-15 the first half of the columns, 16-31 the second
            return make_layout(((16, 2), c // 2), stride=((c, c // 2), 1))
        if self._shape == "16x64b":             # a pair of threads per lane, lanes l and l + 8 apart by 4 threads
            values = make_layout(32, stride=1) if r == 1 else make_layout((32, r), stride=(1, 64))
            return make_layout(((2, 2, 8), values.shape), stride=((8 * c, 32, c), values.stride))
        width = 32 if self._shape == "16x128b" else 64     # four threads per lane, lanes l and l + 8 in one
        values = ((width, 2), (1, 8 * c)) if r == 1 else ((width, 2, r), (1, 8 * c, 4 * width))
        return make_layout(((4, 8), values[0]), stride=((width, c), values[1]))

    def _tmem_side(self, value_type):
        width = value_type.width
        total = self.lanes * self._columns_bits()
        if total % width:
            raise CuteError(f"{type(self).__name__}: {total} bits are not a whole number of {value_type}")
        return make_layout((32, total // width), stride=(0, 1))


@dataclass(frozen=True)
class _LdBase(_TmemShape, CopyOp):
    repeat: Repetition = Repetition.x1
    pack: Pack = Pack.NONE

    def __post_init__(self):
        self._check_repeat()
        if not isinstance(self.pack, Pack):
            raise CuteError("expects the 'pack' Op parameter to be a tcgen05.Pack instance")

    def __str__(self):
        text = (f"tcgen05 {type(self).__name__[:-2]} Copy Operation"
                f"\n  number of repetitions = {self.repeat.value}")
        if self.pack is Pack.PACK_16b_IN_32b:
            text += "\n  with 2x 16-bit to 32b packing"
        return text

    def _sixteen_per_column(self):
        return self.pack is Pack.PACK_16b_IN_32b

    def _atom_layouts(self, value_type, **unused):
        tmem = self._tmem_side(value_type)
        registers = self.bits_to_values(self._registers_bits(), value_type)
        return make_layout(32, stride=1), tmem, registers, tmem


@dataclass(frozen=True)
class _StBase(_TmemShape, CopyOp):
    repeat: Repetition
    unpack: Unpack = Unpack.NONE

    def __post_init__(self):
        self._check_repeat()
        if not isinstance(self.unpack, Unpack):
            raise CuteError("expects the 'unpack' Op parameter to be a tcgen05.Unpack instance")

    def __str__(self):
        text = (f"tcgen05 {type(self).__name__[:-2]} Copy Operation"
                f"\n  number of repetitions = {self.repeat.value}")
        if self.unpack is Unpack.UNPACK_32b_IN_16b:
            text += "\n  with 32-bit to 2x 16b unpacking"
        return text

    def _sixteen_per_column(self):
        return self.unpack is Unpack.UNPACK_32b_IN_16b

    def _atom_layouts(self, value_type, **unused):
        tmem = self._tmem_side(value_type)
        registers = self.bits_to_values(self._registers_bits(), value_type)
        return make_layout(32, stride=1), registers, tmem, tmem


def _shape(name, lanes, bits, max_repeat=128):
    return {"_shape": name, "lanes": lanes, "bits": bits, "max_repeat": max_repeat}


Ld32x32bOp = dataclass(frozen=True)(type("Ld32x32bOp", (_LdBase,), _shape("32x32b", 32, 32)))
Ld16x32bx2Op = dataclass(frozen=True)(type("Ld16x32bx2Op", (_LdBase,), _shape("16x32bx2", 16, 64)))
Ld16x64bOp = dataclass(frozen=True)(type("Ld16x64bOp", (_LdBase,), _shape("16x64b", 16, 64)))
Ld16x128bOp = dataclass(frozen=True)(type("Ld16x128bOp", (_LdBase,), _shape("16x128b", 16, 128, 64)))
Ld16x256bOp = dataclass(frozen=True)(type("Ld16x256bOp", (_LdBase,), _shape("16x256b", 16, 256, 32)))
St32x32bOp = dataclass(frozen=True)(type("St32x32bOp", (_StBase,), _shape("32x32b", 32, 32)))
St16x32bx2Op = dataclass(frozen=True)(type("St16x32bx2Op", (_StBase,), _shape("16x32bx2", 16, 64)))
St16x64bOp = dataclass(frozen=True)(type("St16x64bOp", (_StBase,), _shape("16x64b", 16, 64)))
St16x128bOp = dataclass(frozen=True)(type("St16x128bOp", (_StBase,), _shape("16x128b", 16, 128, 64)))
St16x256bOp = dataclass(frozen=True)(type("St16x256bOp", (_StBase,), _shape("16x256b", 16, 256, 32)))
for _op in (Ld32x32bOp, Ld16x32bx2Op, Ld16x64bOp, Ld16x128bOp, Ld16x256bOp, St32x32bOp, St16x32bx2Op, St16x64bOp,
            St16x128bOp, St16x256bOp):
    _op.__module__ = __name__
    _op.__doc__ = (f"tcgen05.{'ld' if _op.__name__.startswith('Ld') else 'st'}.{_op._shape}: a warp "
                   f"{'loads' if _op.__name__.startswith('Ld') else 'stores'} {_op.lanes} TMEM lanes x "
                   f"{32 if _op._shape == '16x32bx2' else _op.bits} bits"
                   f"{' twice' if _op._shape == '16x32bx2' else ''} per repetition.")

_LOADS = (Ld32x32bOp, Ld16x32bx2Op, Ld16x64bOp, Ld16x128bOp, Ld16x256bOp)
_STORES = (St32x32bOp, St16x32bx2Op, St16x64bOp, St16x128bOp, St16x256bOp)


def is_tmem_load(atom) -> bool:
    """Whether a copy atom is a TMEM load (tcgen05.ld)."""
    return isinstance(getattr(atom, "op", None), _LOADS)


def is_tmem_store(atom) -> bool:
    """Whether a copy atom is a TMEM store (tcgen05.st)."""
    return isinstance(getattr(atom, "op", None), _STORES)


def get_tmem_copy_properties(atom):
    """(lanes, bits, repetitions, pack or unpack) of a TMEM load or store atom."""
    if not (is_tmem_load(atom) or is_tmem_store(atom)):
        raise CuteError(f"expects 'atom' to be a TMEM copy, but got {atom}")
    op = atom.op
    bits = 32 if op._shape == "16x32bx2" else op.bits
    return op.lanes, bits, op.repeat.value, op.pack if is_tmem_load(atom) else op.unpack


def _tmem_value_type(tmem_tensor):
    iterator = getattr(tmem_tensor, "iterator", None)
    if not (isinstance(iterator, tuple) and iterator and iterator[0] == "tmem"):
        raise CuteError(f"make_tmem_copy: expects a tensor in tensor memory (from make_fragment_C of a tcgen05 "
                        f"MMA, or a slice of one), got {tmem_tensor}")
    return iterator[1]


def make_tmem_copy(atom, tmem_tensor):
    """The TiledCopy that loads `tmem_tensor` (a TMEM tensor, e.g. one epilogue tile of the accumulator) with
    `atom` over the 128 threads of a warpgroup: warp w reads its sub-partition, lanes 32w .. 32w+31
    (CuTe's make_tmem_copy, through make_cotiled_copy)."""
    if not (is_tmem_load(atom) or is_tmem_store(atom)):
        raise CuteError(f"make_tmem_copy: expects a copy atom of a TMEM load or store (tcgen05.Ld32x32bOp, "
                        f"St32x32bOp, ...), got {getattr(atom, 'op', atom)}")
    value_type = _tmem_value_type(tmem_tensor)
    if value_type.width != atom.value_type.width:
        raise CuteError(f"make_tmem_copy: the atom copies {atom.value_type.width}-bit values ({atom.value_type}) "
                        f"but the tensor holds {value_type.width}-bit {value_type}: make the atom for the "
                        f"accumulator's type")
    from .mma import tmem_dp_stride
    threads = make_layout((32, 4), stride=(0, 32 * tmem_dp_stride(value_type)))
    values = coalesce(recast_layout(value_type.width, 1, atom.op._value_bits()))
    return _make_cotiled_copy(atom, _join(threads, values), tmem_tensor.layout)


def _product_each(shape):
    return tuple(size(s) for s in shape) if is_tuple(shape) else (size(shape),)


def _make_cotiled_copy(atom, atom_tv, data):
    """CuTe's make_cotiled_copy: the tiled copy whose (thread, value) -> data address is `atom_tv`, over the
    data layout `data` (coordinate -> address)."""
    inverse = _join(left_inverse(data), make_layout(1, stride=0))
    tv_data = composition(inverse, atom_tv)                      # (thread, value) -> data coordinate index
    check = coalesce(composition(_join(data, make_layout(1, stride=0)), _mode(tv_data, 1)))
    if check != coalesce(_mode(atom_tv, 1)):
        raise CuteError(f"make_tmem_copy: the TMEM the atom reads is not all in the tensor {data}: each warp "
                        f"reads {size(_mode(atom_tv, 1))} values of its 32 lanes; give a tile of 128 rows (lanes) "
                        f"and a whole number of the atom's columns")
    flat = _product_each(data.shape)
    tiler = []
    for i in range(len(flat)):
        picks = make_layout(flat, stride=tuple(1 if j == i else 0 for j in range(len(flat))))
        tiler.append(_filter(composition(picks, tv_data)))
    tiler = tuple(tiler)
    # tile coordinate -> data coordinate, mode by mode
    reference = make_layout(flat)
    tile2data = _by_mode(composition, reference, tiler) if len(flat) > 1 else composition(reference, tiler[0])
    layout_tv = composition(left_inverse(tile2data), tv_data)
    return make_tiled_copy(atom, layout_tv, tiler)


def find_tmem_tensor_col_offset(tmem_tensor) -> int:
    """The number of 32-bit TMEM columns `tmem_tensor` spans (its cosize in 32-bit units, low 16 bits): the
    column offset at which a second buffer can start."""
    value_type = _tmem_value_type(tmem_tensor)
    return cosize(recast_layout(32, value_type.width, tmem_tensor.layout)) & 0xFFFF


__all__ = ["Repetition", "Pack", "Unpack", "Ld32x32bOp", "Ld16x32bx2Op", "Ld16x64bOp", "Ld16x128bOp",
           "Ld16x256bOp", "St32x32bOp", "St16x32bx2Op", "St16x64bOp", "St16x128bOp", "St16x256bOp", "is_tmem_load",
           "is_tmem_store", "get_tmem_copy_properties", "make_tmem_copy", "find_tmem_tensor_col_offset"]
