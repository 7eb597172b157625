# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# Cells the tests run through `tests/chapters/in_cutedsl.py` to show it finds what it must: a composed layout
# sliced by calling it (cutekit gives the sliced layout, CuTeDSL 4.8.1 silently gives 0), a swizzle called as
# a function (CuTeDSL's is not callable), a kernel that allocates shared memory under the old name, and a
# layout built with CuTeDSL's `cute` outside any `@cute.jit` function.

# %%
from cutekit import cute

atom = cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
stages = cute.tile_to_shape(atom, (16, 64, 2), order=(0, 1, 2))
first_stage = stages((None, None, 0))
swizzled = atom.inner(128)
same = cute.coalesce(cute.make_layout((2, (1, 6)), stride=(1, (6, 2))))
inside = cute.elem_less((1, 2), (3, 4))

# %%
import cutekit

cutekit.use("auto")
import torch  # noqa: E402

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402


@cute.kernel
def old_allocator_kernel(mX: cute.Tensor):
    staged = cutlass.utils.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(4), 16)
    tidx, _, _ = cute.arch.thread_idx()
    staged[tidx] = mX[tidx]
    mX[tidx] = staged[3 - tidx]


@cute.jit
def old_allocator(mX: cute.Tensor):
    old_allocator_kernel(mX).launch(grid=[1, 1, 1], block=[4, 1, 1])


@cute.kernel
def new_allocator_kernel(mX: cute.Tensor):
    staged = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(4), 16)
    tidx, _, _ = cute.arch.thread_idx()
    staged[tidx] = mX[tidx]
    mX[tidx] = staged[3 - tidx]


@cute.jit
def new_allocator(mX: cute.Tensor):
    new_allocator_kernel(mX).launch(grid=[1, 1, 1], block=[4, 1, 1])


x = torch.arange(4, dtype=torch.float32)
old_allocator(from_dlpack(x))
new_allocator(from_dlpack(x))
assert x.tolist() == [3, 2, 1, 0]

# %%
row_major = cute.make_layout((4, 8), stride=(8, 1))
