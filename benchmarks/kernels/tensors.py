"""Turning torch tensors (or fake ones, on a machine without a GPU) into CuTe tensors.

The rule behind every helper here: a 128-bit access is only legal when the compiler can prove that the
tensor's base is 16-byte aligned and that every row starts 16 bytes after the previous one. So the
tensors we hand to `cute.compile` carry a *divisibility* on their contiguous extent, and the vector width
is the largest power of two (at most 128 bits) that the contiguous extent and the base address allow.
"""
from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack, make_fake_compact_tensor

def cutlass_dtype(torch_dtype):
    """The cutlass numeric type for a torch dtype (float16, bfloat16, float32)."""
    import torch
    table = {torch.float16: cutlass.Float16, torch.bfloat16: cutlass.BFloat16, torch.float32: cutlass.Float32}
    if torch_dtype not in table:
        raise TypeError(f"unsupported dtype {torch_dtype}: use one of {sorted(str(d) for d in table)}")
    return table[torch_dtype]


def vector_width(contiguous_extent: int, element_bytes: int, base_address: int = 0, max_bytes: int = 16) -> int:
    """Largest power-of-two element count, at most `max_bytes` wide, that divides the contiguous extent
    and keeps the base address aligned.

    >>> vector_width(8192, 2), vector_width(1000, 2), vector_width(1001, 2), vector_width(12, 4)
    (8, 8, 1, 4)
    """
    width = max_bytes // element_bytes
    while width > 1 and (contiguous_extent % width or base_address % (width * element_bytes)):
        width //= 2
    return width


def from_torch(tensor, divisibility: int, leading_dim: int | None = None):
    """A CuTe view of a torch tensor whose shapes are dynamic (one compiled kernel serves every size) but
    whose contiguous extent is known to be a multiple of `divisibility` elements."""
    if leading_dim is None:
        leading_dim = tensor.dim() - 1
    align = divisibility * tensor.element_size()
    view = from_dlpack(tensor, assumed_align=align).mark_layout_dynamic(leading_dim=leading_dim)
    # the mode order is given, not deduced: with a size-1 mode two strides can be 1 and deduction fails
    # (torch's dim_order: outermost first; the other modes keep their row-major order)
    order = tuple(mode for mode in range(tensor.dim()) if mode != leading_dim) + (leading_dim,)
    return view.mark_compact_shape_dynamic(mode=leading_dim, stride_order=order, divisibility=divisibility)


def fake_tensor(dtype, rank: int, divisibility: int, leading_dim: int | None = None):
    """A shape-only stand-in for `from_torch(...)`, for compiling on a machine without a GPU.

    `leading_dim` is the contiguous mode (the last one for row-major data)."""
    if leading_dim is None:
        leading_dim = rank - 1
    shape = tuple(cute.sym_int(divisibility=divisibility) if mode == leading_dim else cute.sym_int()
                  for mode in range(rank))
    # stride_order gives each mode's rank from the innermost (0): the contiguous mode first, then the
    # other modes from the last to the first, as in a row-major torch tensor
    others = [mode for mode in range(rank) if mode != leading_dim][::-1]
    rank_of = tuple(0 if mode == leading_dim else others.index(mode) + 1 for mode in range(rank))
    return make_fake_compact_tensor(dtype, shape, stride_order=rank_of,
                                    assumed_align=divisibility * dtype.width // 8)


def compile_with_ptx(function, *args):
    """`cute.compile(function, *args)` keeping the PTX in memory (`.__ptx__`); the dumped file goes to a
    temporary folder instead of the working directory."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="cute-ptx-") as folder:
        return cute.compile(function, *args, options=f"--keep-ptx --dump-dir={folder}")
