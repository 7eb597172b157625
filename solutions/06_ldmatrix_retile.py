# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: CuTe by Hand
#     language: python
#     name: cute-by-hand
# ---

# %% [markdown]
# # 06 · ldmatrix and retile: from shared memory to tensor-core registers
#
# **Why.** A tensor-core instruction such as `mma.sync.m16n8k16` does not read shared memory. Each of the
# 32 lanes of a warp must already hold, in registers, the exact 8 fp16 values of A that the hardware assigns
# to it: lane 0 holds A[0,0], A[0,1], A[8,0], A[8,1], A[0,8], ... In CUDA you would load them with
# `ldmatrix.sync.aligned.m8n8.x4.shared.b16`: every lane passes the address of one 16-byte row of an 8x8
# matrix, and the hardware shuffles the rows so that each lane receives two fp16 values of each matrix in
# one 32-bit register. Getting "which lane passes which row address" and "which register is which MMA
# value" right by hand is the index math this chapter replaces.
#
# CuTe describes the instruction as a **copy atom** with three thread-value layouts (source, destination,
# and a reference order), builds a **TiledCopy** for it straight from the MMA (`make_tiled_copy_A`), and
# lets each thread see its MMA registers in the copy's order (`retile`). We compute each piece, check it
# against the picture, and then run a kernel whose every register is compared with the MMA's A layout.
#
# Words used below: a *lane* is a thread's index inside its warp (0..31); a *TV layout* maps
# (thread, value) to a position (chapter 02); *fragment* is the set of registers one thread holds.

# %%
import cutekit
from cutekit import cute, render, widgets
from cutekit.checks import check

# %% [markdown]
# ## See it
#
# `ldmatrix.x4`: four 8x8 matrices of fp16. Left, the 32 row addresses: lane `8*j + r` points at row `r` of
# matrix `j`. Right, where the elements land: lane `t` receives, from every matrix, row `t // 4`,
# columns `2*(t % 4)` and `2*(t % 4) + 1`, packed into one 32-bit register (register `j` for matrix `j`).
# Lane 9 is highlighted.

# %%
render.ldmatrix(num_matrices=4, transpose=False, lane=9)

# %% [markdown]
# The same instruction as a copy atom, printed (CuTeDSL's printout; cutekit's reference algebra prints the
# same strings, C++ writes `_32` for a static 32). The layouts are in fp16 elements: `(32,8):(8,1)` says
# thread t's 8 source values are elements 8t .. 8t+7, one 16-byte row.

# %%
F16 = cute.Float16
ldsm_x4 = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), F16)
print(ldsm_x4)
assert str(ldsm_x4.layout_src_tv) == "(32,8):(8,1)"
assert str(ldsm_x4.layout_dst_tv) == "(32,(2,4)):(2,(1,64))"

# %% [markdown]
# ## Build it up
#
# ### 1. Three layouts per copy atom
#
# A copy atom maps (thread, value) to an element offset in one 8x8-matrix-sized block of data, twice:
# - **source** `(thread, value) -> offset`: what each thread reads. For ldmatrix, one row address per lane.
# - **destination** `(thread, value) -> offset`: what each thread's registers hold afterwards.
# - **reference**: the (thread, value) numbering in which a TiledCopy's layouts are written. The other two
#   are translated into it.
#
# All six ldmatrix atoms (x1, x2, x4, plain and transposed) as CuTeDSL 4.8.1 prints them (checked live
# against CuTeDSL, traced on the CPU inside `@cute.jit`):

# %%
atoms = {}
for num_matrices in (1, 2, 4):
    for transpose in (False, True):
        atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(transpose, num_matrices), F16)
        atoms[num_matrices, transpose] = atom
        print(f"x{num_matrices} {'trans' if transpose else 'plain'}  src {atom.layout_src_tv}   "
              f"dst {atom.layout_dst_tv}")
assert str(atoms[1, False].layout_src_tv) == "((8,4),8):((8,0),1)"
assert str(atoms[2, False].layout_src_tv) == "((16,2),8):((8,0),1)"
assert str(atoms[1, False].layout_dst_tv) == "(32,2):(2,1)"
assert str(atoms[4, True].layout_dst_tv) == "((4,8),(1,2,4)):((16,1),(1,8,64))"

