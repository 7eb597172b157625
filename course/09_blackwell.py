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
# # 09 · Blackwell: tcgen05 MMA and tensor memory
#
# **Why.** Chapter 08's Hopper GEMM gives each 64-row slice of the tile to a warpgroup: 128 threads issue
# one `wgmma.mma_async` together, and the accumulators live in those threads' registers (128 fp32 per thread
# for a 64 x 256 slice). A datacenter Blackwell GPU (sm_100a: B200, GB200; sm_103a: B300) keeps TMA and the
# mbarriers of chapter 08 and changes the tensor core's side of the contract:
#
# - **One thread issues the MMA for the whole CTA.** `tcgen05.mma` (CUTLASS calls it UMMA) computes a
#   128 x 256 x 16 block of fp16 in one instruction, and a single thread issues it. Operands come from shared
#   memory through 64-bit matrix descriptors like wgmma's (Blackwell's adds a version field and recodes the
#   swizzle); A may also come from TMEM.
# - **The accumulators live in tensor memory (TMEM)**, a per-SM memory of 128 lanes x 512 columns of 32-bit
#   cells next to the tensor core, not in registers. A kernel allocates TMEM columns (`tcgen05.alloc`), the
#   MMAs accumulate there, the epilogue's warps copy it to registers (`tcgen05.ld`), and the kernel frees it
#   (`tcgen05.dealloc`). Registers are free for the epilogue while the next tile's MMAs run.
# - **Completion is signalled to an mbarrier**: `tcgen05.commit` makes an mbarrier arrive once every MMA the
#   thread issued before it has finished: the same kind of barrier TMA reports its bytes to. So "the stage may be
#   overwritten" and "the accumulator is ready" are both mbarrier waits; there is no `wgmma.wait_group`.
# - **A CTA pair can share one MMA** (`CtaGroup.TWO`, PTX `cta_group::2`): the two CTAs of a cluster pair
#   compute a 128 x N or 256 x N tile together, each holding half of A's rows, half of B's and half of C.
#
# Instruction shapes, in CuTeDSL 4.8.1's own checks: with one CTA M is 64 or 128 and N a multiple of 8 up to
# 256; with a pair M is 128 or 256 and N a multiple of 16 up to 256 (with 8-bit MN-major B, N must be a
# multiple of 16 on one CTA and of 32 on a pair); K is 32 bytes of A and B (16 fp16, 8 tf32, 32 int8). tcgen05
# is on datacenter Blackwell (sm_100a, sm_103a) and on Jetson Thor (sm_110a): CuTeDSL 4.8.1 builds a tcgen05 MMA
# for those; its tcgen05 MMA ops also list sm_107, whose build CuTeDSL 4.8.1 refuses with its CUDA 12.9 toolkit
# ("Unsupported GPU architecture 'sm_107a'"). Hopper (sm_90a) has wgmma instead, and consumer Blackwell (sm_120,
# the GeForce RTX 50 cards, and sm_121, DGX Spark's GB10) has neither;
# CuTeDSL's message for a tcgen05 MMA built for sm_120 sends the programmer to the warp-level `mma.sync` of
# chapter 07.
#
# The chapter starts on the host side: the layouts and sizes a Blackwell kernel computes before launch, with
# cutekit's `cute` on the CPU (every result below is the one CuTeDSL 4.8.1 gives when traced for sm_100a;
# `tests/cute/test_blackwell_atoms.py` compares them). Then a small whole kernel, compiled for sm_100a
# (section 3) and run, step by step, on cutekit's simulator (section 4); exercises 3 and 4 write its MMA loop
# and its epilogue. No Blackwell GPU is lent to the course: nothing in this chapter has run on one, so it has
# no Blackwell timing.
#
# Terms: a **CTA** is a thread block; **TMEM** is tensor memory; a **lane** is one of TMEM's 128 rows, a
# **column** one of its 512 32-bit columns; **UMMA** is one `tcgen05.mma`; **K-major** means K is the
# contiguous mode of an operand tile (chapter 08).
#
# Besides `cute` and its `tcgen05` module (`cute.nvgpu.tcgen05`: the Blackwell MMA and TMEM copy operations),
# the cells use `cutlass.utils.blackwell_helpers`, CuTeDSL's host-side helpers for sm_100 kernels (the trivial
# tiled MMA, the shared-memory layouts and the epilogue's TMEM load), `cutlass.memory` (here for the TMEM
# columns to allocate) and `cutlass.tensor_utils.LayoutEnum`, which says whether a tensor is row-major or
# column-major; cutekit mirrors them as `cutekit.cute.utils`, `cutekit.cute.memory` and `cutekit.cute.tensor_utils`.

# %%
from cutekit import cute
from cutekit.checks import check
from cutekit.cute import memory
from cutekit.cute.nvgpu import OperandMajorMode, tcgen05
from cutekit.cute.tensor_utils import LayoutEnum
from cutekit.cute.utils import blackwell_helpers

# %% [markdown]
# ## 1 · See it: one MMA for the whole CTA
#
# `tcgen05.MmaF16BF16Op(ab, acc, (M, N, K), cta_group, a_src, a_major, b_major)` is the tcgen05 MMA for
# fp16/bf16 operands: `cta_group` is a `tcgen05.CtaGroup` (`CtaGroup.ONE`, one CTA; `CtaGroup.TWO`, a
# pair), `a_src` a `tcgen05.OperandSource` (`OperandSource.SMEM`: A from shared memory) and the majors are
# `OperandMajorMode.K` or `OperandMajorMode.MN` from `cute.nvgpu`. `cute.make_tiled_mma(op)` (chapter 07)
# makes it a TiledMMA. The 128 x 256 x 16 fp16 UMMA with fp32 accumulators:

# %%
K_MAJOR = OperandMajorMode.K
umma = cute.make_tiled_mma(tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 256, 16), tcgen05.CtaGroup.ONE,
                                                tcgen05.OperandSource.SMEM, K_MAJOR, K_MAJOR))
print(umma)
for name in ("thr_id", "tv_layout_A", "tv_layout_B", "tv_layout_C"):
    print(f"{name:12} {getattr(umma, name)}")
assert str(umma.thr_id) == "1:0"
assert str(umma.tv_layout_A) == "(1,(128,16)):(128,(1,128))"
assert str(umma.tv_layout_B) == "(1,(256,16)):(256,(1,256))"
assert str(umma.tv_layout_C) == "(1,(128,256)):(128,(1,128))"

# %% [markdown]
# `thr_id` is `1:0`: the UMMA's atom has **one** "thread", and that thread is the CTA (in the kernel, one
# elected thread issues the instruction for all of them). Its TV layouts say the same: one thread, and a value
# mode that is the whole 128 x 16 of A, the whole 256 x 16 of B and the whole 128 x 256 of C (column-major,
# offset m + 128 n). Chapter 08's wgmma spread C over the 128 threads of a warpgroup (section 3.6);
# the UMMA's C belongs to no thread at all: it is in TMEM, and which thread reads which row is decided later, by
# the copy out of TMEM (section 2.3). `get_slice(0).partition_C` of the tile's coordinates gives the one
# slice there is, the whole tile:

