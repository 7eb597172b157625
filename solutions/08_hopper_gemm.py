# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: CuTe by Hand
#     language: python
#     name: cute-by-hand
# ---

# %% [markdown]
# # 08 · Hopper GEMM: TMA, mbarriers and wgmma
#
# **Why.** Chapter 07's tensor-core GEMM is Ampere code: every thread computes addresses and issues its own
# `cp.async` copies, waits, loads fragments with `ldmatrix`, and each warp issues one 16x8x16 `mma.sync` at
# a time. An H100 (sm_90) removes most of that work from the threads with three pieces of hardware, two of
# them new and one extended (and TMA and wgmma each need a shared-memory layout the hardware agrees on):
#
# - **TMA** (the tensor memory accelerator, new on sm_90): one thread asks a copy engine for a whole tile
#   ("box") of a tensor, say 128 x 64 fp16; the engine computes every address, writes shared memory already
#   swizzled, and fills rows past the tensor's edge with zeros. In CUDA C++ that is a `CUtensorMap` built on
#   the host with `cuTensorMapEncodeTiled` and a `cp.async.bulk.tensor` in the kernel.
# - **mbarriers with a transaction count**: an mbarrier is an 8-byte barrier in shared memory that counts
#   arrivals. mbarriers are not new: the PTX `mbarrier` instructions (`init`, `arrive`, `test_wait`) exist
#   since sm_80, where CUDA C++'s `cuda::barrier` is built on them. What sm_90 adds is the **transaction
#   count**: an arrival can announce bytes (`mbarrier.arrive.expect_tx`), a TMA copy reports its bytes to the
#   barrier as they land (`complete_tx`), and the phase completes only when both are in, so a thread that
#   waits on it (`mbarrier.try_wait`, also sm_90) knows the whole tile is there.
# - **wgmma** (warpgroup MMA, new on sm_90): the 4 warps of a warpgroup (128 threads) issue one 64 x N x 16
#   multiply (N up to 256) whose B (and here A too) the tensor cores read straight from shared memory,
#   asynchronously. wgmma exists on **sm_90a only**, the `a` meaning "this architecture's own features": PTX
#   compiled for it runs on an H100 or H200 and on no later GPU (Blackwell's tensor cores take `tcgen05`
#   instructions instead).
#
# This chapter reads `benchmarks/kernels/hopper_gemm.py`, a complete Hopper GEMM written with CuTeDSL
# (measured on an H100 at 0.98-1.02 of NVIDIA's CuTeDSL Hopper example and 0.98-1.01 of torch.matmul,
# section 4),
# one step at a time: the shared-memory layout atoms that TMA and wgmma both read, the TMA copy and its
# box, mbarriers with their transaction counts and phases, the producer/consumer pipeline of stages, the
# warpgroup MMA and its accumulator layout, and the epilogue. All of it works on a CPU: cutekit's simulator
# runs the kernel itself (section 4), and an H100 or H200 runs it at full speed.
#
# Terms used below: a **CTA** is a thread block; a **stage** is one buffer of the ring of shared-memory
# buffers that the loads fill and the MMAs drain; a **k-tile** is the K-slice (here 64) one stage holds;
# **K-major** means K is the contiguous mode of a tile (a row-major A of shape (M, K)), **MN-major** that M
# (or N for B) is.

# %%
import os
import pathlib
import sys

from cutekit import cute, render, widgets
from cutekit.checks import check
from cutekit.cute import not_in_cutedsl
from cutekit.cute.nvgpu import warpgroup
from cutekit.source import kernel_lines

# the notebook runs in course/ (or solutions/); the kernel lives in the repository's benchmarks/ package,
# and section 4 compiles it in a subprocess, which needs the same path
repository = str(pathlib.Path.cwd().parent)
sys.path.insert(0, repository)
os.environ["PYTHONPATH"] = os.pathsep.join([repository] + [p for p in [os.environ.get("PYTHONPATH")] if p])

# %% [markdown]
# ## 1 · See it: the 128-byte swizzled atom
#
# TMA writes a tile into shared memory in a fixed pattern, and wgmma reads it through a descriptor that
# names the same pattern. CuTeDSL describes each pattern as a **layout atom**:
# `cute.nvgpu.warpgroup.make_smem_layout_atom(kind, dtype)`, the kind one of `warpgroup.SmemLayoutAtomKind`:
# `SmemLayoutAtomKind.K_SW128` is K-major with the 128-byte swizzle (`K_SW64`, `K_SW32`, `K_INTER` for
# none, and the `MN_` kinds for MN-major). The kernel uses the 128-byte one for fp16; the atom is a composed
# layout, whose two parts are its `.inner` and `.outer`:

# %%
atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
print(atom)
print("inner:", atom.inner, "  outer:", atom.outer)
assert str(atom) == "S<3,4,3> o 0 o (8,64):(64,1)"

# %% [markdown]
# It is a **composed layout**, `inner o offset o outer`. The outer layout `(8,64):(64,1)` is 8 rows of 64
# fp16, K contiguous: 8 rows of 128 bytes. The inner `S<3,4,3>` is a swizzle (chapter 07, section 4), but
# here it acts on **byte** addresses: CuTeDSL gives it to the shared-memory pointer, and bits 0-3 of a byte
# address (`M = 4`) are the byte within a 16-byte chunk. It XORs bits 7-9 (the 128-byte row, mod 8) into
# bits 4-6 (the chunk within the row). Chapter 07's `S<3,3,3>` on fp16 *element* offsets is the
# same permutation, one bit lower. The hardware calls this pattern `SWIZZLE_128B`.
#
# Where does each 16-byte chunk land? Chunk `c` of row `r` starts at element `(r, 8c)`: its byte address
# is `2 * outer((r, 8c))`, swizzled by `inner`, then divided by 16. The same permutation written on chunk
# numbers is `S<3,0,3> o (8,8):(8,1)`, which cutekit can draw: each cell is the 16-byte slot (row * 8 +
# chunk) where chunk `c` of row `r` lands. (The check below applies the swizzle with cutekit's
# `not_in_cutedsl.swizzled(swizzle, offset)`: CuTeDSL's swizzle object cannot be called from Python.)

# %%
chunks = cute.make_composed_layout(cute.make_swizzle(3, 0, 3), 0, cute.make_layout((8, 8), stride=(8, 1)))
for r in range(8):
    for c in range(8):
        assert not_in_cutedsl.swizzled(atom.inner, 2 * atom.outer((r, 8 * c))) // 16 == chunks((r, c))
print("row 1:", [chunks((1, c)) for c in range(8)])
print("row 5:", [chunks((5, c)) for c in range(8)])
assert [chunks((1, c)) - 8 for c in range(8)] == [1, 0, 3, 2, 5, 4, 7, 6]
render.layout(chunks, title="K_SW128, fp16: where chunk c (column) of row r (row) lands, in 16-byte slots")

# %% [markdown]
# Row 0 keeps its chunks in place; row `r` swaps them by XOR with `r`: chunk 0 of row 1 lands in slot 1 of
# its row, chunk 0 of row 5 in slot 5. Read one column of the picture: the 8 rows' chunk 0 sit in 8
# different slots, so 8 threads reading "chunk 0 of rows 0-7" reach 8 different groups of 4 banks, not the
# same 4 banks 8 times.
#
# **The same atoms in CuTeDSL.** The cell below asks CuTeDSL itself (traced on the CPU, no GPU needed) for
# the fp16 atoms of 32, 64 and 128 bytes, K-major and MN-major, and compares them with cutekit's.

# %%
KINDS = ["K_SW32", "K_SW64", "K_SW128", "MN_SW32", "MN_SW64", "MN_SW128"]
ours = {kind: str(warpgroup.make_smem_layout_atom(getattr(warpgroup.SmemLayoutAtomKind, kind), cute.Float16))
        for kind in KINDS}
try:
    import cutlass  # the real CuTeDSL, where it is installed
    import cutlass.cute as dsl_cute
    from cutlass.cute.nvgpu import warpgroup as dsl_warpgroup
    ran_cutedsl = not getattr(cutlass, "__cutekit_sim__", False)
except ImportError:
    ran_cutedsl = False

if ran_cutedsl:
    printed = {}

    @dsl_cute.jit
    def atoms_in_cutedsl():
        for kind in KINDS:
            printed[kind] = str(dsl_warpgroup.make_smem_layout_atom(getattr(dsl_warpgroup.SmemLayoutAtomKind, kind),
                                                                     cutlass.Float16))

    atoms_in_cutedsl()
    assert printed == ours
    print("CuTeDSL prints (and cutekit prints the same):")
else:
    print("CuTeDSL is not installed here: cutekit's reference prints the atoms (the course's tests compare them with CuTeDSL 4.8.1's):")
for kind in KINDS:
    print(f"  {kind:9} {ours[kind]}")
assert ours["K_SW64"] == "S<2,4,3> o 0 o (8,32):(32,1)" and ours["K_SW32"] == "S<1,4,3> o 0 o (8,16):(16,1)"
assert ours["MN_SW128"] == "S<3,4,3> o 0 o (64,8):(1,64)"
fp32_atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float32)
print("K_SW128 for Float32:", fp32_atom)
assert str(fp32_atom) == "S<3,4,3> o 0 o (8,32):(32,1)"

