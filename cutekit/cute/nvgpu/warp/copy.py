"""ldmatrix: 32 threads load 1, 2 or 4 8x8 matrices of 16-bit elements from shared memory into registers.

The layouts are CuTe's Copy_Traits for SM75_U32x{1,2,4}_LDSM_N and SM75_U16x{2,4,8}_LDSM_T, in bits:
  source (thread, value) -> bit: each of the first 8*num_matrices threads gives the address of one 128-bit row;
  destination (thread, value) -> bit: what lands in each thread's registers, 32 bits (two halves) per matrix;
  reference = destination: the register order is fixed by the hardware, so the source is renumbered to match it.
"""
from dataclasses import dataclass

from ...atom import CopyOp
from ...layout import make_layout
from ...inttuple import CuteError


def _ldmatrix_bit_layouts(num_matrices, transpose):
    rows = 8 * num_matrices  # the threads that supply a row address; the others' addresses are ignored (stride 0)
    if num_matrices == 4:
        source = make_layout((32, 128), stride=(128, 1))
    else:
        source = make_layout(((rows, 32 // rows), 128), stride=((128, 0), 1))
    if not transpose:
        # thread t holds bits [32t, 32t+32) of every matrix; matrices are 1024 bits apart
        if num_matrices == 1:
            destination = make_layout((32, 32), stride=(32, 1))
        else:
            destination = make_layout((32, (32, num_matrices)), stride=(32, (1, 1024)))
    else:
        # transposed: each thread gathers two 16-bit elements from two rows (128 bits apart)
        if num_matrices == 1:
            destination = make_layout(((4, 8), (16, 2)), stride=((256, 16), (1, 128)))
        else:
            destination = make_layout(((4, 8), (16, 2, num_matrices)), stride=((256, 16), (1, 128, 1024)))
    return source, destination


@dataclass(frozen=True)
class _Matrix8x8x16bOp(CopyOp):
    """What ldmatrix and stmatrix share: 1, 2 or 4 8x8 matrices of 16 bits, transposed or not."""

    transpose: bool = False
    num_matrices: int = 1
    _NAME = ""

    def __post_init__(self):
        if not isinstance(self.transpose, bool):
            raise CuteError("expects the 'transpose' Op parameter to be a bool instance")
        if self.num_matrices not in (1, 2, 4):
            raise CuteError("expects the 'num_matrices' Op parameter to be one of [1,2,4]")

    def __str__(self):
        text = "%s Copy Operation\n  number of matrices = %d" % (self._NAME, self.num_matrices)
        return text + ("\n  transposed" if self.transpose else "")


@dataclass(frozen=True)
class LdMatrix8x8x16bOp(_Matrix8x8x16bOp):
    """`ldmatrix.sync.aligned.m8n8.x{num_matrices}[.trans].shared.b16`: a warp loads 8x8 matrices of 16 bits."""

    _NAME = "LdMatrix8x8x16b"

    def _atom_layouts(self, value_type, **unused):
        source, destination = _ldmatrix_bit_layouts(self.num_matrices, self.transpose)
        source = CopyOp.bits_to_values(source, value_type)
        destination = CopyOp.bits_to_values(destination, value_type)
        return make_layout(32, stride=1), source, destination, destination


@dataclass(frozen=True)
class StMatrix8x8x16bOp(_Matrix8x8x16bOp):
    """`stmatrix.sync.aligned.m8n8.x{num_matrices}[.trans].shared.b16` (sm_90): ldmatrix the other way round,
    a warp stores 8x8 matrices of 16 bits from registers to shared memory. The source is ldmatrix's
    destination (the registers, the reference) and the destination ldmatrix's source (one 128-bit row per
    address-giving thread)."""

    _NAME = "StMatrix8x8x16b"

    def _atom_layouts(self, value_type, **unused):
        rows, registers = _ldmatrix_bit_layouts(self.num_matrices, self.transpose)
        source = CopyOp.bits_to_values(registers, value_type)
        destination = CopyOp.bits_to_values(rows, value_type)
        return make_layout(32, stride=1), source, destination, source


@dataclass(frozen=True)
class StMatrix16x8x8bOp(_Matrix8x8x16bOp):
    """`stmatrix.sync.aligned.m16n8.x{num_matrices}.trans.shared.b8` (sm_100): a warp stores 1, 2 or 4
    matrices of 16x8 bytes, transposed (the only form; `transpose=True` is required), as the epilogue of an
    sm_100 GEMM stores 8-bit column-major C. The destination is one 128-bit row per address-giving thread, as
    stmatrix m8n8's; thread t0 + 4 t1 holds byte t1 of four rows: rows 2 t0 and 2 t0 + 1 (64 bits apart)
    of each 8-row half (128 bits apart), matrices 1024 bits apart (CuTe's SM100_U8x{4,8,16}_STSM_T)."""

    transpose: bool = True
    _NAME = "StMatrix16x8x8b"

    def __post_init__(self):
        super().__post_init__()
        if not self.transpose:
            raise CuteError("StMatrix16x8x8bOp only supports transpose (transpose=True)")

    def _atom_layouts(self, value_type, **unused):
        rows, _ = _ldmatrix_bit_layouts(self.num_matrices, False)
        if self.num_matrices == 1:
            registers = make_layout(((4, 8), (8, 2, 2)), stride=((256, 8), (1, 128, 64)))
        else:
            registers = make_layout(((4, 8), (8, 2, 2, self.num_matrices)), stride=((256, 8), (1, 128, 64, 1024)))
        source = CopyOp.bits_to_values(registers, value_type)
        destination = CopyOp.bits_to_values(rows, value_type)
        return make_layout(32, stride=1), source, destination, source