# %%
whole = umma.get_slice(0).partition_C(cute.make_identity_tensor((128, 256)))
print(whole)
assert str(whole) == "tensor<(0,0) o ((128,256),1,1):((1@0,1@1),0,0)>"
assert umma.op.shape_mnk == (128, 256, 16)

# %% [markdown]
# ## 2 · Build it up
#
# ### 2.1 · The accumulator in TMEM, and the columns to allocate
#
# `tiled_mma.partition_shape_C((M, N))` is the shape of one CTA's share of C, and
# `tiled_mma.make_fragment_C(shape)` makes the accumulator tensor: for tcgen05 a tensor in tensor memory (a
# `tmem` pointer), not registers. Its layout is TMEM's addressing: a lane is 65536 columns-worth apart (the
# address keeps the lane in its upper 16 bits), a column is 1.

# %%
accumulator = umma.make_fragment_C(umma.partition_shape_C((128, 256)))
print(accumulator)
assert umma.partition_shape_C((128, 256)) == ((128, 256), 1, 1)
assert str(accumulator) == "tensor<ptr<f32, tmem, align<1>> o ((128,256),1,1):((65536,1),0,0)>"

# %% [markdown]
# Row m of C is lane m, column n is TMEM column n: 256 of the SM's 512 columns. `tcgen05.alloc` hands out
# columns in powers of two, at least 32 and at most 512 (PTX ISA, tcgen05.alloc: "The number of columns must be
# a power of 2. The operand nCols must be within the range [32, 512]"; `memory.get_num_tmem_alloc_cols`, below,
# enforces the same). `tcgen05.find_tmem_tensor_col_offset(t)` is the number of columns a TMEM
# tensor spans, and `memory.get_num_tmem_alloc_cols(t or [t, ...])` the columns to allocate for one or
# several tensors: their columns summed, rounded up to a power of two of at least 32, refused over 512. `blackwell_helpers.make_trivial_tiled_mma(a_dtype, b_dtype, a_major, b_major, acc_dtype, cta_group,
# (M, N))` picks the tcgen05 op for the types and makes its TiledMMA, the instruction shape being the tile.
# Three tiles, with an fp16 accumulator for the last (N = 96 spans 96 columns and allocates 128; 16 allocates
# the minimum, 32):

# %%
for bm, bn, acc_dtype in ((128, 96, cute.Float32), (64, 16, cute.Float32), (128, 256, cute.Float16)):
    mma = blackwell_helpers.make_trivial_tiled_mma(cute.Float16, cute.Float16, K_MAJOR, K_MAJOR, acc_dtype,
                                                   tcgen05.CtaGroup.ONE, (bm, bn))
    acc = mma.make_fragment_C(mma.partition_shape_C((bm, bn)))
    print(f"{bm}x{bn} {acc_dtype}: {acc.layout}  spans {tcgen05.find_tmem_tensor_col_offset(acc)} columns,"
          f" allocate {memory.get_num_tmem_alloc_cols(acc)}")
two = memory.get_num_tmem_alloc_cols([accumulator, accumulator])
print("two 128x256 accumulators:", two)
try:
    memory.get_num_tmem_alloc_cols([accumulator] * 3)
except ValueError as refused:
    print("three:", refused)
else:
    raise AssertionError("768 TMEM columns were accepted")
assert two == 512

# %% [markdown]
# Read the three lines: N = 96 spans 96 columns and allocates 128; the M = 64 tile uses lanes in four groups
# of 16 (`(16,4):(65536,2097152)`: lanes 0-15, 32-47, 64-79, 96-111) and still one column per value; in CuTeDSL
# 4.8.1's layout an fp16 accumulator is **not** packed two to a column (stride 2 in 16-bit units: one value per
# 32-bit column), so it takes as many columns as fp32. Two 128 x 256 accumulators fill the SM's 512 columns (a
# persistent kernel keeps two, one being computed while the epilogue drains the other); a third does not fit
# (CuTeDSL rounds the 768 columns up to a power of two, 1024, before it checks, hence the number in its message).

# %%
m64 = blackwell_helpers.make_trivial_tiled_mma(cute.Float16, cute.Float16, K_MAJOR, K_MAJOR, cute.Float32,
                                               tcgen05.CtaGroup.ONE, (64, 16))
m64_acc = m64.make_fragment_C(m64.partition_shape_C((64, 16)))
f16 = blackwell_helpers.make_trivial_tiled_mma(cute.Float16, cute.Float16, K_MAJOR, K_MAJOR, cute.Float16,
                                               tcgen05.CtaGroup.ONE, (128, 256))
f16_acc = f16.make_fragment_C(f16.partition_shape_C((128, 256)))
assert str(m64_acc.layout) == "(((16,4),16),1,1):(((65536,2097152),1),0,0)"
assert str(cute.get(m64_acc.layout, mode=[0, 0])) == "(16,4):(65536,2097152)"       # the rows: lanes
assert memory.get_num_tmem_alloc_cols(m64_acc) == 32
assert str(f16_acc.layout) == "((128,256),1,1):((131072,2),0,0)"
assert tcgen05.find_tmem_tensor_col_offset(f16_acc) == 256

# %% [markdown]
# ### 2.2 · The shared-memory layouts of A and B
#
# The UMMA reads A and B from shared memory through descriptors, so, as for wgmma, the layout must be one of
# the swizzled atoms. `blackwell_helpers.make_smem_layout_a(tiled_mma, (M, N, K), dtype, stages)` and
# `make_smem_layout_b` choose the atom from the majors and the contiguous extent (chapter 08's rule) and tile it
# to the MMA's partition of the k-tile, with a stage mode last. For the 128 x 256 tile, a 64-element (128-byte)
# fp16 k-tile and 3 stages:

# %%
sA = blackwell_helpers.make_smem_layout_a(umma, (128, 256, 64), cute.Float16, 3)
sB = blackwell_helpers.make_smem_layout_b(umma, (128, 256, 64), cute.Float16, 3)
print("sA:", sA)
print("sB:", sB)
assert str(sA) == "S<3,4,3> o 0 o ((128,16),1,4,3):((64,1),0,16,8192)"
assert str(sB) == "S<3,4,3> o 0 o ((256,16),1,4,3):((64,1),0,16,16384)"