# %% [markdown]
# Every atom is 8 rows of 16-byte chunks; the swizzle's `B` (3, 2, 1) is how many chunk bits it permutes:
# rows of 128 bytes (8 chunks), 64 bytes (4) or 32 bytes (2), always XORed from bit 7 up (`S = 3`). An
# MN-major atom is the transpose: 8 columns (K) of 64, 32 or 16 contiguous fp16 along M or N. The shape in
# elements depends on the type (the fp32 128-byte atom is `(8,32):(32,1)`), the swizzle does not.
#
# ## 2 · Play: how many chunk bits must move?
#
# The explorer draws a request that reads one 16-byte chunk column from each of the 8 rows of the 128-byte
# fp16 atom (each row of the picture is one request, as `ldmatrix` reads in chapter 07), coloured by bank,
# with a swizzle written on element offsets (`S<B,3,3>` for fp16 is the atom's byte `S<B,4,3>`). **Predict
# first:** with `B = 0` (no swizzle) all 8 rows of a request hit the same 4 banks; how many conflicts do
# `B = 1` and `B = 2` leave? Move `B` and look.

# %%
reads_128 = cute.make_layout((8, (8, 8)), stride=(8, (1, 64)))     # request c: chunk c of rows 0-7
widgets.swizzle_explorer(reads_128, element_bits=16, bits=0, base=3, shift=3)

# %%
conflicts = {bits: render.bank_conflicts(cute.make_composed_layout(cute.make_swizzle(bits, 3, 3), 0, reads_128),
                                         element_bits=16) for bits in (1, 2, 3)}
conflicts[0] = render.bank_conflicts(reads_128, element_bits=16)
print("128-byte rows, conflicts for B = 0, 1, 2, 3:", [conflicts[b] for b in range(4)])
reads_64 = cute.make_layout((4, (8, 8)), stride=(8, (1, 32)))      # 64-byte rows: 4 chunks
print("64-byte rows, no swizzle / S<2,3,3>:", render.bank_conflicts(reads_64, element_bits=16), "/",
      render.bank_conflicts(cute.make_composed_layout(cute.make_swizzle(2, 3, 3), 0, reads_64), element_bits=16))
assert [conflicts[b] for b in range(4)] == [56, 24, 8, 0]
assert render.bank_conflicts(reads_64, element_bits=16) == 12
assert render.bank_conflicts(cute.make_composed_layout(cute.make_swizzle(2, 3, 3), 0, reads_64), element_bits=16) == 0

# %% [markdown]
# Each bit halves the passes a request takes: 8, 4, 2, then 1 (7, 3, 1, 0 conflicts per request, times 8
# requests: 56, 24, 8, 0). A 128-byte row has 8 chunks and needs all 3 bits; a 64-byte
# row has 4 chunks, and two rows share a 128-byte line, so its atom (`S<2,4,3>`) needs 2 bits and has 0
# conflicts. That is why the atom follows the **contiguous extent in bytes**.
#
# ## 3 · Build it up: the kernel's shared-memory layouts
#
# ### 3.1 · Choosing the atom
#
# CuTeDSL's Hopper helpers (`cutlass.utils.hopper_helpers.get_smem_layout_atom`) pick the atom from the
# tile's contiguous extent in bits: the 128-byte swizzle when 1024 bits divide it, else 64 bytes, else 32,
# else no swizzle (`INTER`). cutekit's check for exercise 1 uses the same rule
# (`cutekit.checks.ch08_hopper.swizzle_kind_for`, tested against CuTeDSL's). Three fp16 and fp32 K extents:

# %%
from cutekit.checks.ch08_hopper import swizzle_kind_for

for k, dtype in ((64, cute.Float16), (32, cute.Float16), (32, cute.Float32)):
    print(f"K = {k} {dtype}: {k * dtype.width // 8} bytes -> {swizzle_kind_for(k * dtype.width // 8)}")
assert [swizzle_kind_for(n) for n in (128, 64, 96, 48)] == ["SW128", "SW64", "SW32", "INTER"]

# %% [markdown]
# ### 3.2 · Tiling the atom to the stages
#
# The kernel's tile is BM x BN x BK = 128 x 256 x 64, fp16, K-major A (M, K) and B (N, K): 64 fp16 = 128
# bytes of K, so the 128-byte atom. `cute.tile_to_shape(atom, shape, order)` repeats the atom over a
# shape; `order` says which mode it repeats along first. The kernel's host code:

# %%
print(kernel_lines("benchmarks.kernels.hopper_gemm", "atom = warpgroup.make_smem_layout_atom", "# TMA atoms"))

# %%
BM, BN, BK, STAGES = 128, 256, 64, 4
sA_layout = cute.tile_to_shape(atom, (BM, BK, STAGES), order=(0, 1, 2))
sB_layout = cute.tile_to_shape(atom, (BN, BK, STAGES), order=(0, 1, 2))
print("sA:", sA_layout)
print("sB:", sB_layout)
assert str(sA_layout) == "S<3,4,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))"
assert str(sB_layout) == "S<3,4,3> o 0 o ((8,32),(64,1),(1,4)):((64,512),(1,0),(0,16384))"
assert cute.cosize(sA_layout.outer) * 2 == 64 * 1024 and cute.cosize(sB_layout.outer) * 2 == 128 * 1024
print("sA's modes:", [str(cute.get(sA_layout.outer, mode=[i])) for i in range(3)])
assert [str(cute.get(sA_layout.outer, mode=[i])) for i in range(3)] == ["(8,16):(64,512)", "(64,1):(1,0)", "(1,4):(0,8192)"]

# %% [markdown]
# Read sA's outer layout mode by mode: M is `(8,16):(64,512)`, 8 rows 64 elements apart (one atom), then 16
# atoms 512 elements (1 KiB) apart; K is `(64,1):(1,0)`, the atom's 64 contiguous fp16; the stage mode is
# `(1,4):(0,8192)`, 4 stages of 16 KiB. sB is the same with 32 atoms down N: 32 KiB a stage. A stage of A and
# B is 48 KiB, four stages 192 KiB.
#
# Why 4 stages? One sm_90 block may use 227 KiB of shared memory, and the kernel also keeps two 8-byte
# mbarriers per stage there (section 3.4). Its own check, `check_settings`:

# %%
print(kernel_lines("benchmarks.kernels.hopper_gemm", "def check_settings", "if CLUSTER_M not in (1, 2)"))

# %%
for stages in (4, 5):
    used = (BM + BN) * BK * 2 * stages + 2 * stages * 8
    print(f"{stages} stages: {used} bytes of {227 * 1024}", "fits" if used <= 227 * 1024 else "does not fit")
assert (BM + BN) * BK * 2 * 4 + 64 == 196672 <= 227 * 1024 < (BM + BN) * BK * 2 * 5 + 80 == 245840

# %% [markdown]
# C's tile costs nothing extra: the epilogue reuses A's stages once the MMAs are done (section 3.8).
#
# An MN-major tile uses the MN atoms (`SmemLayoutAtomKind.MN_SW128`), tiled along K first
# (`order=(1, 0, 2)`, as `make_smem_layout_a` does):

# %%
mn_atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.MN_SW128, cute.Float16)
sA_mn = cute.tile_to_shape(mn_atom, (BM, BK, STAGES), order=(1, 0, 2))
print("MN-major sA:", sA_mn)
assert str(sA_mn) == "S<3,4,3> o 0 o ((64,2),(8,8),(1,4)):((1,4096),(64,512),(0,8192))"

# %% [markdown]
# One trap: `tile_to_shape` does not refuse a shape the atom does not divide, in CuTeDSL 4.8.1 or in
# cutekit. A 192-row MN-major tile of 8-bit values (`cute.Int8`) with the 128-byte atom (128 rows) becomes 2
# atoms, 256 rows: the layout is larger than the tile. Choose the atom from the extent, and this cannot happen.

# %%
too_big = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.MN_SW128, cute.Int8),
                             (192, 256, 3), order=(1, 0, 2))
print(too_big, " size", cute.size(too_big.outer), "for a", 192 * 256 * 3, "element tile")
assert str(too_big) == "S<3,4,3> o 0 o ((128,2),(8,32),(1,3)):((1,32768),(128,1024),(0,65536))"

# %% [markdown]
# ### 3.3 · TMA: a tile in one instruction
#
# On the host the kernel builds one TMA atom per tensor with `cpasync.make_tiled_tma_atom(op, tensor,
# smem_layout, box)`: `op` says which way it copies (`CopyBulkTensorTileG2SOp()` global to shared memory,
# `CopyBulkTensorTileS2GOp()` back, `CopyBulkTensorTileG2SMulticastOp()` one box into every CTA of a
# cluster, section 4), `smem_layout` is the layout of *one* stage, and the box is what one
# copy moves: `(BM, BK)` of A, `(BN, BK)` of B. The call also returns a coordinate tensor of A's shape whose
# entries are the coordinates the copy engine is asked for. One stage of the staged layout is
# `cute.slice_(layout, (None, None, 0))`: `cute.slice_(x, coord)` keeps the modes of a layout or tensor where
# `coord` is None and fixes the others, here stage 0 (a composed layout keeps its swizzle).

# %%
print(kernel_lines("benchmarks.kernels.hopper_gemm", "# TMA atoms: one descriptor", "# one 64 x BN x 16 wgmma"))

# %% [markdown]
# cutekit builds the same atoms as CuTeDSL (tests/cute/test_tma_atoms.py compares 48 of them, loads, stores
# and multicast, with CuTeDSL 4.8.1 traced for sm_90a). A's, for a 1000 x 512 row-major A: the atom moves one
# box of 128 x 64 = 8192 elements, `(1,8192):(0,1)` (one thread, the whole box); the coordinate tensor is
# A's shape with *basis* strides: `1@1` moves TMA dimension 1 (rows), `1@0` dimension 0 (K, the contiguous
# one). `cpasync.tma_partition(atom, cta, cta_layout, smem, coords)` lines the stages up with the tiles. Its
# arguments: the atom; this CTA's index among the CTAs that share a multicast copy (`0`) and their layout
# (`cute.make_layout(1)`: no multicast, one CTA); the shared-memory tensor and the coordinate tensor, each
# with the box as its mode 0, which `cute.group_modes(t, 0, 2)` makes by merging modes 0 and 1 (rows and K)
# into one. It returns the two views: mode 0 is the box (its offsets 0, 1, 2, ... in shared memory, the
# swizzle living on the pointer), mode 1 the stage or the k-tile. The cell stands the tensors up on the CPU
# with cutekit's `not_in_cutedsl.tensor_over(array, layout)`, a layout over a NumPy array: in CuTeDSL the
# tensors are the kernel's (`from_dlpack` of the data on the host, `allocate_tensor` in shared memory), and
# `cute.make_tensor` takes a pointer, not an array.