# %% [markdown]
# Read x1's source `((8,4),8):((8,0),1)`: only lanes 0..7 supply addresses; stride 0 on the `4` means lanes
# 8..31 repeat them (their addresses are ignored by the hardware). x2 uses lanes 0..15. The plain
# destination `(32,(2,4)):(2,(1,64))`: lane t holds offsets 2t and 2t+1 (one 32-bit register) of every
# matrix, and the matrices are 64 elements apart. The transposed destination gathers two elements 8 apart
# (two rows of a matrix) into one register.
#
# ### 2. The reference is the destination
#
# CuTeDSL 4.8.1 keeps the reference layout inside its IR (C++ calls it `ValLayoutRef`); cutekit's reference
# algebra shows it as `layout_ref_tv`. For every ldmatrix atom it equals the destination:

# %%
for key, atom in atoms.items():
    assert atom.layout_ref_tv == atom.layout_dst_tv, key
print("reference == destination for all six ldmatrix atoms")

# %% [markdown]
# The seed tutorial gives this only as an intuition ("the hardware's register order cannot be chosen"). The
# reason is sharper: a TiledCopy made with `make_tiled_copy_A` takes the MMA's A layout as its TV layout,
# and that layout is read in the *reference* numbering. The MMA's A layout says which registers each thread
# must hold, so it is a statement about the destination; with reference = destination the two speak the
# same numbering and nothing has to be translated on the register side (section 5 shows it).
#
# ### 3. src2ref and dst2ref
#
# To translate a (thread, value) of the source into the reference numbering: go to the offset with the
# source layout, and back to a reference (thread, value) with the reference layout's right inverse
# (`right_inverse(L)` is the layout R with L(R(i)) = i):
#
#     src2ref = composition(right_inverse(ref), src)        dst2ref = composition(right_inverse(ref), dst)
#
# The result is a (thread, value) -> index layout; index i is reference thread i % 32, value i // 32, and
# a value v of ldmatrix x4's reference is (half, register) = (v % 2, v // 2).

# %%
src2ref = cute.composition(cute.right_inverse(ldsm_x4.layout_ref_tv), ldsm_x4.layout_src_tv)
dst2ref = cute.composition(cute.right_inverse(ldsm_x4.layout_ref_tv), ldsm_x4.layout_dst_tv)
print("src2ref", src2ref)
print("dst2ref", dst2ref)
assert str(src2ref) == "((8,4),(2,4)):((4,64),(32,1))" and src2ref == ldsm_x4.src_to_ref
assert str(dst2ref) == "(32,(2,4)):(1,(32,64))" and dst2ref == ldsm_x4.dst_to_ref

# %% [markdown]
# These are the seed's numbers. Its sample table of src2ref, (source thread, source value) ->
# (reference thread, (half, register)), reproduced:

# %%
samples = {}
for t in (0, 8, 16, 24):
    indices = [src2ref((t, v)) for v in range(8)]
    samples[t] = [(i % 32, ((i // 32) % 2, (i // 32) // 2)) for i in indices]
for t, row in samples.items():
    print(f"tid {t:2}:", " ".join(str(entry).replace(" ", "") for entry in row))
assert samples[8][:3] == [(0, (0, 1)), (0, (1, 1)), (1, (0, 1))]

# %% [markdown]
# **A correction to the seed.** It says that for ldmatrix the dst2ref step "is crucial". It is the
# identity: `(32,(2,4)):(1,(32,64))` sends (t, (h, r)) to t + 32h + 64r, which is exactly the index of
# (t, (h, r)) in a (32, 8) domain. Every ldmatrix atom, transposed or not:

# %%
for key, atom in atoms.items():
    d2r = atom.dst_to_ref
    assert all(d2r(i) == i for i in range(cute.size(d2r))), key
print("dst2ref(i) == i for every ldmatrix atom; src2ref is where the renumbering happens:")
print("  x4 transposed src2ref", atoms[4, True].src_to_ref)
assert str(atoms[4, True].src_to_ref) == "((2,4,4),8):((32,1,64),4)"

# %% [markdown]
# So `partition_D` (and everything on the register side) needs no renumbering; `partition_S` does: lane 8's
# row is matrix 1's row 0, whose elements end up in reference lanes 0..3, register 1.
#
# ### 4. The MMA wants, and make_tiled_copy_A
#
# The MMA atom `m16n8k16` with fp16 inputs and fp32 accumulators. Its A TV layout maps (thread, value) to
# an element of the 16x16 A tile (column-major index m + 16k):

# %%
mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(F16, cute.Float32, (16, 8, 16)))
print(mma)
assert str(mma.tv_layout_A_tiled) == "((4,8),((2,2,2),(1,1))):((32,1),((16,8,128),(0,0)))"

# %% [markdown]
# Play: pick a thread and predict its 8 A values (2 per register, 4 registers) before you look. Which
# rows of A does thread 5 touch?

# %%
widgets.mma_explorer(mma)

# %% [markdown]
# `make_tiled_copy_A(atom, tiled_mma)` builds the ldmatrix TiledCopy whose TV layout *is* the MMA's A
# layout (read in the reference numbering) over the MMA's (M, K) tile:

# %%
s2r_A = cute.make_tiled_copy_A(ldsm_x4, mma)
print(s2r_A)
assert s2r_A.layout_tv_tiled == mma.tv_layout_A_tiled
assert str(s2r_A.layout_src_tv_tiled) == "((16,2),(8,1)):((1,128),(16,0))"
render.tiled_copy(s2r_A, highlight=9)

# %% [markdown]
# Left (source): each lane's 8 values are 8 consecutive k of one row: the row address it passes. The
# source TV layout `((16,2),(8,1)):((1,128),(16,0))` says lane t supplies row t % 16 of A, columns
# 8 * (t // 16) .. + 7. Right (destination): the MMA's A layout. One thread's source, as coordinates:

# %%
identity_A = cute.make_identity_tensor((16, 16))
lane = 9
rows_supplied = s2r_A.get_slice(lane).partition_S(identity_A)
print(rows_supplied)
coordinates = [rows_supplied[i] for i in range(8)]
print(f"lane {lane} passes the address of row {coordinates[0][0]}, k {coordinates[0][1]}..{coordinates[-1][1]}")
assert coordinates == [(9, k) for k in range(8)]

# %% [markdown]
# ### 5. retile: the MMA's registers seen by the copy
#
# The MMA partitions A for a thread as `(MMA, MMA_M, MMA_K)` = (values of one MMA, repeats down M, repeats
# along K). `make_fragment_A` allocates those registers. The copy wants its destination as
# `((values of one copy atom, atoms), rest...)`. `retile` is the same registers in the copy's grouping:

# %%
thread_mma = mma.get_slice(lane)
fragment_A = mma.make_fragment_A(thread_mma.partition_A(identity_A))
print("MMA fragment   ", fragment_A.layout)
for num_matrices in (4, 2, 1):
    tiled = cute.make_tiled_copy_A(atoms[num_matrices, False], mma)
    print(f"retile for x{num_matrices}  ", tiled.get_slice(lane).retile(fragment_A).layout,
          "   partition_S", tiled.get_slice(lane).partition_S(identity_A).layout.shape)
assert str(fragment_A.layout) == "((2,2,2),1,1):((1,2,4),0,0)"
assert str(s2r_A.get_slice(lane).retile(fragment_A).layout) == "((8,1),1,1):((1,0),0,0)"
assert str(cute.make_tiled_copy_A(atoms[1, False], mma).get_slice(lane).retile(fragment_A).layout) == \
    "((2,4),1,1):((1,2),0,0)"

# %% [markdown]
# **A second correction.** The seed says `retile_D` rearranges the MMA fragment into a
# `(thr, (lane, reg), ...)` view. A retiled tensor has no thread mode: it is one thread's registers. For
# x4 and one warp it is `((8,1),1,1):((1,0),0,0)`: register v of the copy is register v of the MMA, because
# the MMA's register order *is* ldmatrix's destination order (section 2). For x1 it groups the same 8 values
# as 4 atoms of 2 (one 32-bit register per instruction); for x2 as 2 atoms of 4. And the seed's
# `tCrA: ((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK)))` is the layout `thrfrg_A` gives for all threads; the
# fragment itself is `(MMA, MMA_M, MMA_K)` as printed above. Both agree with CuTeDSL 4.8.1 (same strings).
#
# `partition_S` shows the price of fewer matrices: for x1 a thread's source is `(8,(2,2))`, 32 values (a
# 16-byte row per instruction, four instructions) for the same 8 registers, because lanes 8..31 repeat the
# row addresses of lanes 0..7 and only 2 fp16 land per lane per instruction.
#
# ### 6. Which register and half
#
# Element (m, k) of A lands where the MMA's A layout sends it: invert the TV layout. Value v of a thread is
# half v % 2 of register v // 2 (two fp16 in one 32-bit register).

# %%
where = {}
for t in range(32):
    for v in range(8):
        where[mma.get_slice(t).partition_A(identity_A)[v]] = (t, v // 2, v % 2)
print("A[0,0] ->", where[0, 0], "  A[8,1] ->", where[8, 1], "  A[3,9] ->", where[3, 9], "  A[15,15] ->", where[15, 15])
assert where[8, 1] == (0, 1, 1) and where[3, 9] == (12, 2, 1) and where[15, 15] == (31, 3, 1)

# %% [markdown]
# ### 7. The seed's 2x2 TiledMMA
#
# The seed's sgemm uses 2x2 atoms (4 warps) and a (32, 32, 16) tile. Its printed layouts, reproduced with
# CuTeDSL's names (`Thr Layout VMNK` is C++'s `thr_layout_vmnk`):

# %%
mma_2x2 = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(F16, cute.Float32, (16, 8, 16)), (2, 2, 1),
                              permutation_mnk=(32, 32, 16))
print(mma_2x2.thr_layout_vmnk)
print("A", mma_2x2.tv_layout_A_tiled)
print("B", mma_2x2.tv_layout_B_tiled)
print("C", mma_2x2.tv_layout_C_tiled)
assert str(mma_2x2.thr_layout_vmnk) == "(32,2,2,1):(1,32,64,0)"
assert str(mma_2x2.tv_layout_A_tiled) == "((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))"
assert str(mma_2x2.tv_layout_B_tiled) == "((4,8,2,2),((2,2),(2,1))):((64,1,0,8),((32,256),(16,0)))"
s2r_A_2x2 = cute.make_tiled_copy_A(ldsm_x4, mma_2x2)
assert s2r_A_2x2.layout_tv_tiled == mma_2x2.tv_layout_A_tiled
assert tuple(t.shape for t in s2r_A_2x2.tiler_mn) == (32, 16)

# %% [markdown]
# The stride 0 in A's thread mode is the N warp index: warps 0 and 2 (same M, different N) load the same A
# rows. The seed's `layoutC_TV` and its `thrfrg_C` walk-through also hold (the C layout printed above).
#
# ### 8. An x4 that does not fit
#
# ldmatrix.x4 fills 4 registers (8 fp16) per lane. The m16n8k16 B operand, 8x16, gives each lane only
# 4 fp16 (2 registers): x2 is the largest that fits. cutekit's reference algebra refuses x4 there:

# %%
try:
    cute.make_tiled_copy_B(ldsm_x4, mma)
except ValueError as error:
    refused = str(error)
print(refused)
assert "not a whole number of 32-thread, 8-value atoms" in refused

# %% [markdown]
# **CuTeDSL 4.8.1 does not refuse it.** It builds the copy silently; the damage shows in `retile`: the
# 4 registers of thread 3 are seen as 8 values with a stride-0 mode, so the second half of every x4
# would overwrite the first, and the source asks each lane for a full row address of a tile that has only
# 8 rows. Real CuTeDSL, traced on the CPU in a subprocess (`cutekit.checks.ch06_ldmatrix`):

# %%
from cutekit.checks import ch06_ldmatrix as chapter06

if cutekit.backend.probe_cutedsl_cpu().available:
    for num_matrices in (4, 2):
        tv, source, retiled = chapter06.ldmatrix_copy_in_cutedsl("B", (16, 8, 16), num_matrices, 3)
        print(f"B, x{num_matrices}:  TV {tv}   retile {retiled}")
        if num_matrices == 4:
            assert retiled == "(((4,2),1),1,1):(((1,0),0),0,0)"
        else:
            assert retiled == "((4,1),1,1):((1,0),0,0)"
else:
    print("needs the cutedsl-cpu tier (nvidia-cutlass-dsl installed): `python -m cutekit doctor`")

# %% [markdown]
# A stride 0 in a retiled register view is the sign of an atom too large for the MMA's values. Exercise 3
# asks for the largest one that fits.
#
# ## Exercises 1 to 3
#
# These use the reference algebra (`cute` here is cutekit's). Exercise 4, a kernel, is at the end.
#
# ### Exercise 1 · src2ref and dst2ref
#
# Write `to_reference(atom, side)`: `side` is `"src"` or `"dst"`; return the layout that sends that side's
# (thread, value) to the reference (thread, value) index, from `atom.layout_src_tv`, `atom.layout_dst_tv`
# and `atom.layout_ref_tv` (the properties `src_to_ref` / `dst_to_ref` are switched off while it is checked).

# %%
def to_reference(atom, side):
    ### BEGIN SOLUTION
    chosen = atom.layout_src_tv if side == "src" else atom.layout_dst_tv
    return cute.composition(cute.right_inverse(atom.layout_ref_tv), chosen)
    ### END SOLUTION


check("ch06.to_reference", to_reference)

# %% [markdown]
# ### Exercise 2 · Which thread, register and half
#
# For the single `m16n8k16` MMA loaded by `make_tiled_copy_A` / `make_tiled_copy_B`, write
# `lands_in(operand, row, k)`: for element (row, k) of A (16x16, row = m) or B (8x16, row = n), return
# `(thread, register, half)`.

# %%
def lands_in(operand, row, k):
    ### BEGIN SOLUTION
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)))
    tv = tiled_mma.tv_layout_A_tiled if operand == "A" else tiled_mma.tv_layout_B_tiled
    rows = 16 if operand == "A" else 8
    index = cute.right_inverse(tv)(row + rows * k)
    thread, value = index % 32, index // 32
    return (thread, value // 2, value % 2)
    ### END SOLUTION


check("ch06.lands_in", lands_in)

# %% [markdown]
# ### Exercise 3 · x1, x2 or x4
#
# A single warp runs the `m16n8k16` MMA over a warp tile `tile_mnk` (given as `permutation_mnk`, so the
# warp repeats the atom to cover it). Write `ldmatrix_for(operand, tile_mnk)`: the largest `num_matrices`
# (4, 2 or 1) that fits: the one cutekit's `make_tiled_copy_A` (operand `"A"`) or `make_tiled_copy_B`
# (`"B"`) accepts (section 8: CuTeDSL 4.8.1 would accept more, wrongly). Reason it out: the TiledCopy
# constructors are switched off while it is checked.

# %%
def ldmatrix_for(operand, tile_mnk):
    ### BEGIN SOLUTION
    rows = tile_mnk[0] if operand == "A" else tile_mnk[1]
    matrices = (rows // 8) * (tile_mnk[2] // 8)     # 8x8 matrices of fp16 in the warp's operand tile
    return min(4, matrices)
    ### END SOLUTION


check("ch06.ldmatrix_for", ldmatrix_for)

# %% [markdown]
# ## Run it
#
# From here on the code is a CuTeDSL program: `cutekit.use("auto")` makes `import cutlass` the real CuTeDSL
# on a machine with an sm_80+ GPU, and cutekit's CPU simulator elsewhere (there, ldmatrix runs as a warp
# collective built from the atom's TV layouts).

# %%
backend = cutekit.use("auto")
print(backend)

import torch

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

# %% [markdown]
# One warp. The kernel copies a 16x16 fp16 A tile and a 16x16 B tile (N x K, so the warp runs two n8 MMAs
# side by side: `permutation_mnk=(16, 16, 16)`, which lets ldmatrix.x4 feed B too) into shared memory,
# loads both with ldmatrix into retiled MMA fragments, and writes every thread's registers to a
# (32, values) global tensor.

# %%
@cute.kernel
def ldmatrix_kernel(mA: cute.Tensor, mB: cute.Tensor, mOutA: cute.Tensor, mOutB: cute.Tensor,
                    tiled_mma: cute.TiledMma, s2r_A: cute.TiledCopy, s2r_B: cute.TiledCopy):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, cute.make_layout((16, 16), stride=(16, 1)), 16)
    sB = smem.allocate_tensor(cutlass.Float16, cute.make_layout((16, 16), stride=(16, 1)), 16)
    for i in cutlass.range_constexpr(8):                 # global -> shared, 8 elements per thread
        sA[tidx * 8 + i] = mA[tidx * 8 + i]
        sB[tidx * 8 + i] = mB[tidx * 8 + i]
    cute.arch.sync_threads()

    thread_mma = tiled_mma.get_slice(tidx)
    tCrA = tiled_mma.make_fragment_A(thread_mma.partition_A(sA))     # (MMA, MMA_M, MMA_K) registers
    tCrB = tiled_mma.make_fragment_B(thread_mma.partition_B(sB))
    thread_A, thread_B = s2r_A.get_slice(tidx), s2r_B.get_slice(tidx)
    cute.copy(s2r_A, thread_A.partition_S(sA), thread_A.retile(tCrA))   # ldmatrix.x4 into the MMA's registers
    cute.copy(s2r_B, thread_B.partition_S(sB), thread_B.retile(tCrB))

    for v in cutlass.range_constexpr(cute.size(tCrA)):
        mOutA[tidx, v] = tCrA[v]
    for v in cutlass.range_constexpr(cute.size(tCrB)):
        mOutB[tidx, v] = tCrB[v]


@cute.jit
def load_operands(mA: cute.Tensor, mB: cute.Tensor, mOutA: cute.Tensor, mOutB: cute.Tensor):
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                    (1, 1, 1), permutation_mnk=(16, 16, 16))
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16)
    s2r_A = cute.make_tiled_copy_A(atom, tiled_mma)
    s2r_B = cute.make_tiled_copy_B(atom, tiled_mma)
    ldmatrix_kernel(mA, mB, mOutA, mOutB, tiled_mma, s2r_A, s2r_B).launch(grid=[1, 1, 1], block=[32, 1, 1])