# %% [markdown]
# The modes are the MMA's: `(128,16)` is one UMMA's A (128 rows, K = 16, rows 64 elements = 128 bytes apart:
# the `S<3,4,3>` 128-byte swizzle), `1` the MMAs along M, `4` the UMMAs along the k-tile (64 / 16, each 16
# elements further) and `3` the stages (8192 elements = 16 KiB apart). chapter 08's K-major tile of the same
# atom was written `((8,16),(64,1),(1,4))`; here the first mode is already what one instruction reads.
#
# ### 2.3 · From TMEM to registers
#
# The epilogue copies the accumulator out of TMEM in column strips. `blackwell_helpers.
# compute_epilogue_tile_shape((M, N, K), use_2cta, layout_d, d_dtype)` picks the strip (`LayoutEnum.ROW_MAJOR`
# says D is row-major), `blackwell_helpers.get_tmem_load_op(...)` the `tcgen05.ld` copy atom for it,
# `cute.flat_divide(acc, tile)` cuts the accumulator into strips, and `tcgen05.make_tmem_copy(atom, strip)`
# makes the TiledCopy that four warps (128 threads) use. The atom's `layout_src_tv` and `layout_dst_tv` and the
# TiledCopy's `tiler_mn` and `layout_tv_tiled` are chapter 05's:

# %%
epi_tile = blackwell_helpers.compute_epilogue_tile_shape((128, 256, 64), False, LayoutEnum.ROW_MAJOR, cute.Float16)
load = blackwell_helpers.get_tmem_load_op((128, 256, 64), LayoutEnum.ROW_MAJOR, cute.Float16, cute.Float32,
                                          epi_tile, False)
strips = cute.flat_divide(accumulator[((None, None), 0, 0)], epi_tile)
tmem_copy = tcgen05.make_tmem_copy(load, strips[(None, None, 0, 0)])
print("epilogue tile:", [str(t) for t in epi_tile])
print(load.op)
print("strips:", strips)
print("atom's TV layouts: source", load.layout_src_tv, " destination", load.layout_dst_tv)
print("tiler:", [str(t) for t in tmem_copy.tiler_mn], " TV layout:", tmem_copy.layout_tv_tiled)
assert [str(t) for t in epi_tile] == ["128:1", "32:1"]
assert str(load.op) == "tcgen05 Ld32x32b Copy Operation\n  number of repetitions = 32"
assert str(strips) == "tensor<ptr<f32, tmem, align<1>> o (128,32,1,8):(65536,1,0,32)>"
assert str(load.layout_src_tv) == "(32,1024):(0,1)" and str(load.layout_dst_tv) == "(32,32):(32,1)"
assert [str(t) for t in tmem_copy.tiler_mn] == ["(4,32):(32,1)", "32:1"]
assert str(tmem_copy.layout_tv_tiled) == "((32,4),(32,32)):((0,1),(128,4))"
assert str(cute.get(tmem_copy.layout_tv_tiled, mode=[0])) == "(32,4):(0,1)"           # the threads: 4 warps
assert str(cute.get(tmem_copy.layout_tv_tiled, mode=[1])) == "(32,32):(128,4)"        # the values: 32 x 32

# %% [markdown]
# `Ld32x32b` with 32 repetitions: each of a warp's 32 threads reads one lane, 32 bits per repetition, 32
# repetitions: 32 fp32 columns of its own row. The strip is 128 x 32 and there are 8 of them along N. A warp
# reaches only its own quarter of TMEM's lanes: warp w reads lanes 32 (w % 4) to 32 (w % 4) + 31 (PTX ISA,
# tcgen05 data movement: each warp of a warpgroup reaches its own 32 lanes). The layouts printed above say how
# the copy is built on that. The atom's source TV layout `(32,1024):(0,1)` gives the warp's 32 threads stride 0:
# a TMEM load is warp-collective, and every thread names the same 1024 values, the 32 lanes x 32 columns the
# warp reads; its destination TV layout `(32,32):(32,1)` gives each thread 32 of them, its own lane's.
# `layout_tv_tiled` is the TiledCopy's source side: its thread mode `(32,4):(0,1)` keeps stride 0 over a warp's
# threads and steps 1 per warp, and the warp's 32 lanes are in the value mode `(32,32):(128,4)`: its stride-4
# mode walks the tiler's first mode `(4,32):(32,1)`, a permutation of the 128 rows that sends warp w's j-th
# lane to row 32 w + j. `partition_D` of the strip's coordinates for threads 0, 37 and 100 (warps 0, 1, 3)
# shows the rows that come out:

# %%
for thread in (0, 37, 100):
    print(thread, tmem_copy.get_slice(thread).partition_D(cute.make_identity_tensor((128, 32))))
mine = tmem_copy.get_slice(37).partition_D(cute.make_identity_tensor((128, 32)))
assert str(mine) == "tensor<(37,0) o ((32,1),1,1):((1@1,0),0,0)>"
assert str(tmem_copy.get_slice(37).partition_S(strips).layout) == "(((32,32),1),1,1,1,8):(((1,65536),0),0,0,0,32)"

# %% [markdown]
# Thread 37 holds row 37, columns 0-31 of each strip: a whole row per thread, where wgmma gave a thread two
# rows (r and r + 8) with N/4 values in each, in pairs of adjacent columns. Its `partition_S` of all the
# strips is `(((32,32),1),1,1,1,8)`: the source of a TMEM load is warp-wide, so the inner `(32,32)` with
# strides `(1,65536)` is 32 columns by the warp's 32 lanes, and then 8 strips 32 columns apart; the thread's own
# share is `partition_D`'s 32 values.
#
# ### 2.4 · A CTA pair: CtaGroup.TWO
#
# With `CtaGroup.TWO` the two CTAs of a cluster pair run one MMA; the instruction shape is the pair's. A
# 256 x 128 tile:

# %%
pair = blackwell_helpers.make_trivial_tiled_mma(cute.Float16, cute.Float16, K_MAJOR, K_MAJOR, cute.Float32,
                                                tcgen05.CtaGroup.TWO, (256, 128))
print("instruction:", pair.op.shape_mnk)
for name in ("thr_id", "tv_layout_A", "tv_layout_B", "tv_layout_C"):
    print(f"{name:12} {getattr(pair, name)}")
pair_acc = pair.make_fragment_C(pair.partition_shape_C((256, 128)))
print("each CTA's accumulator:", pair_acc.layout)
print("sA:", blackwell_helpers.make_smem_layout_a(pair, (256, 128, 64), cute.Float16, 3))
print("sB:", blackwell_helpers.make_smem_layout_b(pair, (256, 128, 64), cute.Float16, 3))
assert pair.op.shape_mnk == (256, 128, 16) and str(pair.thr_id) == "2:1"
assert str(pair.tv_layout_A) == "(2,(128,16)):(128,(1,256))"
assert str(pair.tv_layout_B) == "(2,(64,16)):(64,(1,128))"
assert str(pair.tv_layout_C) == "(2,(128,128)):(128,(1,256))"
assert str(pair_acc.layout) == "((128,128),1,1):((65536,1),0,0)"
assert str(blackwell_helpers.make_smem_layout_a(pair, (256, 128, 64), cute.Float16, 3)) == \
    "S<3,4,3> o 0 o ((128,16),1,4,3):((64,1),0,16,8192)"