# %%
import numpy

from cutekit.cute.nvgpu import cpasync

A_host = not_in_cutedsl.tensor_over(numpy.zeros(1000 * 512, numpy.float16), cute.make_layout((1000, 512), stride=(512, 1)))
atom_sw128 = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
sA_stages = cute.tile_to_shape(atom_sw128, (BM, BK, STAGES), order=(0, 1, 2))
tma_a, mA_coords = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A_host,
                                               cute.slice_(sA_stages, (None, None, 0)), (BM, BK))
print(tma_a)
print("coordinates:", mA_coords)
gA_tiles = cute.local_tile(mA_coords, (BM, BK), (1, None))          # tile-row 1, every k-tile
sA_smem = not_in_cutedsl.tensor_over(numpy.zeros(cute.cosize(sA_stages.outer), numpy.float16), sA_stages.outer)
tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1), cute.group_modes(sA_smem, 0, 2),
                                   cute.group_modes(gA_tiles, 0, 2))
print("tAsA:", tAsA.layout, "  tAgA:", tAgA)
print("k-tile 2 asks for the box at", tAgA[None, 2])
print("one stage:", cute.slice_(sA_stages, (None, None, 0)))
assert str(cute.slice_(sA_stages, (None, None, 0))) == "S<3,4,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))"
assert str(tma_a.layout_src_tv) == "(1,8192):(0,1)" and str(mA_coords) == "tensor<(0,0) o (1000,512):(1@1,1@0)>"
assert str(tAsA.layout) == "((8192,1),(1,4)):((1,0),(0,8192))"
assert str(tAgA) == "tensor<(0,128) o (((64,128),1),8):(((1@0,1@1),0),64@0)>"
assert str(tAgA[None, 2]) == "tensor<(128,128) o (((64,128),1)):(((1@0,1@1),0))>"

# %% [markdown]
# k-tile 2 of tile-row 1 starts at TMA coordinate (128, 128): K = 128, row 128. In the kernel, the producer
# warp calls `cute.copy` with the TMA atom and CuTeDSL elects one lane of the warp to issue each load (the
# PTX in section 4 has an `elect.sync` before every `cp.async.bulk.tensor` load); one lane also tells the
# stage's barrier how many bytes to expect: 128 x 64 fp16 of A (16 KiB) and 256 x 64 of B (32 KiB), 49152
# bytes a stage.
#
# **Multicast across a cluster.** With `CLUSTER_M = 2` the kernel launches *clusters* of 2 CTAs that
# compute neighbouring 128-row strips of C in the same 256-column strip: they need the same B tile. Each CTA
# loads half of it (`tma_partition(tma_b, rank, make_layout(CLUSTER_M), ...)` gives CTA `rank` the rows
# `rank * BN / 2` onwards) with `CopyBulkTensorTileG2SMulticastOp`, and the copy engine writes each half
# into *both* CTAs' shared memory. Each CTA's full barrier still expects all 49152 bytes: its own half of B,
# the other CTA's half, and its A. Compiled with `CLUSTER_M=2` (`hopper_gemm.compile_for_cpu(CLUSTER_M=2)`),
# the PTX holds `multicast::cluster` loads. The simulator runs clusters of one CTA only, and refuses a
# multicast copy by name.

# %%
tile_bytes = {"A": BM * BK * 2, "B": BN * BK * 2}
print("bytes per stage:", tile_bytes, "=", sum(tile_bytes.values()))
B_host = not_in_cutedsl.tensor_over(numpy.zeros(776 * 512, numpy.float16), cute.make_layout((776, 512), stride=(512, 1)))
sB_stages = cute.tile_to_shape(atom_sw128, (BN, BK, STAGES), order=(0, 1, 2))
tma_b, mB_coords = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), B_host,
                                               cute.slice_(sB_stages, (None, None, 0)), (BN, BK), num_multicast=2)
gB_tiles = cute.local_tile(mB_coords, (BN, BK), (0, None))
sB_smem = not_in_cutedsl.tensor_over(numpy.zeros(cute.cosize(sB_stages.outer), numpy.float16), sB_stages.outer)
shares = [cpasync.tma_partition(tma_b, rank, cute.make_layout(2), cute.group_modes(sB_smem, 0, 2),
                                cute.group_modes(gB_tiles, 0, 2))[1] for rank in range(2)]
for rank, share in enumerate(shares):
    print(f"CTA {rank} of the pair starts B's k-tile 0 at", share[None, 0].iterator)
assert sum(tile_bytes.values()) == 49152
assert [share[None, 0].iterator for share in shares] == [(0, 0), (0, 128)]

# %% [markdown]
# One trap: calling the staged layout with None, `sA_stages((None, None, 0))`, looks like the same slice,
# but CuTeDSL 4.8.1 reads each None as 0 there and returns an offset, an int, not a layout (the cell asks
# CuTeDSL where it is installed). cutekit refuses the call with that reason (a `ValueError`), since an offset
# where a layout was meant is a mistake:

# %%
if ran_cutedsl:
    offsets = []

    @dsl_cute.jit
    def called_with_none():
        dsl_atom = dsl_warpgroup.make_smem_layout_atom(dsl_warpgroup.SmemLayoutAtomKind.K_SW128, cutlass.Float16)
        staged = dsl_cute.tile_to_shape(dsl_atom, (128, 64, 4), order=(0, 1, 2))
        offsets.extend([staged((None, None, 0)), staged((None, None, 1))])

    called_with_none()
    print("CuTeDSL: sA_stages((None, None, 0)) =", offsets[0], "  sA_stages((None, None, 1)) =", offsets[1])
    assert offsets == [0, 8192]
try:
    sA_stages((None, None, 0))
except ValueError as refused:
    print("cutekit:", refused)
else:
    raise AssertionError("cutekit sliced a composed layout called with None")

# %% [markdown]
# ### 3.4 · mbarriers: arrivals, bytes and phases
#
# An mbarrier is made with an arrival count. A **phase** completes when that many threads have arrived
# *and* every byte announced with `mbarrier_arrive_and_expect_tx(bar, bytes)` has landed (a TMA copy
# "completes transactions" on the barrier as its bytes arrive). Then the phase number goes up by one and
# the counts start over. A thread waits with one bit, `mbarrier_wait(bar, parity)`, which returns once the
# phase of that parity has completed: at once while the current phase's parity differs from `parity`.
#
# `cutekit.sim.mbarriers` models exactly that in plain Python, one step at a time (the simulator keeps the
# same counts for the kernel's barriers, section 4). One
# stage's full barrier, counting one arrival (the producer's):

# %%
from cutekit.sim import mbarriers

full = mbarriers.MBarrier("full[0]", 1)
print("fresh: phase", full.phase, " wait(parity 0) returns:", full.passes(0), " wait(parity 1) returns:", full.passes(1))
full.arrive(expect_tx=49152)            # the producer: arrive_and_expect_tx
print("arrived, 49152 bytes expected: phase", full.phase, " bytes still to land:", full.tx)
full.complete_tx(16384)                 # A's box lands
full.complete_tx(32768)                 # B's box lands
print("both boxes landed: phase", full.phase, " wait(parity 0) returns:", full.passes(0))
assert (full.phase, full.passes(0), full.passes(1)) == (1, True, False)

# %% [markdown]
# A fresh barrier is in phase 0: waiting for parity 0 waits for the first completion, and waiting for
# parity 1 returns at once ("the phase before the first" counts as complete). The kernel uses both.
#
# ### 3.5 · The pipeline: a ring of stages, two barriers each
#
# Each stage `s` has `full[s]` (the producer filled it; 1 arrival + the bytes) and `empty[s]` (the
# consumers are done with it; one arrival per consumer warp). The producer warp, for every k-tile: wait
# until the stage is empty, announce the bytes, issue the two TMA copies. Both sides walk the ring with a
# stage index and a phase bit that flips each time the index wraps to 0. The producer starts with phase 1,
# so its waits on the fresh `empty` barriers in its first pass return at once; the consumers start with
# phase 0.

# In the kernel the barriers are one array of `2 * STAGES` Int64 in shared memory: `barriers + s` is
# `full[s]` and `barriers + STAGES + s` is `empty[s]` (the loops below get `full = barriers` and `empty =
# barriers + STAGES`, and use `full + s`, `empty + s`). `cutlass.memory.SmemAllocator()` hands out the
# block's shared memory in order: `allocate_array(dtype, n)` is n values of `dtype` (here the barriers, as a
# pointer), and `allocate_tensor(dtype, layout, alignment, swizzle=...)` a tensor with that layout whose
# pointer carries the swizzle (sA and sB). `cute.arch.mbarrier_init(bar, count)` sets a barrier's arrival
# count, `cute.arch.mbarrier_init_fence()` makes the initialised barriers visible to the copy engine, and
# `cute.arch.sync_threads()` is CUDA's `__syncthreads()`. Warp 0 makes them, one lane of it doing the work
# (`with cute.arch.elect_one():` runs its block in one lane of the warp), before every thread meets at the
# block barrier. The barriers are `cutlass.Int64` words (8 bytes each); C's tile reuses A's stages through
# `cute.recast_ptr(pointer, swizzle, dtype=...)`, the same address with another swizzle and element type;
# and with `CLUSTER_M = 2`, `cute.arch.cluster_arrive_relaxed()` then `cute.arch.cluster_wait()` are the
# barrier over the cluster's CTAs that replaces `sync_threads()`:

# %%
print(kernel_lines("benchmarks.kernels.hopper_gemm", "barriers = smem.allocate_array", "cute.arch.sync_threads()",
                   through=True))

# %% [markdown]
# **Warp specialization.** The kernel's 384 threads split by role instead of all doing the same work:
# warpgroup 0 (warps 0-3) is the producer, of which warp 0 alone issues the copies, and warpgroups 1 and 2
# are the consumers. `cute.arch.warp_idx()` is the thread's warp, and `cute.arch.make_warp_uniform(x)` tells
# the compiler that x is the same in every lane of a warp, so a branch on the role is taken once per warp.
# `cute.arch.setmaxregister_decrease(40)` and `setmaxregister_increase(232)` (PTX `setmaxnreg`, sm_90a)
# move registers between warpgroups at run time: each producer thread keeps 40, each consumer thread gets
# 232, room for its 128 fp32 accumulators. The producer warp hands its loop the TMA views (`tAgA[None,
# k_tile]` is k-tile `k_tile` of A as TMA coordinates, `tAsA[None, stage]` is stage `stage` of sA) and the
# bytes one stage receives. With multicast, the copy of B also takes `mcast_mask=cutlass.Int16(...)`, a
# 16-bit integer whose bit r sends the box to CTA r of the cluster:

# %%
print(kernel_lines("benchmarks.kernels.hopper_gemm", "    if role == 0:", "produce(tma_a", through=True))
print(kernel_lines("benchmarks.kernels.hopper_gemm", "def produce(", "phase = phase ^ 1", through=True))
assert (BM + BN) * BK * 2 == 49152

# %% [markdown]
# The model below has one step for each call the loop makes: `wait(barrier, s, phase)` is
# `cute.arch.mbarrier_wait(bar, phase)`, `arrive_expect_tx("full", s, nbytes)` is
# `cute.arch.mbarrier_arrive_and_expect_tx(bar, nbytes)` (one arrival from one lane, so the kernel puts it
# inside `with cute.arch.elect_one():`), `tma_load(s, k)` is the two `cute.copy(tma_x, tXgX[None, k],
# tXsX[None, s], tma_bar_ptr=full[s])` calls, and `arrive("empty", s)` is `cute.arch.mbarrier_arrive(bar)`.
# Exercise 4 writes a producer's loop in the kernel.
#
# The protocol as steps of the model, written out by hand for 3 k-tiles on 2 stages, with a consumer
# that multiplies synchronously (`mma`) and releases each stage at once. `run_pipeline` runs the steps
# under two schedules (the producer as far ahead as it can go, and the consumer first), lets every TMA copy
# land as late as possible, and names the first mistake it meets:

# %%
from cutekit.sim.mbarriers import arrive, arrive_expect_tx, commit_group, fence, mma, tma_load, wait, wait_group, wgmma

producer = [wait("empty", 0, 1), arrive_expect_tx("full", 0, 49152), tma_load(0, 0),
            wait("empty", 1, 1), arrive_expect_tx("full", 1, 49152), tma_load(1, 1),
            wait("empty", 0, 0), arrive_expect_tx("full", 0, 49152), tma_load(0, 2)]
consumer = [wait("full", 0, 0), mma(0, 0), arrive("empty", 0),
            wait("full", 1, 0), mma(1, 1), arrive("empty", 1),
            wait("full", 0, 1), mma(0, 2), arrive("empty", 0)]
print(mbarriers.run_pipeline(producer, [consumer], k_tiles=3, stages=2, bytes_per_stage=49152))
wrong_parity = [wait("full", 0, 1)] + consumer[1:]
print(mbarriers.run_pipeline(producer, [wrong_parity], k_tiles=3, stages=2, bytes_per_stage=49152))
no_wait = [step for step in producer if step[0] != "wait"]
print(mbarriers.run_pipeline(no_wait, [consumer], k_tiles=3, stages=2, bytes_per_stage=49152))
assert mbarriers.run_pipeline(producer, [consumer], 3, 2, 49152).ok
assert mbarriers.run_pipeline(producer, [wrong_parity], 3, 2, 49152).mistake == "wrong phase"
assert mbarriers.run_pipeline(no_wait, [consumer], 3, 2, 49152).mistake == "stage reused"

# %% [markdown]
# On a GPU the second mistake computes with a stage that is not there yet, and the third overwrites a stage
# the consumer has not read: wrong numbers, no error. The model says which wait and which stage.
#
# ### 3.6 · The warpgroup MMA
#
# `warpgroup.MmaF16BF16Op(ab, acc, (64, N, 16), a_src, a_major, b_major)` is `wgmma.mma_async` on 128
# threads: M is always 64, N a multiple of 8 up to 256, K 16 for 16-bit types; `a_src` says where A is read
# from (`warpgroup.OperandSource.SMEM`, shared memory) and the two majors which mode of A and of B is
# contiguous (`cute.nvgpu.OperandMajorMode.K` here). All six arguments are required: CuTeDSL 4.8.1 refuses
# the op without the last three (`TypeError: ... missing 3 required positional arguments`), and so does
# cutekit. `cute.make_mma_atom(op)` makes the op an atom, and `cute.make_tiled_mma(atom, (wm, wn, 1))`
# (chapter 07) lays atoms side by side, here over warpgroups. The atom as a TiledMMA, with N = 16 to keep it small:

# %%
wgmma_op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 16, 16), warpgroup.OperandSource.SMEM,
                                  cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K)
one_warpgroup = cute.make_tiled_mma(cute.make_mma_atom(wgmma_op))
print(one_warpgroup)
try:
    warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 16, 16))
except TypeError as refused:
    print("with three arguments:", refused)
else:
    raise AssertionError("cutekit built a warpgroup MMA without its A source and majors")
assert str(one_warpgroup.tv_layout_A) == "(128,(64,16)):(0,(1,64))"
assert str(one_warpgroup.tv_layout_C) == "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"

# %% [markdown]
# **A and B have stride 0 in the thread mode**: `(128,(64,16)):(0,(1,64))` says all 128 threads "hold" all
# of A. No thread holds A in registers; the tensor cores read it from shared memory through a 64-bit
# *matrix descriptor* (address, swizzle mode, strides), which is what `make_fragment_A` makes for an SMEM
# operand. That is why the shared-memory layout must be one of the atoms above: the descriptor can only
# describe those.
#
# **C lives in registers**, `((4,8,4),(2,2,2)):((128,1,16),(64,8,512))` over the 64 x 16 tile
# (column-major, offset = m + 64 n): thread t = t0 + 4 t1 + 32 w (lane t0 + 4 t1 of warp w) sits at row
# t1 + 16 w, column 2 t0; its values step to the next column (64), 8 rows down (8), 8 columns on (512).
# Each warp holds 16 rows, laid out as chapter 07's m16n8 accumulator, repeated every 8 columns. Thread 37
# (warp 1, t1 = 1, t0 = 1):

# %%
C_tile = cute.make_identity_tensor((64, 16))
mine = one_warpgroup.get_slice(37).partition_C(C_tile)
print("thread 37:", [mine[v] for v in range(8)])
assert [mine[v] for v in range(8)] == [(17, 2), (17, 3), (25, 2), (25, 3), (17, 10), (17, 11), (25, 10), (25, 11)]

# %% [markdown]
# The picture draws the tile on its side (64 rows do not fit a screen at a readable size): composed with the
# transpose `(m, n) -> n + 16 m`, the same TV layout puts N down and M across, so row n, column m. The four
# warps are the four blocks of 16 columns; thread 37 sits in columns 17 and 25 (M), rows 2, 3, 10, 11 (N).

# %%
transpose = cute.make_layout((64, 16), stride=(16, 1))
tv_n_by_m = cute.composition(transpose, one_warpgroup.tv_layout_C)
print(tv_n_by_m)
assert str(tv_n_by_m) == "((4,8,4),(2,2,2)):((2,16,256),(1,128,8))"
render.tv_layout(tv_n_by_m, (16, 64), highlight=37)

# %% [markdown]
# The kernel's TiledMMA is the 64 x 256 x 16 atom on 2 consumer warpgroups stacked along M: a 128 x 256
# tile, and 64 x 256 / 128 = 128 fp32 accumulators per thread. `get_slice` takes a thread index; the kernel
# slices A and B by its warpgroup's first thread, `(role - 1) * 128`, since for the operands what a wgmma's
# slice decides is which warpgroup, that is which 64 rows (every thread of a warpgroup gets the same
# descriptors). Which elements of C a thread holds depends on the thread itself: `partition_C` of thread
# 130's slice gives thread 130's own rows and columns, which is what pairs an accumulator with its column:

# %%
kernel_mma = cute.make_tiled_mma(cute.make_mma_atom(
    warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, BN, 16), warpgroup.OperandSource.SMEM,
                           cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K)), (2, 1, 1))
print("thr_layout_vmnk:", kernel_mma.thr_layout_vmnk, " tile:", [kernel_mma.get_tile_size(i) for i in range(3)])
print("thread 130:", kernel_mma.get_slice(130).partition_C(cute.make_identity_tensor((BM, BN))))
print("thread 128:", kernel_mma.get_slice(128).partition_C(cute.make_identity_tensor((BM, BN))))
assert str(kernel_mma.get_slice(128).partition_C(cute.make_identity_tensor((BM, BN)))).startswith("tensor<(64,0) o")
assert str(kernel_mma.thr_layout_vmnk) == "(128,2,1,1):(1,128,0,0)"
assert cute.size(kernel_mma.get_slice(0).partition_C(cute.make_identity_tensor((BM, BN)))) == 128
assert str(kernel_mma.get_slice(130).partition_C(cute.make_identity_tensor((BM, BN)))) == \
    "tensor<(64,4) o ((2,2,32),1,1):((1@1,8@0,8@1),0,0)>"