def on_backend(*tensors):
    return [t.cuda() for t in tensors] if backend.name == "gpu" else list(tensors)


# counting tiles: A[m, k] = 16m + k and B[n, k] = 1000 + 16n + k are exact in fp16, so a value names its element
A = torch.arange(256, dtype=torch.float16).reshape(16, 16)
B = (1000 + torch.arange(256)).to(torch.float16).reshape(16, 16)
out_A = torch.full((32, 8), -1.0, dtype=torch.float16)
out_B = torch.full((32, 8), -1.0, dtype=torch.float16)
here = on_backend(A, B, out_A, out_B)
load_operands(*[from_dlpack(t, assumed_align=16) for t in here])
got_A, got_B = here[2].cpu(), here[3].cpu()
print("thread 0's A registers:", got_A[0].tolist())
print("thread 0's B registers:", got_B[0].tolist())

# %% [markdown]
# Now the same registers from the reference algebra: thread t's value v should be the element at
# `partition_A(identity)[v]` of the MMA's A layout (and likewise for B).

# %%
from cutekit import cute as reference

warp_mma = reference.make_tiled_mma(reference.nvgpu.warp.MmaF16BF16Op(reference.Float16, reference.Float32,
                                                                      (16, 8, 16)), (1, 1, 1),
                                    permutation_mnk=(16, 16, 16))