assert str(blackwell_helpers.make_smem_layout_b(pair, (256, 128, 64), cute.Float16, 3)) == \
    "S<3,4,3> o 0 o ((64,16),1,4,3):((64,1),0,16,4096)"

# %% [markdown]
# `thr_id` is `2:1`: two "threads", each a CTA. A's TV layout gives CTA 0 rows 0-127 and CTA 1 rows 128-255
# (thread stride 128); B's gives each CTA 64 of the 128 rows of B (its N), C's gives each CTA 128 rows of C by
# all 128 columns: a 128 x 128 accumulator in each CTA's TMEM (128 columns). So each CTA loads and keeps only
# half of A's tile and half of B's (sA 128 rows, sB 64), and the tensor cores of the pair read both halves.
#
# A pair's 128-row MMA leaves only 64 rows of C in each CTA; TMEM then puts the two halves of N in lanes 0-63
# and 64-127, so the accumulator spans N / 2 columns:

# %%
small_pair = blackwell_helpers.make_trivial_tiled_mma(cute.Float16, cute.Float16, K_MAJOR, K_MAJOR, cute.Float32,
                                                      tcgen05.CtaGroup.TWO, (128, 96))
small_acc = small_pair.make_fragment_C(small_pair.partition_shape_C((128, 96)))
print(small_acc.layout, " spans", tcgen05.find_tmem_tensor_col_offset(small_acc), "columns")
assert str(small_acc.layout) == "((64,(48,2)),1,1):((65536,(1,4194304)),0,0)"
assert str(cute.get(small_acc.layout, mode=[0, 1])) == "(48,2):(1,4194304)"            # the columns: N in two halves
assert tcgen05.find_tmem_tensor_col_offset(small_acc) == 48

# %% [markdown]
# `(48,2):(1,4194304)`: 48 columns, then the second half of N 64 lanes further (4194304 = 64 x 65536).
#
# **Elsewhere you may read** `cutlass.utils.blackwell_helpers.get_num_tmem_alloc_cols` and
# `cutlass.utils.LayoutEnum`: both still work in CuTeDSL 4.8.1 but warn
# that they are deprecated, naming `cutlass.memory.get_num_tmem_alloc_cols` and `cutlass.tensor_utils.LayoutEnum`,
# the names this chapter uses.
#
# ## 3 · Compiled for real
#
# `benchmarks/kernels/blackwell_gemm.py` is the smallest whole Blackwell GEMM the course could write with the
# pieces above: D = A B^T in fp16 with fp32 accumulators, one CTA of four warps per 128 x 128 tile of D, two
# stages of 64-wide k-tiles. Warp 0 allocates 128 TMEM columns (`cute.arch.alloc_tmem`; the PTX ISA says "When
# .cta_group::1 is specified, one warp from the CTA must perform the allocation and de-allocation": this kernel
# has warp 0 do both, and cutekit's simulator asks for the same warp). For each k-tile it then waits, from the third k-tile on, for its stage to be free, loads A's and B's tiles with TMA as in chapter 08, waits for them and issues the
# four 128 x 128 x 16 UMMAs with `cute.gemm` (the whole warp calls it; CuTeDSL has one thread issue the
# instruction, and its documentation says not to wrap the call in `elect_one`);
# `tcgen05.commit(barrier)` then makes the stage's "empty" mbarrier arrive once those MMAs have finished
# reading it. A last commit signals "the accumulator is ready"; all four warps wait for it and copy the
# accumulator out with section 2.3's 32x32b load, 32 columns at a time, each load followed by
# `cute.arch.fence_view_async_tmem_load()` (PTX `tcgen05.wait::ld`, which section 4 explains); warp 0 frees the
# TMEM (`cute.arch.dealloc_tmem`). There is no warp specialisation and no cluster: loads and MMAs overlap only
# through the two stages. The file keeps warp 0's loop (`load_and_multiply`) and the epilogue (`epilogue`) as
# functions of their own, which section 4 prints; exercises 3 and 4 write variants of them.
#
# `compile_to_ptx(..., arch="sm_100a")` compiles its host function `gemm_tn` for fake fp16 tensors with real
# CuTeDSL on this CPU (in a subprocess) and counts the PTX opcodes; where CuTeDSL is not installed (a Mac) the
# cell says so and prints nothing else. Section 4 runs the same kernel on cutekit's simulator; no Blackwell GPU
# is lent to the course, so it has not run on one.
#
# **Fences around thread synchronisation.** For tcgen05 operations in different threads, the PTX ISA has two
# fences: "The tcgen05.fence::* instructions compose with execution ordering instructions across a thread scope
# and provide ordering between tcgen05 instructions across the same scope", `tcgen05.fence::before_thread_sync`
# before the synchronisation and `tcgen05.fence::after_thread_sync` after it; its pattern for an MMA in one
# thread and a TMEM load in another is "tcgen05.mma; tcgen05.commit" in the first and "mbarrier.try_wait;
# tcgen05.fence::after_thread_sync; tcgen05.ld" in the second. The kernel follows those patterns: the fences go
# around its two block barriers and after the wait for "the accumulator is ready". CuTeDSL 4.8.1 has no
# `cute.arch` call for them: the kernel uses `cutlass.experimental.primitives.tcgen05_fence`, an experimental
# name that may change. NVIDIA's own code leaves them out: its CuTeDSL Blackwell `dense_gemm`, compiled here
# for sm_100a (one CTA, 128 x 128 tiles, with and without TMA stores; 2026-11-28), has no `tcgen05.fence` in its
# PTX, and CUTLASS's C++ headers (`include/`, August 2026) emit none. So the course does not require them: the
# simulator, which runs each tcgen05 operation when it is issued, accepts a kernel without them, and no PTX
# criterion looks for them. Exercise 4 and the capstone may keep them or leave them out.

# %%
import os
import pathlib
import sys

from cutekit.checks import compile_to_ptx
from cutekit.checks.cutedsl import FakeTensor

# the notebook runs in course/ (or solutions/); the kernel lives in the repository's benchmarks/ package,
# and compile_to_ptx compiles it in a subprocess, which needs the same path
repository = str(pathlib.Path.cwd().parent)
sys.path.insert(0, repository)
os.environ["PYTHONPATH"] = os.pathsep.join([repository] + [p for p in [os.environ.get("PYTHONPATH")] if p])

ptx = compile_to_ptx("benchmarks.kernels.blackwell_gemm", "gemm_tn", (FakeTensor("Float16", 2, 64),) * 3,
                     arch="sm_100a")