# %% [markdown]
# Thread 130 is thread 2 of the second warpgroup: row 64, column 4, 128 values; thread 128's slice starts
# at column 0 of the same rows.
#
# The coordinates a thread's slice holds depend on the tensor sliced. An identity tensor's entries are
# (m, n), in the order of its modes. The TMA coordinate tensor of section 3.3 has D's shape too, but its
# entries come in the TMA box's order, the contiguous dimension first: for the row-major D that is (n, m)
# (its strides `(1@1,1@0)` send mode 0, the row, to TMA dimension 1). So `partition_C` of D's tile of TMA
# coordinates gives each accumulator's (n, m), and its entry `[1]` is a row, not a column. Here D is 200 x
# 512, `tma_mD` its coordinate tensor from a TMA store atom, and tile-column 1 starts at column 256
# (CuTeDSL 4.8.1, traced for sm_90a on the CPU, prints the same coordinates):

# %%
D_host = not_in_cutedsl.tensor_over(numpy.zeros(200 * 512, numpy.float16), cute.make_layout((200, 512), stride=(512, 1)))
tma_d, tma_mD = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), D_host,
                                            cute.tile_to_shape(atom_sw128, (BM, BN), order=(0, 1)), (BM, BN))
gD_tile = cute.local_tile(tma_mD, (BM, BN), (0, 1))                                 # tile-row 0, tile-column 1
cD_tile = cute.local_tile(cute.make_identity_tensor((200, 512)), (BM, BN), (0, 1))
print("TMA coordinates of D:", tma_mD, "  (m, n) = (3, 5) of the tile:", gD_tile[(3, 5)])
print("thread 130's first accumulator: TMA coordinates", kernel_mma.get_slice(130).partition_C(gD_tile)[0],
      " identity", kernel_mma.get_slice(130).partition_C(cD_tile)[0])
assert str(tma_mD) == "tensor<(0,0) o (200,512):(1@1,1@0)>" and gD_tile[(3, 5)] == (261, 3)
assert kernel_mma.get_slice(130).partition_C(gD_tile)[0] == (260, 64)     # (n, m): column 260, row 64
assert kernel_mma.get_slice(130).partition_C(cD_tile)[0] == (64, 260)     # (m, n)

# %% [markdown]
# The consumers set up their operands and accumulators once, before the main loop.
# `thr_mma.partition_A(sA)` is the warpgroup's view of A's stages, `(MMA, MMA_M, MMA_K, STAGES)`;
# `tiled_mma.make_fragment_A(t)` turns that view of shared memory into wgmma matrix descriptors (no
# registers), `make_fragment_B` the same for B (`make_fragment_C` would allocate accumulator registers; the
# kernel uses `cute.make_rmem_tensor(shape, dtype)`, registers of any shape, here the shape of its
# `partition_C`). `accumulators.fill(0.0)` zeroes them, and `tiled_mma.set(warpgroup.Field.ACCUMULATE,
# True)` sets the wgmma's accumulate field: with True each wgmma computes D = A B + D, with False D = A B
# (the accumulators' old values ignored):

# %%
print(kernel_lines("benchmarks.kernels.hopper_gemm", "thr_mma = tiled_mma.get_slice", "consume(tiled_mma",
                   through=True))

# %% [markdown]
# ### 3.7 · The consumers' main loop
#
# A wgmma is asynchronous: `cute.gemm` issues it and returns. `warpgroup.fence()` orders the registers'
# earlier writes (the zero fill) before the tensor cores use them; `warpgroup.commit_group()` closes the
# k-tile's 4 wgmmas (BK / 16) into a group; `warpgroup.wait_group(1)` waits until at most 1 group is still
# running. So the kernel keeps one k-tile of wgmmas running while it waits for the next stage, and releases
# the *previous* k-tile's stage, whose wgmmas `wait_group(1)` has just retired:

# %%
print(kernel_lines("benchmarks.kernels.hopper_gemm", "def consume(", "    warpgroup.wait_group(0)", through=True))

# %% [markdown]
# The same loop in the model, for 3 k-tiles on 2 stages, and the mistake of releasing the stage just
# issued (its wgmmas may still be reading it):

# %%
loop = [wait("full", 0, 0), fence(), wgmma(0, 0), commit_group(), wait_group(1),
        wait("full", 1, 0), fence(), wgmma(1, 1), commit_group(), wait_group(1), arrive("empty", 0),
        wait("full", 0, 1), fence(), wgmma(0, 2), commit_group(), wait_group(1), arrive("empty", 1),
        wait_group(0)]
print(mbarriers.run_pipeline(producer, [loop], 3, 2, 49152))
too_early = loop[:5] + [arrive("empty", 0)] + loop[5:10] + loop[11:]
print(mbarriers.run_pipeline(producer, [too_early], 3, 2, 49152))
assert mbarriers.run_pipeline(producer, [loop], 3, 2, 49152).ok
assert mbarriers.run_pipeline(producer, [too_early], 3, 2, 49152).mistake == "released while read"

# %% [markdown]
# ### 3.8 · The epilogue
#
# The accumulators become fp16 and go to shared memory with `stmatrix` (the inverse of `ldmatrix`: a warp
# writes 8x8 matrices from registers), into the same 128-byte-swizzled layout TMA reads; a proxy fence makes
# those ordinary writes visible to the copy engine; one warp (warp 4) issues the TMA store, which clips at
# the matrix edge. Unlike a load, CuTeDSL does not elect a lane for it: all 32 lanes of warp 4 execute the
# store instruction, each asking for the same tile (section 4 reads it in the PTX; NVIDIA's CuTeDSL Hopper
# example `dense_gemm` stores from one warp the same way). C's tile (128 x 256 fp16 = 64 KiB) reuses A's
# four stages (4 x 16 KiB), which the MMAs are done with: `cute.recast_ptr(ptr, swizzle, dtype=...)` is the
# same address with C's swizzle and element type, and `cute.make_tensor(ptr, layout)` a tensor there.
# In CuTeDSL: the atom's op is `cute.nvgpu.warp.StMatrix8x8x16bOp(transpose, num_matrices)` (`stmatrix.x4`
# here) and `cute.make_tiled_copy_C(atom, tiled_mma)` lays it over the accumulators as the MMA holds them;
# `cute.arch.fence_proxy("async.shared", space="cta")` is the proxy fence; after the store
# `cute.arch.cp_async_bulk_commit_group()` closes it into a bulk group, and
# `cute.arch.cp_async_bulk_wait_group(0, read=True)` waits until the copy engine has read shared memory,
# which the block frees when it exits.

# %%
print(kernel_lines("benchmarks.kernels.hopper_gemm", "reused = sA if", "consumer_warps ="))
print()
print(kernel_lines("benchmarks.kernels.hopper_gemm", "# sC lives in A's stages", "cp_async_bulk_wait_group(0, read=True)",
                   through=True))
assert BM * BN * 2 == STAGES * BM * BK * 2 == 64 * 1024

# %% [markdown]
# The calls, in order. `cute.arch.barrier(barrier_id=1, number_of_threads=256)` is a named barrier (PTX
# `bar.sync 1, 256`): only the 256 consumer threads meet there (barrier 0 is `sync_threads`, which would wait
# for the producer too). `cute.nvgpu.warp.StMatrix8x8x16bOp(transpose, num_matrices)` is `stmatrix` with 1,
# 2 or 4 8x8 matrices of 16-bit values, `cute.make_copy_atom(op, dtype)` its atom, and
# `cute.make_tiled_copy_C(atom, tiled_mma)` spreads it over the threads the way the TiledMMA spreads C, so
# `retile(result)` regroups a thread's accumulators per stmatrix and `partition_D(sC)` is where they land.
# `accumulators.load()` reads registers as a *value* (a TensorSSA) on which `+`, `*`, comparisons and
# `cute.where(condition, x, y)` work element by element (`cute.full_like(v, 0.0)` is a value of v's shape
# filled with 0.0), `.to(cutlass.Float16)` converts one, and `result.store(value)` writes it to registers.
# `cute.arch.fence_proxy("async.shared", space="cta")` orders the thread's shared-memory writes before the
# copy engine's reads; `cute.copy(tma_c, ...)` issues the store, `cp_async_bulk_commit_group()` closes the
# thread's bulk copies into a group, and `cp_async_bulk_wait_group(0, read=True)` waits until the copy
# engine has read them from shared memory (not until they reach global memory), so the block may exit.

# %% [markdown]
# ## 4 · Run it
#
# **What runs where.** cutekit's simulator runs this kernel, unchanged, on the CPU: the producer warp and
# the two consumer warpgroups as 384 threads per tile, TMA copies, mbarriers with their bytes, wgmma,
# `stmatrix` and the TMA store. It checks the order a GPU needs as it goes (section 3.5's mistakes, in the
# kernel) and names the line that breaks it. A GPU runs the kernel only if it is an sm_90 (an H100 or
# H200): GPUs before Hopper have no TMA and no wgmma, and later ones (Blackwell) have TMA but no wgmma, which
# is sm_90a only.
#
# The TMA atoms reach the kernel as arguments annotated `cute.CopyAtom`. With `CLUSTER_M = 2`,
# `cute.arch.block_idx_in_cluster()` is the CTA's rank in its cluster, and at the end
# `cute.arch.cluster_arrive()` with `cluster_wait()` keeps both CTAs until both are done (each still
# arrives on the other's barriers).

# %%
import time

import numpy
import torch