identity = reference.make_identity_tensor((16, 16))
want_A = torch.tensor([[float(A[warp_mma.get_slice(t).partition_A(identity)[v]]) for v in range(8)]
                       for t in range(32)], dtype=torch.float16)
want_B = torch.tensor([[float(B[warp_mma.get_slice(t).partition_B(identity)[v]]) for v in range(8)]
                       for t in range(32)], dtype=torch.float16)
assert torch.equal(got_A, want_A) and torch.equal(got_B, want_B)
assert got_A[0].tolist() == [0, 1, 128, 129, 8, 9, 136, 137]
print(f"all 32 x 8 registers of A and of B match the MMA's layouts (ran on: {backend.name})")

# %% [markdown]
# Thread 0 holds A[0,0], A[0,1], A[8,0], A[8,1], A[0,8], A[0,9], A[8,8], A[8,9]: register r (values 2r,
# 2r+1) is matrix r of the ldmatrix.x4, which is exactly the m16n8k16 A fragment.
#
# ## Exercise 4 · The S2R copy for one k-block
#
# The A tile is now 16x32: two k-blocks of 16, so the fragment is `(MMA, MMA_M, MMA_K)` = `(8, 1, 2)`.
# Complete `s2r_kernel`: with the TiledCopy `s2r` (ldmatrix.x4 from `make_tiled_copy_A`), load **only
# k-block `k_block`** of `sA` into the MMA fragment `tCrA` (partition_S, retile, one `cute.copy` on the
# `[None, None, k_block]` slices). The lines around it write that k-block's registers out. The check runs
# it for both k-blocks on random data (on the simulator) and compares every register with the MMA's layout.