if ptx.available:
    assert ptx.ok, ptx.error
    for opcode in ("tcgen05.alloc", "tcgen05.mma.cta_group", "tcgen05.commit", "tcgen05.ld.sync.aligned.32x32b.x32",
                   "tcgen05.wait", "tcgen05.dealloc", "cp.async.bulk.tensor.2d.shared", "mbarrier.arrive.expect_tx",
                   "mbarrier.init", "wgmma", "mma.sync", "ldmatrix"):
        print(f"{opcode:40} {ptx.count(opcode)}")
    assert ptx.count("tcgen05.alloc") == ptx.count("tcgen05.dealloc") == 1
    assert ptx.count("tcgen05.mma.cta_group") == 12 and ptx.count("tcgen05.commit") == 4
    assert ptx.count("tcgen05.ld.sync.aligned.32x32b.x32") == ptx.count("tcgen05.wait") == 4
    assert ptx.count("cp.async.bulk.tensor.2d.shared") == 6 and ptx.count("mbarrier.init") == 5
    assert ptx.count("wgmma") == ptx.count("mma.sync") == ptx.count("ldmatrix") == 0 and ptx.local_memory == 0
    print(next(line.strip() for line in ptx.ptx.splitlines() if "tcgen05.mma" in line))
else:
    print(ptx.error)

# %% [markdown]
# Read it against the kernel: one `tcgen05.alloc` and one `tcgen05.dealloc`; the compiler unrolled the k-loop
# by two (a loop of two bodies) and added one more body for an odd number of k-tiles, so the body appears three
# times in the PTX, each with 2 TMA loads, one `expect_tx` and 4 UMMAs
# (`tcgen05.mma.cta_group::1.kind::f16`, 64 / 16 = 4 per k-tile): 12 UMMAs, 6 loads, and 3 + 1 commits with
# the final one; 5 mbarriers (full and empty for 2 stages, and the accumulator's); 4 `tcgen05.ld` of 32x32b.x32
# (the 4 strips of 32 columns), each followed by its `tcgen05.wait`. No `wgmma`, no `mma.sync`, no `ldmatrix`,
# no local memory. The UMMA's operands, in the PTX ISA's order: the accumulator's TMEM address, the 64-bit
# shared-memory descriptors of A and of B, the 32-bit instruction descriptor (types, shape, majors), a mask
# of output lanes to leave alone, and a predicate: accumulate into D or overwrite it (`tcgen05.Field.ACCUMULATE`
# sets it, False for the first k-block).
#
# ## 4 · Run it: the kernel on the simulator
#
# cutekit's simulator runs the kernel's own source on the CPU: its four warps as 128 threads per CTA, TMA copies
# and mbarriers as in chapter 08, and the tcgen05 instructions on a model of tensor memory (128 lanes x 512
# columns per CTA, its allocator, the MMA issued once per calling warp, `tcgen05.commit`, TMEM loads). As it
# runs it checks what a GPU would leave undefined (a TMEM read before the commit that covers its MMA, TMEM
# written while a load of it has not been waited for, a warp outside its quarter of the lanes, a commit from every
# lane, a wait that can never return) and names the line.
# `cutekit.source.kernel_lines(module, first, last)` prints the kernel's lines from the one containing `first`
# up to the next containing `last`. Warp 0's main loop, `load_and_multiply`:

# %%
from cutekit.source import kernel_lines

print(kernel_lines("benchmarks.kernels.blackwell_gemm", "    tiled_mma.set(tcgen05.Field.ACCUMULATE, False)",
                   "@cute.jit"))

# %% [markdown]
# Step by step, for one k-tile: the stage is `k_tile % STAGES`; from the third k-tile on, the warp waits on the
# stage's **empty** barrier for the commit of the MMAs that read it one lap earlier, that stage's release number
# `k_tile // STAGES - 1` (counting from 0), so for parity `(k_tile // STAGES - 1) % 2`; one elected lane announces
# the stage's bytes on its **full** barrier, and the two TMA copies deliver them; the warp waits on full for
# parity `(k_tile // STAGES) % 2`, the stage's fill number `k_tile // STAGES`. Then
# the 4 UMMAs, one per 16-wide k-block of the stage: the very first of the tile with `ACCUMULATE` false
# (overwrite the TMEM), every later one true. `tcgen05.commit(empty + stage)` makes the empty barrier arrive
# once those UMMAs have finished reading the stage; the last commit, after the loop, is "the accumulator is
# ready". The epilogue, run by all four warps, makes section 2.3's load directly: `tcgen05.Ld32x32bOp(
# tcgen05.Repetition.x32)` is the 32x32b TMEM load with 32 repetitions; at the end of the kernel
# `cute.arch.relinquish_tmem_alloc_permit()` gives up the CTA's right to allocate TMEM again, before
# `cute.arch.dealloc_tmem` frees the columns:

# %%
print(kernel_lines("benchmarks.kernels.blackwell_gemm", "    cute.arch.mbarrier_wait(accumulator_ready, 0)",
                   "@cute.jit"))
print("...")
print(kernel_lines("benchmarks.kernels.blackwell_gemm", "    tcgen05_fence(\"before_thread_sync\")      "
                   "                  # this thread's", "@cute.jit"))

# %% [markdown]
# Every thread waits for phase 0 of the accumulator barrier (it completes once, at the last commit), then takes
# the 128 x 128 accumulator in 4 strips of 32 columns: one `tcgen05.ld` 32x32b.x32 per strip (thread t reads
# lane t, its row), `fence_view_async_tmem_load` (`tcgen05.wait::ld`) after it, the conversion to fp16 and the
# store to D. After the block barrier warp 0 gives the columns back. `simulate_kernel(a, b)` from
# `cutekit.checks.blackwell_kernels` runs the kernel on the simulator for fp16 NumPy arrays A (M, K) and B (N, K) and
# returns D; here 2 x 2 tiles of 128 x 128 and 3 k-tiles on the 2 stages (the second lap waits on empty), against
# torch in fp32:

# %%
import time

import numpy
import torch

from cutekit.checks.blackwell_kernels import simulate_kernel

rng = numpy.random.default_rng(9)
a_host = rng.standard_normal((256, 192)).astype(numpy.float16)
b_host = rng.standard_normal((256, 192)).astype(numpy.float16)
started = time.perf_counter()
d_host = simulate_kernel(a_host, b_host)
seconds = time.perf_counter() - started
reference = torch.from_numpy(a_host).float() @ torch.from_numpy(b_host).float().T
error = (torch.from_numpy(d_host).float() - reference).abs().max().item()
largest = reference.abs().max().item()
print(f"simulated: 256 x 256 x 192 (4 tiles of 128 x 128, 3 k-tiles on 2 stages) in {seconds:.1f} s, largest "
      f"difference from fp32 torch {error:.3f}, largest |D| {largest:.1f}")
assert error < 0.06 and error <= largest * 2 ** -11