from cutekit.checks.ch08_hopper import simulate_kernel

gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else None
on_hopper = gpu is not None and torch.cuda.get_device_capability() == (9, 0)
if gpu is not None and not on_hopper:
    print(f"{gpu} is sm_{''.join(map(str, torch.cuda.get_device_capability()))}: this chapter's kernels need sm_90 "
          f"(wgmma is sm_90a only); they run on the simulator below")
rng = numpy.random.default_rng(8)
a_host = rng.standard_normal((200, 136)).astype(numpy.float16)    # M = 200, K = 136: ragged tiles
b_host = rng.standard_normal((72, 136)).astype(numpy.float16)     # N = 72
started = time.perf_counter()
c_host = simulate_kernel(a_host, b_host, BN=128, STAGES=2)
seconds = time.perf_counter() - started
error = numpy.abs(c_host.astype(numpy.float32) - a_host.astype(numpy.float32) @ b_host.astype(numpy.float32).T).max()
print(f"simulated: 200 x 72 x 136 (2 tiles of 128 x 128, 3 k-tiles on 2 stages) in {seconds:.1f} s, largest "
      f"difference from fp32 NumPy {error:.3f}")
assert error < 0.06

# %% [markdown]
# A mistake planted in the kernel: the consumers' phase bit starting at 1 (`edit` replaces one line of the
# kernel's source before it runs). Their first wait returns at once, before any TMA copy has landed; on a GPU
# the wgmma would read whatever shared memory held. The simulator stops at the line:

# %%
from cutekit.sim import HopperError

try:
    simulate_kernel(a_host, b_host, edit=("    phase = cutlass.Int32(0)\n    previous_stage",
                                          "    phase = cutlass.Int32(1)\n    previous_stage"), BN=128, STAGES=2)
except HopperError as stopped:
    print(str(stopped)[:420])
    assert "waited on the wrong phase" in str(stopped)
else:
    raise AssertionError("the simulator ran the mistaken kernel to the end")

# %% [markdown]
# On an H100 (or H200) the real kernel runs too:

# %%
if on_hopper:
    from benchmarks.kernels import hopper_gemm
    a = torch.randn(1000, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(776, 512, device="cuda", dtype=torch.float16)
    c = hopper_gemm.run(a, b)
    error = (c.float() - a.float() @ b.float().T).abs().max().item()
    print(f"ran on {gpu}: 1000 x 776 x 512, largest difference from fp32 torch {error:.3f}")
    assert error < 0.5
else:
    print(f"no sm_90 GPU here ({gpu or 'no GPU'}): below, the PTX CuTeDSL compiles for sm_90a on the CPU")

# %% [markdown]
# ### The compiled code
#
# `compile_to_ptx(..., arch="sm_90a")` compiles `gemm_tn` for fake fp16 tensors in a subprocess and counts
# the PTX opcodes:

# %%
from cutekit.checks import compile_to_ptx
from cutekit.checks.cutedsl import FakeTensor

ptx = compile_to_ptx("benchmarks.kernels.hopper_gemm", "gemm_tn", (FakeTensor("Float16", 2, 8),) * 3, arch="sm_90a")
if ptx.available:
    assert ptx.ok, ptx.error
    for opcode in ("mbarrier.init", "mbarrier.try_wait.parity", "mbarrier.arrive.expect_tx",
                   "cp.async.bulk.tensor.2d.shared", "wgmma.fence", "wgmma.mma_async.sync.aligned.m64n256k16",
                   "wgmma.commit_group", "wgmma.wait_group", "stmatrix.sync.aligned.m8n8.x4",
                   "fence.proxy.async", "cp.async.bulk.tensor.2d.global.shared", "setmaxnreg", "mma.sync", "ldmatrix"):
        print(f"{opcode:42} {ptx.count(opcode)}")
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16") == 4
    assert ptx.count("mbarrier.init") == 8 and ptx.count("stmatrix.sync.aligned.m8n8.x4") == 16
    assert ptx.count("cp.async.bulk.tensor.2d.shared") == 10 and ptx.count("mbarrier.arrive.expect_tx") == 5
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared") == 4
    assert ptx.count("mma.sync") == 0 and ptx.count("ldmatrix") == 0 and ptx.local_memory == 0
else:
    print(ptx.error)

# %% [markdown]
# Read it against the code: 8 `mbarrier.init` (full and empty for 4 stages); 4 wgmma of 64x256x16 in the
# consumers' loop (BK / 16; both warpgroups run the same code); 16 `stmatrix.x4` (128 fp16 values per
# thread, 8 per stmatrix); no `mma.sync`, no `ldmatrix`, no local memory. The producer's loop is unrolled
# four times (one copy per stage, each with its stage's shared-memory offsets as constants) plus a
# remainder: 5 `expect_tx`, 10 TMA loads. C leaves in 4 TMA stores: a 128-byte-swizzled box is at most
# 128 bytes (64 fp16) wide, so the 128 x 256 tile goes as 4 boxes of 128 x 64 (`benchmarks/RESULTS.md`
# reads the same 4 `UTMASTG.2D` in the SASS).
#
# **Which lanes issue a TMA copy.** `elect.sync` picks one lane of a warp. In the PTX each TMA load sits
# behind its own `elect.sync` (CuTeDSL's `cute.copy` elects a lane for a load); the stores follow the
# branch to warp 4 with none, so every lane of warp 4 executes them. The cell also lists the block
# barriers: `bar.sync 0` is `sync_threads`, `bar.sync 1, 256` the consumers' named barrier:

# %%
if ptx.available:
    lines = ptx.ptx.splitlines()
    loads = [i for i, line in enumerate(lines) if "cp.async.bulk.tensor.2d.shared" in line]
    stores = [i for i, line in enumerate(lines) if "cp.async.bulk.tensor.2d.global.shared" in line]
    loads_elected = [any("elect.sync" in line for line in lines[i - 6:i]) for i in loads]
    print("an elect.sync in the 6 lines before each TMA load:", loads_elected)
    print("the first TMA load and the lines before it:")
    print("\n".join(line.strip()[:100] for line in lines[loads[0] - 5:loads[0] + 1]))
    print("the first TMA store and the lines before it:")
    print("\n".join(line.strip()[:100] for line in lines[stores[0] - 5:stores[0] + 1]))
    assert all(loads_elected) and not any("elect.sync" in line for line in lines[stores[0] - 12:stores[-1]])
    barriers_used = sorted({" ".join(line.split()) for line in lines if line.strip().startswith("bar.sync")})
    print("block barriers:", barriers_used)
    assert barriers_used == ["bar.sync 0;", "bar.sync 1, 256;"]
else:
    print(ptx.error)

# %% [markdown]
# ### How fast (an H100)
#
# Measured (`benchmarks/RESULTS.md`, 2026-11-24, an H100 80GB HBM3, `benchmarks/compare_nvidia_examples.py
# --hopper-only`, 8192^3 fp16, 40 rounds over four runs, each timing the kernels in turn on the same
# inputs): 564-799 TFLOP/s as the card's clock moved under its 700 W limit, 0.981-1.023 of NVIDIA's CuTeDSL
# Hopper `dense_gemm` example and 0.984-1.012 of torch.matmul. Chapter 07's `mma.sync` kernels reached
# 0.58-0.73 of torch.matmul (its 128x128 teaching configuration 0.58-0.66, `gemm_tensorcore.FAST`
# 0.59-0.73). On a CPU the simulator ran the same kernel on one 128x256 tile with 8 k-tiles in 1.70 s
# (`benchmarks/bench_sim.py --repeat 2`, best of 2; `benchmarks/RESULTS.md`, 2026-11-24, the course's 2-core
# build machine at load 2.3); a busier or slower machine takes several times as long. Section 4's cell
# prints what this machine took for its two tiles.
#
# ## Exercises
#
# Exercises 1-3 use cutekit's `cute` (host-side layout code, as in the kernel's `gemm_tn`); exercises 4
# and 5 are loops of the kernel itself; exercise 6, the capstone, is a whole kernel of your own.
#
# ### Exercise 1 · The shared-memory layout for a tile
#
# Write `smem_layout(mn, k, dtype, major, stages)`: the staged shared-memory layout of an `(mn, k)` operand
# tile of `dtype`, K-major (`major="K"`) or MN-major (`"MN"`), built from the warpgroup atom with the
# largest swizzle the contiguous extent, in bytes, allows (the `K_` or `MN_` kinds), tiled to
# `(mn, k, stages)` in the order `make_smem_layout_a` uses. The check asks fp16, bf16, fp32 and 8-bit types,
# both majors, and extents of 32 to 256 bytes (some not a power of two); where CuTeDSL is installed it also
# runs your function under CuTeDSL and compares the layouts.

# %%
def smem_layout(mn, k, dtype, major, stages):
    ### BEGIN SOLUTION
    contiguous_bytes = (k if major == "K" else mn) * dtype.width // 8
    swizzle = next((f"SW{row}" for row in (128, 64, 32) if contiguous_bytes % row == 0), "INTER")
    atom = warpgroup.make_smem_layout_atom(getattr(warpgroup.SmemLayoutAtomKind, f"{major}_{swizzle}"), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))
    ### END SOLUTION


check("ch08.smem_layout", smem_layout)