# %%
@cute.kernel
def s2r_kernel(mA: cute.Tensor, mOut: cute.Tensor, tiled_mma: cute.TiledMma, s2r: cute.TiledCopy,
               k_block: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    sA = cutlass.utils.SmemAllocator().allocate_tensor(cutlass.Float16, cute.make_layout((16, 32), stride=(32, 1)),
                                                       16)
    for i in cutlass.range_constexpr(16):
        sA[tidx * 16 + i] = mA[tidx * 16 + i]
    cute.arch.sync_threads()
    tCrA = tiled_mma.make_fragment_A(tiled_mma.get_slice(tidx).partition_A(sA))
    tCrA.fill(-1.0)
    ### BEGIN SOLUTION (placeholder: pass)
    thread_copy = s2r.get_slice(tidx)
    tXsA = thread_copy.partition_S(sA)           # (CPY, CPY_M, CPY_K): source rows, in the copy's order
    tXrA = thread_copy.retile(tCrA)              # the MMA's registers, grouped per ldmatrix
    cute.copy(s2r, tXsA[None, None, k_block], tXrA[None, None, k_block])
    ### END SOLUTION
    for v in cutlass.range_constexpr(cute.size(tCrA, mode=[0])):
        mOut[tidx, v] = tCrA[v, 0, k_block]


@cute.jit
def load_k_block(mA: cute.Tensor, mOut: cute.Tensor, k_block: cutlass.Constexpr):
    tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)))
    s2r = cute.make_tiled_copy_A(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4),
                                                     cutlass.Float16), tiled_mma)
    s2r_kernel(mA, mOut, tiled_mma, s2r, k_block).launch(grid=[1, 1, 1], block=[32, 1, 1])


check("ch06.s2r_k_block", load_k_block)

# %% [markdown]
# ## What to remember
#
# - A copy atom has source, destination and reference TV layouts; for ldmatrix the reference is the
#   destination, so dst2ref is the identity and src2ref (partition_S) does the renumbering.
# - `make_tiled_copy_A/B(atom, tiled_mma)` uses the MMA's operand layout as the copy's TV layout: the copy
#   lands values exactly where the MMA wants them.
# - `retile(fragment)` is one thread's MMA registers grouped per copy instruction; x4 on one warp is the
#   identity, x1/x2 split the same registers into more instructions.
# - x4 needs four 8x8 matrices in the warp's operand tile: 16x16 A, or B with N >= 16 or K >= 32.
#
# Next: **07**, a whole GEMM: cp.async into swizzled shared memory, ldmatrix, mma.sync.