# %% [markdown]
# The difference is at most half an fp16 step of the largest |D| (fp16 keeps 11 significant bits), the rounding
# of D to fp16. This is the simulator, not a GPU: it shows the arithmetic is right, and it checks the order of
# the steps it models, stopping with the line at a TMEM load without the wait for the accumulator's commit, a
# wait on the wrong parity (it returns too early, or never), a stage refilled before the MMAs that read it have
# committed, a `tcgen05.commit` executed by every lane of a warp, TMEM columns not allocated or never freed, a
# warp outside its quarter of TMEM's lanes, or an MMA into TMEM that a load has not finished reading. It does not
# check the `tcgen05.fence::before_thread_sync` / `after_thread_sync` fences: it runs each tcgen05 operation
# when it is issued, so a kernel without them runs the same (section 3's PTX shows where this kernel has them).
# It says nothing of speed.
#
# A mistake planted in the kernel: the epilogue's wait for "the accumulator is ready" left out (`edit` removes one
# line of the kernel's source before it runs). On a GPU the first `tcgen05.ld` may read whatever the UMMAs have
# written so far. The simulator stops at the first load: its message, printed whole, says the load reads TMEM
# that no MMA has written yet, so whatever the thread waited for came too early (no wait, or a wait on the
# wrong phase), and says to wait on the barrier the MMAs' last `tcgen05.commit` arrives on
# (`cutekit.sim.KernelError` is the simulator's error for a kernel's mistake):

# %%
from cutekit.sim import KernelError

try:
    simulate_kernel(a_host, b_host, edit=("    cute.arch.mbarrier_wait(accumulator_ready, 0)\n", ""))
except KernelError as stopped:
    print(stopped)
    assert "read before the MMA's commit completed" in str(stopped)
    assert "reads TMEM that no MMA" in str(stopped)
    assert "Wait on the barrier the MMAs' last tcgen05.commit arrives on" in str(stopped)
else:
    raise AssertionError("the simulator ran the mistaken kernel to the end")

# %% [markdown]
# **What `tcgen05.wait::ld` orders.** A `tcgen05.ld` runs asynchronously, but its registers need no wait: the PTX
# ISA (9.7.16.6.4.5, register dependencies) says "For tcgen05.ld, an intra-thread ordering through true register
# dependency will be respected regardless of the presence or absence of other forms of synchronization", so the
# conversion may use the values right after the load. What the registers do not order is the load's read of TMEM:
# "This form of register dependency does not imply any other form of ordering. [...] To enforce such memory
# orderings and avoiding anti-dependency hazards around tcgen05.ld, tcgen05.wait::ld must be used."
# `tcgen05.wait::ld` "causes the executing thread to block until all prior tcgen05.ld [...] operations issued by the
# executing thread have completed". So a kernel waits for its loads before the columns they read are written again
# or given away: before a `tcgen05.st` or the next tile's MMA writes them (in a persistent kernel, before the
# epilogue hands the accumulator back to the MMA warp) and before `tcgen05.dealloc` frees them. One wait after the
# last load covers every load before it; this kernel waits after each. CuTeDSL inserts no wait of its own (exercise
# 4's epilogue compiled for sm_100a without the call has no `tcgen05.wait` in its PTX). CUTLASS's C++ epilogue
# `sm100_epilogue_nosmem.hpp` calls `fence_view_async_tmem_load()` right before it releases the accumulator;
# NVIDIA's CuTeDSL `dense_gemm` (the compile section 3 cites: one `tcgen05.ld` of 32x32b.x128, or four of .x32 with
# TMA stores, and no `tcgen05.wait`) uses the registers and frees the TMEM without one. The course keeps the ISA's
# rule: exercise 4 and the capstone wait for their loads before the TMEM is freed, and their PTX criteria check it.
# The simulator refuses an MMA or a `tcgen05.st` over TMEM a load has not been waited for, and accepts registers
# used before the wait; it does not check the dealloc.
#
# **On a B200.** Whoever has an sm_100a GPU (B200, GB200; a B300 is sm_103a) runs the kernel from the
# repository's root: `python benchmarks/blackwell_gemm_bench.py` checks it against torch on a 4096^3 fp16 GEMM
# and times it against `torch.matmul` with the same timer, and `python -m pytest tests/gpu/test_blackwell_gemm.py`
# compares it with a float64 product on several shapes; on any other machine each says in one line that the
# kernel needs sm_100a. Neither has run yet, so the course has no Blackwell timing.
#
# ## Exercises
#
# Exercises 1 and 2 are host code with cutekit's `cute`; where CuTeDSL is installed the check also runs your
# function under real CuTeDSL traced for sm_100a and compares. Exercises 3 and 4 are pieces of the kernel
# itself, each in a variant section 4 did not run.
#
# ### Exercise 1 · How many accumulators fit in TMEM
#
# Section 2.1 counted the columns a given number of accumulators takes. Turn the question round: a persistent
# kernel keeps several accumulators (stages) in TMEM, so that the MMAs of the next tile run while the epilogue
# drains the last one, and a CTA may keep other things in the same allocation (a block-scaled MMA, for one,
# reads its scale factors from TMEM). Write `accumulator_stages(bm, bn, ab_dtype, acc_dtype, cta_group,
# other_columns)`: a dict with `"instruction"`, the (M, N, K) of the one tcgen05 MMA that computes a `bm x bn`
# tile (with `CtaGroup.TWO`, `bm` is the pair's rows), and `"stages"`, the most accumulators of that tile each
# CTA can keep in TMEM at once, in one allocation with the `other_columns` columns it holds there for something
# else. A and B are K-major, of `ab_dtype` (`Float16`, `BFloat16`, `TFloat32` or `Int8`). Raise an error where
# no tcgen05 MMA computes the tile or not one accumulator fits. `accumulator_stages(128, 96, Float16, Float32,
# CtaGroup.ONE, 64)` is `{'instruction': (128, 96, 16), 'stages': 4}`.


# %%
def accumulator_stages(bm, bn, ab_dtype, acc_dtype, cta_group, other_columns):
    # YOUR CODE HERE
    return None


check("ch09.accumulator_stages", accumulator_stages)

# %% [markdown]
# ### Exercise 2 · How many stages of A and B fit
#
# Section 2.2 built the staged layouts for a given number of stages; a kernel first has to choose that number.
# Write `ab_stages(bm, bn, bk, dtype, cta_group, reserved_bytes)`: a dict with `"A"` and `"B"`, the bytes of
# one stage of A and of one stage of B that each CTA holds in shared memory for a `bm x bn` MMA tile (the
# pair's, with `CtaGroup.TWO`) and a `bk`-deep k-tile of `dtype` (`Float16`, `BFloat16`, `TFloat32` or `Int8`,
# whose accumulator is `Int32`), A and B K-major; and `"stages"`, the most such stages that fit in the 227 KiB
# (232448 bytes) of shared memory one CTA may use on sm_100, as on sm_90, beside `reserved_bytes` held once
# for other things (the epilogue's buffer, the mbarriers). Raise an error where not one stage fits.
# `cute.size_in_bytes(dtype, layout)` is the number of bytes a layout of `dtype` elements spans.
# `ab_stages(256, 96, 64, Float16, CtaGroup.TWO, 16384)` is `{'A': 16384, 'B': 6144, 'stages': 9}`.