# %% [markdown]
# ### Exercise 2 · The TMA boxes of a two-dimensional cluster
#
# The kernel's clusters line CTAs up along M only, so only B is shared. A cluster may also be
# `cluster_m x cluster_n` CTAs computing a `(cluster_m * bm) x (cluster_n * bn)` block of C: the `cluster_m`
# CTAs along M (one cluster column) need the same B tile, and the `cluster_n` CTAs along N (one cluster row)
# the same A tile. Each shared tile is multicast as B is in section 3.3: every CTA that needs it loads an
# equal share of its rows, and the copy engine writes each share into all of them. Write
# `tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype)`: a dict with the part of A's tile (a tuple in the
# tensor's modes, rows and K) each CTA loads with TMA and multicasts (`"A"`, A is (M, K); where K holds more
# bytes than a 128-byte-swizzled box, the copy takes it in several boxes), the part of B's tile it loads
# (`"B"`, B is (N, K)), and the bytes the
# stage's full barrier expects (`"expect_tx"`). `tma_plan(128, 256, 64, 2, 2, Float16)` is
# `{'A': (64, 64), 'B': (128, 64), 'expect_tx': 49152}`.

# %%
def tma_plan(bm, bn, bk, cluster_m, cluster_n, dtype):
    ### BEGIN SOLUTION
    return {"A": (bm // cluster_n, bk), "B": (bn // cluster_m, bk), "expect_tx": (bm + bn) * bk * dtype.width // 8}
    ### END SOLUTION


check("ch08.tma_plan", tma_plan)

# %% [markdown]
# ### Exercise 3 · How many stages fit
#
# Write `stages_that_fit(bm, bn, bk, dtype, c_dtype, reuse)`: the largest number of stages (each an A tile,
# a B tile and two 8-byte mbarriers) that fits in the 227 KiB of shared memory one sm_90 block may use,
# together with the epilogue's (bm, bn) tile of `c_dtype`, which costs nothing extra when `reuse` is True
# (it lives in the stages, as in the kernel) and needs its own bytes otherwise.

# %%
def stages_that_fit(bm, bn, bk, dtype, c_dtype, reuse):
    ### BEGIN SOLUTION
    stage = (bm + bn) * bk * dtype.width // 8 + 2 * 8
    epilogue = 0 if reuse else bm * bn * c_dtype.width // 8
    return (227 * 1024 - epilogue) // stage
    ### END SOLUTION


check("ch08.stage_count", stages_that_fit)

# %% [markdown]
# ### Exercise 4 · The producer's loop, the first lap without waiting
#
# Kernel code from here: `cute` is CuTeDSL's (the simulator where CuTeDSL or a Hopper GPU is missing). The
# kernel's producer waits on every k-tile and gets through its first lap by waiting for parity 1, "the
# phase before the first". Write `producer_loop(tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, full, empty, k_tiles,
# stages, bytes_per_stage)` that does not wait at all for the first `stages` k-tiles (their stages are
# fresh), and from then on waits for the consumers' release of the k-tile `stages` back: work out which
# phase of `empty + s` that release completes from the k-tile index. For each k-tile, in one lane, announce `bytes_per_stage` on `full + s`; then issue the TMA loads
# of A and B into stage `s` (`tAgA[None, k]` is k-tile k of A as TMA coordinates, `tAsA[None, s]` is stage s).
# `stages` and `bytes_per_stage` are Python ints.
#
# The check runs the chapter's kernel with your function in place of its `produce`, on the simulator, on
# ragged problems with fewer k-tiles than stages and with several laps round the ring, and counts your waits;
# where CuTeDSL is installed it compiles the kernel for sm_90a and reads its PTX; on an H100 or H200 it runs
# a 4096^3 GEMM with it and times it.

# %%
import cutekit

cutekit.use("auto")     # `import cutlass`: real CuTeDSL on a GPU that has it, else the simulator
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warpgroup


def producer_loop(tma_a, tAgA, tAsA, tma_b, tBgB, tBsB, full, empty, k_tiles, stages, bytes_per_stage):
    ### BEGIN SOLUTION
    for k_tile in range(k_tiles):
        s = k_tile % stages
        if k_tile >= stages:
            # k-tile k_tile - stages, in lap k_tile // stages - 1, completed that phase of empty[s]
            cute.arch.mbarrier_wait(empty + s, (k_tile // stages - 1) % 2)
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(full + s, bytes_per_stage)
        cute.copy(tma_a, tAgA[None, k_tile], tAsA[None, s], tma_bar_ptr=full + s)
        cute.copy(tma_b, tBgB[None, k_tile], tBsB[None, s], tma_bar_ptr=full + s)
    ### END SOLUTION


check("ch08.mbarrier_phases", producer_loop)

# %% [markdown]
# ### Exercise 5 · The consumers' loop, two k-tiles deep
#
# Section 3.7's loop keeps one k-tile of wgmmas running while it waits for the next stage. Write
# `consumer_loop(tiled_mma, accumulators, tCrA, tCrB, full, empty, k_tiles, stages, lane)` that keeps **two**
# running: `wait_group(2)` after each k-tile's commit, and then the stage that is free is the one of the
# k-tile two back, from k-tile 2 on. One lane per warp (`lane == 0`) arrives on `empty + s`; after the loop,
# wait for every wgmma. Work out each k-tile's stage and the parity to wait for on `full + s` from the k-tile
# index (as in exercise 4). The check runs the chapter's kernel with your function in place of its `consume`
# on the simulator (3 or 4 stages: two k-tiles in flight need a third stage for the producer to fill), counts
# the wgmma groups left running after each wait, compiles it for sm_90a where CuTeDSL is installed and, on
# an H100 or H200, runs and times it.

# %%
def consumer_loop(tiled_mma, accumulators, tCrA, tCrB, full, empty, k_tiles, stages, lane):
    ### BEGIN SOLUTION
    for k_tile in range(k_tiles):
        s = k_tile % stages
        cute.arch.mbarrier_wait(full + s, (k_tile // stages) % 2)
        warpgroup.fence()
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            a_block, b_block = tCrA[None, None, kb, s], tCrB[None, None, kb, s]
            cute.gemm(tiled_mma, accumulators, a_block, b_block, accumulators)
        warpgroup.commit_group()
        warpgroup.wait_group(2)
        if k_tile >= 2:
            if lane == 0:
                cute.arch.mbarrier_arrive(empty + (k_tile - 2) % stages)
    warpgroup.wait_group(0)
    ### END SOLUTION


check("ch08.wgmma_main_loop", consumer_loop)

# %% [markdown]
# ### Exercise 6 · Capstone: a Hopper GEMM with its epilogue fused
#
# A GEMM is rarely alone: a linear layer adds a bias and applies an activation, and doing that in a second
# kernel reads and writes all of D once more. Write, from an empty cell, a whole Hopper kernel
# (`@cute.kernel`) and its host `gemm_bias_relu(mA, mB, bias, mD)` (`@cute.jit`, it builds what the kernel
# needs and launches it) that computes
#
# D = relu(A B^T + bias), that is D[m, n] = max(sum over k of A[m, k] B[n, k] + bias[n], 0),
#
# for A (M, K) and B (N, K) fp16, row-major (K-major, as in the chapter), bias (N,) fp32, one value per
# column of D, and D (M, N) fp16, row-major. The four arguments arrive as `cute.Tensor` views whose data
# start on a 16-byte boundary; D is the output, allocated by the caller (the check fills it with NaN first,
# so an entry never written shows), and the host returns nothing. N and K are multiples of 8 (TMA moves rows
# of whole 16-byte chunks); apart from that M, N and K are arbitrary, and the check's are ragged: no tile of
# 64, 128 or 256 divides them. They are run-time values: the sm_90a compile below gives tensors of unknown
# shape, so count tiles and k-tiles with `cute.ceil_div` and `cute.size`, as the chapter's kernel does. The
# bias and the clamp are applied to the fp32 accumulators in registers, before D leaves the kernel. The
# roles are yours to write: a producer warp that issues the TMA loads of A and B into a ring of stages, full
# and empty mbarriers that count arrivals and bytes, consumer warpgroups that wait, multiply with wgmma and
# release each stage, and the epilogue. The tile and the number of stages are yours too; the problems below
# are described with the chapter's 128 x 256 x 64 tile and 4 stages.
#
# **What you need**, all in the sections above: the atoms and staged layouts (3.1, 3.2); the TMA atoms,
# `cute.slice_` and `tma_partition` (3.3, and its trap); mbarriers, their phases and the ring (3.4, 3.5); warp
# specialization and the register budgets (3.5); the warpgroup MMA, its fragments, and which columns a thread's
# accumulators hold (3.6); the consumers' loop (3.7, exercises 4 and 5); the epilogue's calls, the named
# barrier, register values and their element-by-element operations, stmatrix, the proxy fence and the TMA store
# (3.8). The kernel's lines that no cell prints, which tile a CTA computes (`cute.local_tile` of the TMA
# coordinate tensors, as in section 3.3's cell), the k-tile count and the launch, are in
# `benchmarks/kernels/hopper_gemm.py` (`hopper_gemm_kernel` and `gemm_tn`); the annotations of a kernel's
# parameters (`cute.TiledMma`, `cute.ComposedLayout`) and a launch without `smem=` are in chapter 07's section 8.
# Two things no cell shows: a thread's accumulators span many columns of D, each needing its own bias
# value; and the last tile-column reaches past column N, where bias has no values. A TMA store clips D at its
# edge; a store from registers does not.
#
# The check runs your kernel on the simulator on two ragged problems (with the chapter's tile, each takes
# seconds; the check prints how long each took on your machine): the first with `65 <= M <= 127`, `264 <= N <= 376`, `8 <= K <= 56` (two tile-columns of 256, the
# second partial, and one short k-tile), the second with `9 <= M <= 63`, `136 <= N <= 248`, `520 <= K <= 568`
# (9 k-tiles: twice round a ring of 4 stages, then one more). It compares D with relu(A B^T + bias) computed by NumPy in fp32 (`numpy.isclose`, rtol 2e-2, atol
# 6e-2; once the first problem fails, the second is not run). It reports the simulator's diagnostics (a wait
# on the wrong phase, a stage reused before its release, a missing fence, an access past a tensor's edge) and
# names the epilogue's mistakes (the bias missing or added per row, another column's bias, the clamp missing or
# before the bias, entries never written). Where CuTeDSL is installed it compiles your kernel for sm_90a and
# reads the PTX: TMA loads, mbarrier `try_wait` and `expect_tx`, `wgmma.mma_async`, no `mma.sync`, no local
# memory. On an H100 or H200 it runs a 4096^3 problem (bias drawn from 8 times a normal distribution),
# compares D with `torch.relu(torch.addmm(bias, A, B.T))` in fp32 (rtol 2e-2, atol 0.25), and times your
# kernel against that torch expression in fp16 in the same process (median of 20 launches each): at least 0.5
# of torch's speed earns the point.

# %%
from cutlass.cute.nvgpu import cpasync, warpgroup

### BEGIN SOLUTION (placeholder: pass)
BM, BN, BK, STAGES = 128, 256, 64, 4      # the chapter's tile: two consumer warpgroups of 64 rows each
CONSUMERS = 256                           # warpgroups 1 and 2; warpgroup 0 is the producer


@cute.kernel
def gemm_bias_relu_kernel(tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom, mB: cute.Tensor,
                          tma_d: cute.CopyAtom, mD: cute.Tensor, bias: cute.Tensor, tiled_mma: cute.TiledMma,
                          sA_layout: cute.ComposedLayout, sB_layout: cute.ComposedLayout,
                          sD_layout: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    lane = tidx % 32
    m_tile, n_tile, _ = cute.arch.block_idx()
    gA = cute.local_tile(mA, (BM, BK), (m_tile, None))         # TMA coordinates: (BM, BK, k_tiles)
    gB = cute.local_tile(mB, (BN, BK), (n_tile, None))
    gD = cute.local_tile(mD, (BM, BN), (m_tile, n_tile))
    k_tiles = cute.size(gA, mode=[2])

    smem = cutlass.memory.SmemAllocator()
    full = smem.allocate_array(cutlass.Int64, STAGES, byte_alignment=8)
    empty = smem.allocate_array(cutlass.Int64, STAGES, byte_alignment=8)
    sBias = smem.allocate_tensor(cutlass.Float32, cute.make_layout(BN), 16)
    sA = smem.allocate_tensor(cutlass.Float16, sA_layout.outer, 1024, swizzle=sA_layout.inner)
    sB = smem.allocate_tensor(cutlass.Float16, sB_layout.outer, 1024, swizzle=sB_layout.inner)
    # D's tile (64 KiB) reuses A's four stages once every wgmma is done with them
    sD = cute.make_tensor(cute.recast_ptr(sA.iterator, sD_layout.inner, dtype=cutlass.Float16), sD_layout.outer)

    if warp == 0:
        with cute.arch.elect_one():
            for s in cutlass.range_constexpr(STAGES):
                cute.arch.mbarrier_init(full + s, 1)                # the producer's arrival (+ the bytes)
                cute.arch.mbarrier_init(empty + s, CONSUMERS // 32)  # one arrival per consumer warp
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()

    if warp < 4:
        cute.arch.setmaxregister_decrease(40)
        if warp == 0:
            tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2),
                                               cute.group_modes(gA, 0, 2))
            tBsB, tBgB = cpasync.tma_partition(tma_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 2),
                                               cute.group_modes(gB, 0, 2))
            for k_tile in range(k_tiles):
                s = k_tile % STAGES
                # the release of k-tile k_tile - STAGES; in the first lap, parity 1 passes a fresh barrier
                cute.arch.mbarrier_wait(empty + s, (k_tile // STAGES + 1) % 2)
                with cute.arch.elect_one():
                    cute.arch.mbarrier_arrive_and_expect_tx(full + s, (BM + BN) * BK * 2)
                cute.copy(tma_a, tAgA[None, k_tile], tAsA[None, s], tma_bar_ptr=full + s)
                cute.copy(tma_b, tBgB[None, k_tile], tBsB[None, s], tma_bar_ptr=full + s)
    else:
        cute.arch.setmaxregister_increase(232)
        consumer = tidx - 128
        # the bias of this tile's columns into shared memory, 0 past column N; the main loop hides the load
        if consumer < BN:
            column = n_tile * BN + consumer
            value = cutlass.Float32(0.0)
            if column < cute.size(bias):
                value = bias[column]
            sBias[consumer] = value
        # the thread's own slice: its accumulators' columns (for A and B any thread of the warpgroup would do)
        thr_mma = tiled_mma.get_slice(consumer)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
        accumulators = cute.make_rmem_tensor(thr_mma.partition_C(gD).shape, cutlass.Float32)
        accumulators.fill(0.0)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        for k_tile in range(k_tiles):
            s = k_tile % STAGES
            cute.arch.mbarrier_wait(full + s, (k_tile // STAGES) % 2)
            warpgroup.fence()
            for kb in cutlass.range_constexpr(BK // 16):
                cute.gemm(tiled_mma, accumulators, tCrA[None, None, kb, s], tCrB[None, None, kb, s], accumulators)
            warpgroup.commit_group()
            warpgroup.wait_group(1)                       # the previous k-tile's wgmmas are retired
            if k_tile > 0:
                if lane == 0:
                    cute.arch.mbarrier_arrive(empty + (k_tile - 1) % STAGES)
        warpgroup.wait_group(0)

        # epilogue: both warpgroups are past their wgmmas (sD overwrites sA) and every bias value is in
        cute.arch.barrier(barrier_id=1, number_of_threads=CONSUMERS)
        # bias as a (BM, BN) tile, stride 0 down the rows: partitioned as C, it pairs each accumulator with
        # its column's bias
        bias_tile = cute.make_tensor(sBias.iterator, cute.make_layout((BM, BN), stride=(0, 1)))
        summed = accumulators.load() + thr_mma.partition_C(bias_tile).load()
        result = cute.make_rmem_tensor(accumulators.shape, cutlass.Float16)
        result.store(cute.where(summed > 0.0, summed, cute.full_like(summed, 0.0)).to(cutlass.Float16))
        r2s = cute.make_tiled_copy_C(cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(False, 4),
                                                         cutlass.Float16), tiled_mma)
        thr_r2s = r2s.get_slice(consumer)
        cute.copy(r2s, thr_r2s.retile(result), thr_r2s.partition_D(sD))
        cute.arch.fence_proxy("async.shared", space="cta")
        cute.arch.barrier(barrier_id=1, number_of_threads=CONSUMERS)
        if warp == 4:
            tDsD, tDgD = cpasync.tma_partition(tma_d, 0, cute.make_layout(1), cute.group_modes(sD, 0, 2),
                                               cute.group_modes(gD, 0, 2))
            cute.copy(tma_d, tDsD, tDgD)                  # clipped at D's edge by the copy engine
            cute.arch.cp_async_bulk_commit_group()
            cute.arch.cp_async_bulk_wait_group(0, read=True)
### END SOLUTION


@cute.jit
def gemm_bias_relu(mA: cute.Tensor, mB: cute.Tensor, bias: cute.Tensor, mD: cute.Tensor):
    """D = relu(A B^T + bias): A (M, K), B (N, K) fp16 K-major, bias (N,) fp32, D (M, N) fp16 row-major."""
    ### BEGIN SOLUTION
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cutlass.Float16)
    sA_layout = cute.tile_to_shape(atom, (BM, BK, STAGES), order=(0, 1, 2))
    sB_layout = cute.tile_to_shape(atom, (BN, BK, STAGES), order=(0, 1, 2))
    sD_layout = cute.tile_to_shape(atom, (BM, BN), order=(0, 1))
    tma_a, tma_mA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), mA,
                                                cute.slice_(sA_layout, (None, None, 0)), (BM, BK))
    tma_b, tma_mB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), mB,
                                                cute.slice_(sB_layout, (None, None, 0)), (BN, BK))
    tma_d, tma_mD = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), mD, sD_layout, (BM, BN))
    mma = warpgroup.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (64, BN, 16), warpgroup.OperandSource.SMEM,
                                 cute.nvgpu.OperandMajorMode.K, cute.nvgpu.OperandMajorMode.K)
    tiled_mma = cute.make_tiled_mma(cute.make_mma_atom(mma), (2, 1, 1))
    grid = [cute.ceil_div(cute.size(mD, mode=[0]), BM), cute.ceil_div(cute.size(mD, mode=[1]), BN), 1]
    gemm_bias_relu_kernel(tma_a, tma_mA, tma_b, tma_mB, tma_d, tma_mD, bias, tiled_mma,
                          sA_layout, sB_layout, sD_layout).launch(grid=grid, block=[128 + CONSUMERS, 1, 1])
    ### END SOLUTION


check("ch08.capstone", gemm_bias_relu)

# %% [markdown]
# ## What to remember
#
# - TMA and wgmma read shared memory in fixed patterns, CuTeDSL's `make_smem_layout_atom` kinds: 8 rows of
#   32, 64 or 128 bytes, `S<B,4,3>` on byte addresses; pick the largest that divides the contiguous extent.
# - One elected lane moves a whole box with a TMA load; the stage's full mbarrier expects its bytes
#   (`expect_tx`, the transaction count sm_90 adds to sm_80's mbarriers).
# - A phase completes on arrivals *and* bytes; waits name a parity, which flips each lap of the ring.
# - wgmma (sm_90a only) is 64xNx16 per warpgroup, A and B from shared memory (stride-0 thread modes), C in
#   registers; fence, commit, wait_group(n), and release a stage only after its wgmmas are retired.
# - The CPU compiles all of it for sm_90a and simulates it, naming a wrong phase, a stage reused before its
#   release or a missing fence; running it at speed needs an sm_90 GPU.
#
# This is the end of the course's path: chapter 07's layouts, now read by Hopper's copy engine and tensor cores.