# %%
def ab_stages(bm, bn, bk, dtype, cta_group, reserved_bytes):
    # YOUR CODE HERE
    return None


check("ch09.ab_stages", ab_stages)

# %% [markdown]
# ### Exercise 3 · The MMA warp's loop, with a producer warp and 3 stages
#
# In the chapter's kernel one warp both loads and multiplies, so a k-tile's UMMAs wait for its own copies.
# Split the roles: warp 1 runs the producer, `produce` in the kernel's file (for each k-tile: wait on `empty + s`
# until the stage is free, parity 1 for its first lap so a fresh barrier passes; announce the bytes on `full + s`;
# issue the two TMA copies), and warp 0 runs only the MMAs, on **3** stages. Write warp 0's loop,
# `mma_loop(tiled_mma, accumulator, tCrA, tCrB, full, empty, accumulator_ready, k_tiles, stages)`: for each
# k-tile, wait on its stage's full barrier, issue the UMMAs of the stage's k-blocks (`tCrA[None, None, k_block,
# s]`, `cute.size(tCrA, mode=[2])` of them) with ACCUMULATE false for the very first k-block of the tile only, and
# release the stage with a commit on `empty + s`; after the loop, a commit on `accumulator_ready`. Where the
# chapter's loop works its stage and parity out from the k-tile index, carry them round this one, as CuTeDSL's
# pipeline states do: a stage index and a phase, both `cutlass.Int32(0)` before the loop (run-time values, so
# the loop may change them), the stage index one further after each k-tile, and back to 0 with the phase
# flipped when it reaches `stages` (working both out from the index also passes). `stages` is a Python int; `k_tiles` is a run-time value, so its loop is
# `cutlass.range`, while `cutlass.range_constexpr` unrolls a loop over compile-time numbers (chapter 08).
# `cute.arch.mbarrier_wait(barrier, parity)` waits for the phase with that parity (chapter 08, section 3.4).
#
# The check runs the kernel (`PRODUCER_WARP=True`, `STAGES=3`) with your function as warp 0's loop on the
# simulator, on a problem with fewer k-tiles than stages and on one of 7 k-tiles (twice round the ring and one
# more), and compares D with A B^T; it compiles the kernel with your loop for sm_100a where CuTeDSL is installed
# and reads the PTX (4 `tcgen05.mma` per k-tile, every `tcgen05.commit` behind `elect.sync`, a wait per k-tile,
# the final commit, no `wgmma` or `mma.sync`); on an sm_100 GPU it would run a 4096^3 GEMM and time it.

# %%
import cutekit

cutekit.use("auto")     # `import cutlass`: real CuTeDSL on a GPU that has it, else the simulator
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import tcgen05


def mma_loop(tiled_mma, accumulator, tCrA, tCrB, full, empty, accumulator_ready, k_tiles, stages):
    # YOUR CODE HERE
    return None


check("ch09.mma_warp_loop", mma_loop)

# %% [markdown]
# ### Exercise 4 · The epilogue of D = alpha A B^T, 16 columns at a time
#
# Write the epilogue of a kernel that computes D = alpha A B^T on a 128 x **256** tile, in strips of **16** columns
# (section 4's are 32): `scaled_epilogue(accumulator, gD, accumulator_ready, thread, alpha)`, run by all 128 threads
# (`thread` is the thread's index in the CTA, `alpha` a Python float, 0.5 in the check). Wait for the accumulator
# barrier (then, if you follow the PTX ISA's pattern as section 4's epilogue does, order the loads after that wait
# with `primitives.tcgen05_fence("after_thread_sync")`; the cell imports `cutlass.experimental.primitives` as
# `primitives`); cut the accumulator (`accumulator[((None, None), 0, 0)]`, 128 x 256 in TMEM) and `gD` (the tile of
# D, fp16) into strips with `cute.flat_divide`; make the copy atom for a 32x32b load of 16 columns
# (`tcgen05.Ld32x32bOp(tcgen05.Repetition.x16)` with `cute.make_copy_atom(op, cutlass.Float32)`) and the TMEM copy
# for one strip (`tcgen05.make_tmem_copy`); take the thread's slice (`get_slice`), `partition_S` of the TMEM strips
# and `partition_D` of D's. Then for each strip: `cute.copy` it into a register tensor
# (`cute.make_rmem_tensor(shape, dtype)`), scale the fp32 values by alpha (`.load()` gives them as a vector,
# `* alpha` scales it), convert to fp16 (`.to(cutlass.Float16)`, `.store(...)` into a second register tensor) and copy
# to D (`cute.autovec_copy`). The kernel frees the TMEM after your epilogue, so wait for the loads
# (`cute.arch.fence_view_async_tmem_load()`) before it returns: after each load, as section 4's epilogue does, or
# once after the last.
#
# The check runs the kernel (`BN=256`, `ALPHA=0.5`) with your epilogue on the simulator, compares D with
# alpha A B^T and names what is wrong (rows or columns never written, a warp outside its lanes, alpha missing);
# where CuTeDSL is installed it compiles the kernel for sm_100a and reads the PTX (16 `tcgen05.ld` of
# 32x32b.x16, a `tcgen05.wait::ld` after the last of them, the accumulator wait, the scale in fp32); on an
# sm_100 GPU it would run a 4096^3 GEMM and time it.

# %%
import cutlass.experimental.primitives as primitives


def scaled_epilogue(accumulator, gD, accumulator_ready, thread, alpha):
    # YOUR CODE HERE
    return None


check("ch09.tmem_epilogue", scaled_epilogue)

# %% [markdown]
# ### Exercise 5 · Capstone: a warp-specialised Blackwell GEMM with its epilogue fused
#
# Write, from an empty cell, a whole Blackwell kernel (`@cute.kernel`) and its host `gemm_bias_relu(mA, mB,
# bias, mD)` (`@cute.jit`, it builds what the kernel needs and launches it) that computes
#
# D = relu(A B^T + bias), that is D[m, n] = max(sum over k of A[m, k] B[n, k] + bias[n], 0),
#
# for A (M, K) and B (N, K) fp16, row-major (K-major), bias (N,) fp32, one value per column of D, and D (M, N)
# fp16, row-major, allocated by the caller (the check fills it with NaN first, so an entry never written
# shows). N and K are multiples of 8: TMA needs each row of A and B to be a whole number of 16-byte chunks (K
# fp16 values), and the check declares D's rows the same (N values), so they stay 16-byte aligned too; apart
# from that M, N and K are arbitrary, and the check's are ragged: no tile of 64 or 128 divides them. They are
# run-time values, so count tiles and k-tiles with `cute.ceil_div` and `cute.size`. Section 4's kernel leaves out
# what ragged shapes need. A TMA load clips at the tensor's edge: every element of its box past the edge arrives
# as zero, rows past M or N and the k-tail past K alike (so a short last k-tile adds nothing to the sum), and the
# zeros count: announce the full stage's bytes with `cute.arch.mbarrier_arrive_and_expect_tx` for every k-tile,
# edge tiles included, as NVIDIA's Blackwell dense_gemm example does for every problem shape (the simulator
# counts a clipped box's bytes the same way). A store from registers does not clip, so the
# epilogue must leave out the rows and columns past D's edge, and read no bias value past N. One way to know
# where a value goes: `cute.make_identity_tensor(shape)` is a tensor whose entry at each coordinate is that
# coordinate; tiled and partitioned exactly as D is, it gives each of the thread's values its (m, n), to compare
# with D's extents. `cutlass.max(x, y)` is the larger of two values, and `cutlass.Float16(x)` converts an fp32
# value to fp16.
#
# **The warps.** Build the kernel as NVIDIA's own Blackwell GEMMs are built, each warp with one role: a CTA of
# **six** warps (192 threads) for one tile of D, where one warp, the producer, issues every TMA load into a ring
# of stages; a second warp, the MMA warp, issues every tcgen05 MMA and the commits that release the stages and
# signal the accumulator; and four more warps, the epilogue, wait for that signal and read the accumulator out of
# TMEM, one row a thread. The epilogue warps are their own: neither the producer nor the MMA warp reads TMEM, and
# the four must cover the four quarters of TMEM's lanes (warp w reaches lanes 32 (w % 4) onward), as four
# consecutive warps do. NVIDIA's CuTeDSL example `dense_gemm_persistent` (CUTLASS, examples/python/CuTeDSL/
# blackwell) numbers them warps 0-3 for the epilogue, 4 for the MMAs and 5 for the loads; any numbering of that
# kind passes. Section 4's kernel has one warp load and multiply in turn; exercise 3 split that loop in two and
# exercise 4 wrote an epilogue; here you assemble the whole, with the epilogue apart from the MMA warp. The TMEM
# columns are freed by the warp that allocated them once the four epilogue warps have read them:
# `cute.arch.barrier(barrier_id=1, number_of_threads=128)` is a barrier that only 128 threads meet at (`bar.sync
# 1, 128` in the PTX; `cute.arch.sync_threads` is `bar.sync 0`, the whole CTA), so the producer and the MMA warp
# need not wait there.
#
# **What you need**: the tiled MMA, the staged shared-memory layouts and the TMEM accumulator (section 2); the
# setup and the pieces of the chapter's kernel, in `benchmarks/kernels/blackwell_gemm.py` (section 4 read its loop
# and its epilogue; `blackwell_gemm_kernel` and `gemm_tn` hold the rest). Two of its calls no cell has shown:
# `cute.arch.alloc_tmem(columns, address)` allocates TMEM columns and writes their address to shared memory,
# which `cute.arch.retrieve_tmem_ptr` reads back as a TMEM pointer; `cute.nvgpu.make_tiled_tma_atom_A` and
# `cute.nvgpu.make_tiled_tma_atom_B` build the TMA atoms of a tcgen05 tiled MMA's A and B. Wait for the
# epilogue's TMEM loads before the TMEM is freed (section 4: what `tcgen05.wait::ld` orders). Section 3's fences
# around the block barriers and after the accumulator wait (`primitives.tcgen05_fence`; the cell imports
# `cutlass.experimental.primitives` as `primitives`) are the PTX ISA's pattern; the checks accept a kernel with
# or without them.
#
# TMA, mbarriers and their phases are chapter 08's. The tile and the stages are yours; the problems are
# described with section 4's 128 x 128 tile of 64-wide k-tiles.
#
# The check runs your kernel on the simulator on two ragged problems and prints how long each took on your
# machine: the first with `65 <= M <= 127`, `136 <= N <= 248`, `8 <= K <= 56` (two tile-columns of 128, the second
# partial, one short k-tile), the second with `129 <= M <= 200`, `8 <= N <= 120`, `392 <= K <= 440` (two
# tile-rows, 7 k-tiles). It compares D with relu(A B^T + bias) computed by NumPy in fp32 (`numpy.isclose`, rtol
# 2e-2, atol 6e-2; once the first problem fails, the second is not run), passes on the simulator's messages (a
# wait on the wrong phase, a stage refilled before its MMAs finished, TMEM read before the commit, a warp outside
# its lanes, an access past a tensor's edge, TMEM never freed) and names what D holds when it is wrong (the bias
# missing or per row, the clamp missing or before the bias, only the last k-block, entries never written). On the
# first problem it also records, for each CTA, which warps issued the TMA loads, the tcgen05 MMAs and the TMEM
# loads, and asks for one warp of the first kind, another of the second, and four others of the third. Where
# CuTeDSL is installed it compiles your kernel for sm_100a and reads the PTX (TMA loads, mbarrier waits, tcgen05
# alloc, mma, commit behind `elect.sync`, ld, a wait::ld after the last ld, and dealloc; no `wgmma`, no
# `mma.sync`). On an sm_100 GPU
# it would run a 4096^3 problem against `torch.relu(torch.addmm(bias, A, B.T))` and time both.

# %%
import cutlass.experimental.primitives as primitives
import cutlass.utils.blackwell_helpers as blackwell_helpers
from cutlass.cute.nvgpu import cpasync

# YOUR CODE HERE
pass


@cute.jit
def gemm_bias_relu(mA: cute.Tensor, mB: cute.Tensor, bias: cute.Tensor, mD: cute.Tensor):
    """D = relu(A B^T + bias): A (M, K), B (N, K) fp16 K-major, bias (N,) fp32, D (M, N) fp16 row-major."""
    # YOUR CODE HERE
    return None


check("ch09.capstone", gemm_bias_relu)

# %% [markdown]
# ## What to remember
#
# - tcgen05.mma (sm_100a/sm_103a, and Jetson Thor's sm_110a; not sm_120) is issued by one thread for the whole CTA (`thr_id` `1:0`), or for a
#   CTA pair with `CtaGroup.TWO` (`2:1`, each CTA holding half of A, B and C); M 64/128 (pair 128/256), N up to 256.
# - Its accumulator lives in TMEM, lane = row, one 32-bit column per value (CuTeDSL 4.8.1's layouts, fp16
#   included); allocate a power of two of at least 32 columns, at most 512, for everything the CTA keeps there.
# - The epilogue reads TMEM with `tcgen05.ld`: warp w reaches lanes 32 (w % 4) to 32 (w % 4) + 31, a thread a row;
#   its registers need no wait, but `tcgen05.wait::ld` must order the loads before that TMEM is rewritten or freed.
# - One thread issues the UMMAs; `tcgen05.commit` (one elected lane) makes an mbarrier arrive when they finish: a
#   stage's release, then "the accumulator is ready". ACCUMULATE is false for the tile's very first k-block only.
# - Section 3's GEMM compiles for sm_100a and runs on cutekit's simulator (it agrees with torch to fp16
#   rounding); no Blackwell GPU is lent, so nothing here is a Blackwell timing.
