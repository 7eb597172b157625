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
# # 90 · Reference: the CuTeDSL names of the course
#
# Every CuTeDSL name a chapter's code calls or reads, with one line of what it is and where the course first
# says it: the chapter, and the heading that prose stands under. Names are written as the chapters write
# them: `cute` is `cutlass.cute`, and a name that starts with a dot is a method or property of a CuTeDSL
# object (`.load` of a tensor, `.partition_S` of one thread's slice of a TiledCopy). The lines of the kernels
# that chapters 07 and 08 run (`benchmarks/kernels/`) count too. The chapters themselves make this page (it
# is regenerated from them), so it lists what the course uses and no more; the chapter it names says more.
#
# `reference.lookup` searches it: part of a name gives every name that contains it, and a word that no name
# contains is looked for in the descriptions.

# %%
from cutekit import reference

reference.lookup("partition")

# %% [markdown]
# The chapters:
#
# - 00 · Start here
# - 01 · Layouts
# - 02 · Thread-value layouts
# - 03 · Dividing a layout into tiles
# - 04 · local_tile and local_partition, and an add kernel with tails
# - 05 · TiledCopy: a reduction written four ways
# - 06 · ldmatrix and retile: from shared memory to tensor-core registers
# - 07 · sgemm, from SIMT to tensor cores
# - 08 · Hopper GEMM: TMA, mbarriers and wgmma
# - 09 · Blackwell: tcgen05 MMA and tensor memory

# %% [markdown]
# ## `cute`: layouts, tensors, copies and MMAs
#
# | name | what it is | chapter | where |
# |---|---|---|---|
# | `cute.autovec_copy` | `autovec_copy(src, dst)`: a copy without a TiledCopy, in the widest vectors the layouts and alignment allow. | 05 | 5. Vector width: one 128-bit copy or four 32-bit ones |
# | `cute.ceil_div` | `ceil_div(a, b)`: a / b rounded up, the number of tiles of size b that cover a. | 04 | Elementwise add, no guard yet |
# | `cute.coalesce` | `coalesce(layout)`: the same function with as few modes as possible. | 01 | 6. Coalesce: the same function with fewer modes |
# | `cute.compile` | `cute.compile(f, *args)` traces and compiles a `@cute.jit` function and returns the compiled function, whose calls neither trace nor compile. | 00 | Your first kernel |
# | `cute.complement` | `complement(layout, cotarget)`: the layout that fills the offsets the layout leaves out, up to `cotarget`. | 01 | 8. Complement: the layout that fills the gaps |
# | `cute.ComposedLayout` | The type of a composed layout such as a swizzled one, `inner o offset o outer`. | 07 | 7 · Run it |
# | `cute.composition` | `composition(A, B)`: the layout `x -> A(B(x))`; with a tensor, the tensor seen through B. | 01 | 7. Composition: a layout of a layout |
# | `cute.copy` | `copy(tiled_copy_or_atom, src, dst, pred=...)`: moves src to dst with the atom's instruction, skipping atoms whose predicate is false (a TMA copy also takes `tma_bar_ptr=`, the mbarrier its bytes report to). | 03 | 8. Compile it: what CuTeDSL knows, and what it leaves to run time |
# | `cute.CopyAtom` | The type of a copy-atom argument, such as a TMA atom built on the host. | 08 | 4 · Run it |
# | `cute.cosize` | `cosize(layout)`: one more than the largest offset, the extent of memory the layout reaches. | 01 | 5. Size, cosize, rank, depth |
# | `cute.crd2idx` | `crd2idx(coordinate, shape)`: the 1-D column-major index of a coordinate (given a layout: its offset). | 01 | 2. Three ways to name an element |
# | `cute.depth` | `depth(x)`: how deeply the shape nests (0 for an int). | 01 | 5. Size, cosize, rank, depth |
# | `cute.elem_less` | `elem_less(a, b)`: whether every entry of coordinate `a` is below `b`'s, the bounds test of a tail; a run-time Boolean in a kernel. | 03 | 7. When the tile does not divide the shape |
# | `cute.flat_divide` | `flat_divide(t, tiler)`: a tensor or layout cut into tiles, the tile's modes first and the tile indices after, all flat. | 03 | 3. Four ways to arrange the same divide |
# | `cute.flatten` | `flatten(layout)`: the same layout with every nested mode brought to the top level. | 01 | 6. Coalesce: the same function with fewer modes |
# | `cute.Float16` | The 16-bit float type (fp16); `.width` is 16. | 05 | 1. The copy atom: how many bits one instruction moves |
# | `cute.Float32` | The 32-bit float type (fp32); `.width` is 32. | 02 | 6. What the compiler makes of it: four 128-bit loads per operand per thread |
# | `cute.full_like` | `cute.full_like(v, value)`: a register value of v's shape and type with every element `value`. | 08 | 3.8 · The epilogue |
# | `cute.gemm` | `gemm(tiled_mma, D, A, B, C)`: D = A B + C with the MMA's instruction, on the thread's fragments. | 07 | One warp, one tile, running |
# | `cute.get` | `get(x, mode=[i])`: mode `i` of a layout or tensor (`mode=[i, j]` goes deeper). | 01 | 7. Composition: a layout of a layout |
# | `cute.group_modes` | `group_modes(x, begin, end)`: modes `begin` to `end - 1` made one mode. | 08 | 3.3 · TMA: a tile in one instruction |
# | `cute.idx2crd` | `idx2crd(i, shape)`: the coordinate of 1-D index `i` in a shape, unfolded column-major. | 01 | 2. Three ways to name an element |
# | `cute.Int32` | The 32-bit signed integer type; `cute.Int32(0)` is a run-time integer where CuTeDSL wants one. | 04 | See it |
# | `cute.Int8` | The 8-bit signed integer type. | 08 | 3.2 · Tiling the atom to the stages |
# | `cute.jit` | Decorator: the function is host code, traced and compiled when called; it builds layouts and launches kernels. | 00 | Your first kernel |
# | `cute.kernel` | Decorator: the function is device code, run once per thread (CUDA's `__global__`). | 00 | Your first kernel |
# | `cute.Layout` | The type of a layout argument: a shape and a stride, a function from coordinates to offsets. | 01 | Exercises |
# | `cute.left_inverse` | `left_inverse(L)`: the layout L' with L'(L(i)) = i for every index i of L, from offsets back to indices (L must not send two indices to one offset). | 01 | 9. Inverses: from an offset back to its index |
# | `cute.local_partition` | `local_partition(tile, thread_layout, index)`: thread `index`'s elements of a tile, the threads laid out by `thread_layout`. | 04 | 04 · local_tile and local_partition, and an add kernel with tails |
# | `cute.local_tile` | `local_tile(tensor, tiler, coordinate)`: the tile at that coordinate of the tensor divided by the tiler (a block's tile). | 03 | Exercise 4 · Slice a block's tile out of a batch of matrices |
# | `cute.logical_divide` | `logical_divide(layout, tiler)`: the layout divided into (tile, rest), mode by mode for a tuple tiler. | 01 | 8. Complement: the layout that fills the gaps |
# | `cute.make_composed_layout` | `make_composed_layout(inner, offset, outer)`: the function x -> inner(offset + outer(x)), for example a swizzle after a layout. | 07 | 4 · Shared memory: the swizzled layout |
# | `cute.make_copy_atom` | `make_copy_atom(op, dtype, num_bits_per_copy=...)`: one copy instruction as an atom, with its source and destination TV layouts. | 05 | See it |
# | `cute.make_fragment_like` | `make_fragment_like(t, dtype=None)`: a register tensor of `t`'s shape, with `t`'s element type or the one given. | 05 | Version 2 · composition: the tile seen through the TV layout |
# | `cute.make_identity_tensor` | `make_identity_tensor(shape)`: a tensor whose element at each coordinate is that coordinate, to see which elements a partition holds. | 02 | 2. Partition: compose the data with the TV layout, then slice a thread |
# | `cute.make_layout` | `make_layout(shape, stride=...)`: a layout; without a stride, the compact column-major one. | 01 | 01 · Layouts |
# | `cute.make_layout_tv` | `make_layout_tv(threads, values)`: the tile and the (thread, value) -> position layout of a thread layout repeating a value block. | 02 | 4. `make_layout_tv`: build the TV layout from a thread grid and a value block |
# | `cute.make_mma_atom` | `make_mma_atom(op)`: one MMA instruction as an atom. | 08 | 3.6 · The warpgroup MMA |
# | `cute.make_ordered_layout` | `make_ordered_layout(shape, order=...)`: a compact layout in which `order[i]` says how fast mode i moves, 0 the fastest (order (1, 0) is row-major). | 01 | 3. `make_ordered_layout`: say which mode is fastest |
# | `cute.make_rmem_tensor` | `make_rmem_tensor(layout or shape, dtype)`: a tensor in registers, a thread's local array. | 05 | Version 2 · composition: the tile seen through the TV layout |
# | `cute.make_swizzle` | `make_swizzle(B, M, S)`: the swizzle that XORs offset bits M+S .. M+S+B-1 into bits M .. M+B-1. | 07 | 4 · Shared memory: the swizzled layout |
# | `cute.make_tensor` | `make_tensor(pointer, layout)`: a tensor over existing memory, seen through a layout. | 05 | Version 4 · any reduced dimension |
# | `cute.make_tiled_copy_A` | `make_tiled_copy_A(atom, tiled_mma)`: a TiledCopy whose TV layout is the MMA's A layout, so it fills A's registers. | 06 | 06 · ldmatrix and retile: from shared memory to tensor-core registers |
# | `cute.make_tiled_copy_B` | `make_tiled_copy_B(atom, tiled_mma)`: a TiledCopy whose TV layout is the MMA's B layout, so it fills B's registers. | 06 | 7. x1, x2 or x4: which ldmatrix fits |
# | `cute.make_tiled_copy_C` | `make_tiled_copy_C(atom, tiled_mma)`: a TiledCopy whose TV layout is the MMA's C layout (the epilogue's stmatrix from the accumulators). | 08 | 3.8 · The epilogue |
# | `cute.make_tiled_copy_tv` | `make_tiled_copy_tv(atom, threads, values)`: the atom repeated over a thread layout, each thread moving a value block. | 05 | See it |
# | `cute.make_tiled_mma` | `make_tiled_mma(op or atom, atom_layout, permutation_mnk=...)`: the MMA repeated over warps (or warpgroups), a TiledMMA. | 06 | 2. The MMA wants, and make_tiled_copy_A |
# | `cute.printf` | Prints from every thread while the kernel runs, `{}` standing for each value. | 00 | Your first kernel |
# | `cute.rank` | `rank(x)`: the number of top-level modes. | 01 | 5. Size, cosize, rank, depth |
# | `cute.recast_ptr` | `recast_ptr(pointer, swizzle, dtype=...)`: the same address with another swizzle and element type. | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.ReductionOp.ADD` | The sum, as the operation of `TensorSSA.reduce`. | 05 | Version 2 · composition: the tile seen through the TV layout |
# | `cute.ReductionOp.MAX` | The maximum, as the operation of `TensorSSA.reduce`. | 05 | Version 2 · composition: the tile seen through the TV layout |
# | `cute.right_inverse` | `right_inverse(L)`: the layout R with L(R(i)) = i, from offsets back to indices. | 01 | 9. Inverses: from an offset back to its index |
# | `cute.select` | `select(layout, mode=[1, 0])`: the layout with the modes given, in that order (a transpose when the modes are swapped). | 07 | 8 · The last steps a real kernel needs |
# | `cute.Shape` | The type of a shape argument: an int or a nested tuple of ints. | 04 | A kernel that records who touched what |
# | `cute.size` | `size(x)`: the number of elements of a layout, tensor or shape; `mode=[i]` counts one mode. | 01 | 5. Size, cosize, rank, depth |
# | `cute.size_in_bytes` | `size_in_bytes(dtype, layout)`: the bytes a layout of `dtype` elements spans (its cosize times the element's bytes; a swizzled layout's outer layout). | 09 | Exercise 2 · How many stages of A and B fit |
# | `cute.slice_` | `slice_(x, coordinate)`: the modes marked `None` in the coordinate, at the fixed values of the others. | 08 | 3.3 · TMA: a tile in one instruction |
# | `cute.Tensor` | The type of a tensor argument: a pointer (its `iterator`) and a layout. | 02 | 6. What the compiler makes of it: four 128-bit loads per operand per thread |
# | `cute.tile_to_shape` | `tile_to_shape(atom, shape, order)`: the atom repeated to fill the shape, along the modes in `order`. | 07 | 4 · Shared memory: the swizzled layout |
# | `cute.TiledCopy` | The type of a TiledCopy argument: a copy atom repeated over a block's threads. | 05 | 4. What partition_S does to the coordinate space: tidfrg_S |
# | `cute.TiledMma` | The type of a TiledMMA argument: an MMA atom repeated over warps (or warpgroups). | 06 | Run it |
# | `cute.where` | `cute.where(condition, x, y)`: element by element, x where the condition holds and y elsewhere, over register values (TensorSSA). | 03 | 03 · Dividing a layout into tiles |
# | `cute.zipped_divide` | `zipped_divide(x, tiler)`: divided into ((tile modes), (rest modes)): mode 0 a tile, mode 1 which tile. | 02 | 5. From tiles to threads: the whole partition of the elementwise add |

# %% [markdown]
# ## `cute.arch`: what one thread or warp does (indices, barriers, mbarriers, registers)
#
# | name | what it is | chapter | where |
# |---|---|---|---|
# | `cute.arch.alloc_tmem` | `alloc_tmem(columns, address)`: a whole warp allocates TMEM columns (PTX `tcgen05.alloc`, a power of two, 32 to 512) and writes their address to shared memory. | 09 | 3 · Compiled for real |
# | `cute.arch.barrier` | `barrier(barrier_id=k, number_of_threads=n)`: a named barrier that only n threads meet at. | 08 | 08 · Hopper GEMM: TMA, mbarriers and wgmma |
# | `cute.arch.block_idx` | The block's index in the grid, a triple: CUDA's `blockIdx`. | 00 | Your first kernel |
# | `cute.arch.block_idx_in_cluster` | The block's rank in its thread-block cluster. | 08 | 4 · Run it |
# | `cute.arch.cluster_arrive` | Arrives at the cluster-wide barrier (every thread of every CTA of the cluster). | 08 | 4 · Run it |
# | `cute.arch.cluster_arrive_relaxed` | `cluster_arrive` without its memory ordering (PTX `.relaxed`). | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.cluster_wait` | Waits until every CTA of the cluster has arrived at the cluster barrier. | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.cp_async_bulk_commit_group` | Closes the bulk (TMA) copies issued since the last commit into one bulk group. | 08 | 3.8 · The epilogue |
# | `cute.arch.cp_async_bulk_wait_group` | `cp_async_bulk_wait_group(n, read=True)`: waits until at most n bulk groups are pending (with `read=True`, until their shared memory has been read). | 08 | 3.8 · The epilogue |
# | `cute.arch.cp_async_commit_group` | Closes the `cp.async` copies this thread issued since the last commit into one group. | 07 | 6 · The multistage pipeline |
# | `cute.arch.cp_async_wait_group` | `cp_async_wait_group(n)`: waits until at most n of the thread's `cp.async` groups are still in flight. | 07 | 6 · The multistage pipeline |
# | `cute.arch.dealloc_tmem` | `dealloc_tmem(tmem_pointer, columns)`: frees TMEM columns (PTX `tcgen05.dealloc`); the warp that allocated them frees them. | 09 | 3 · Compiled for real |
# | `cute.arch.elect_one` | `with elect_one():` runs its block in one lane of the warp. | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.fence_proxy` | `fence_proxy(kind, space=...)`: a fence between memory proxies; `fence_proxy("async.shared", space="cta")` makes ordinary shared-memory writes visible to the copy engine (the async proxy). | 08 | 3.8 · The epilogue |
# | `cute.arch.fence_view_async_tmem_load` | PTX `tcgen05.wait::ld`: waits until this thread's earlier TMEM loads have landed in its registers. | 09 | 3 · Compiled for real |
# | `cute.arch.lane_idx` | The thread's lane in its warp, 0..31. | 05 | Run it |
# | `cute.arch.make_warp_uniform` | `make_warp_uniform(x)`: `x`, with the promise that it is the same in all 32 lanes (a branch on it is taken per warp). | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.mbarrier_arrive` | `mbarrier_arrive(bar)`: one arrival on the barrier (with a CTA rank: on that CTA's barrier of the cluster). | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.mbarrier_arrive_and_expect_tx` | `mbarrier_arrive_and_expect_tx(bar, bytes)`: one arrival, and the bytes the phase must also receive. | 08 | 3.4 · mbarriers: arrivals, bytes and phases |
# | `cute.arch.mbarrier_init` | `mbarrier_init(bar, count)`: makes an mbarrier in shared memory whose phase completes on `count` arrivals (and the bytes announced). | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.mbarrier_init_fence` | Makes the mbarriers just initialised visible to the copy engine and the cluster. | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.mbarrier_wait` | `mbarrier_wait(bar, parity)`: waits until the phase of that parity has completed. | 08 | 3.4 · mbarriers: arrivals, bytes and phases |
# | `cute.arch.relinquish_tmem_alloc_permit` | Gives up the CTA's right to allocate TMEM again (PTX `tcgen05.relinquish_alloc_permit`), before the columns are freed. | 09 | 4 · Run it: the kernel on the simulator |
# | `cute.arch.retrieve_tmem_ptr` | `retrieve_tmem_ptr(dtype, alignment, address)`: the TMEM pointer whose address `alloc_tmem` wrote to shared memory. | 09 | Exercise 5 · Capstone: a warp-specialised Blackwell GEMM with its epilogue fused |
# | `cute.arch.setmaxregister_decrease` | `setmaxregister_decrease(n)`: the warpgroup gives up registers, keeping n per thread (PTX `setmaxnreg.dec`). | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.setmaxregister_increase` | `setmaxregister_increase(n)`: the warpgroup takes registers, up to n per thread (PTX `setmaxnreg.inc`). | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cute.arch.sync_threads` | Every thread of the block waits here until all have arrived: CUDA's `__syncthreads()`. | 05 | Run it |
# | `cute.arch.thread_idx` | The thread's index in its block, a triple (x, y, z): CUDA's `threadIdx`. | 00 | Your first kernel |
# | `cute.arch.warp_idx` | The thread's warp in its block (thread index // 32), the same in all 32 lanes. | 05 | Run it |
# | `cute.arch.warp_reduction_max` | `warp_reduction_max(x)`: the largest `x` over the warp's lanes by butterfly shuffles, in every lane (`threads_in_group` as for the sum). | 05 | Version 3 · TiledCopy over a super tile |
# | `cute.arch.warp_reduction_sum` | `warp_reduction_sum(x)`: the sum of `x` over the warp's lanes by butterfly shuffles, in every lane (`threads_in_group=16` sums half-warps). | 05 | Run it |

# %% [markdown]
# ## `cute.nvgpu`: the instructions, as copy and MMA operations
#
# | name | what it is | chapter | where |
# |---|---|---|---|
# | `cute.nvgpu.CopyUniversalOp` | A plain load or store, as a copy operation; `num_bits_per_copy` chooses its width. | 05 | See it |
# | `cute.nvgpu.cpasync.CopyBulkTensorTileG2SMulticastOp` | A TMA load multicast into the shared memory of several CTAs of a cluster. | 08 | 3.3 · TMA: a tile in one instruction |
# | `cute.nvgpu.cpasync.CopyBulkTensorTileG2SOp` | A TMA load: one box of a tensor from global into shared memory. | 08 | 3.3 · TMA: a tile in one instruction |
# | `cute.nvgpu.cpasync.CopyBulkTensorTileS2GOp` | A TMA store: one box from shared into global memory, clipped at the tensor's edge. | 08 | 3.3 · TMA: a tile in one instruction |
# | `cute.nvgpu.cpasync.CopyG2SOp` | `CopyG2SOp(cache_mode=...)`: Ampere's asynchronous global-to-shared copy, `cp.async`. | 07 | 5 · Partitions per thread |
# | `cute.nvgpu.cpasync.LoadCacheMode.ALWAYS` | The `.ca` cache mode of `cp.async`, the default: cached in L1 and L2; 4, 8 or 16 bytes per copy. | 07 | 7 · Run it |
# | `cute.nvgpu.cpasync.LoadCacheMode.GLOBAL` | The `.cg` cache mode of `cp.async`: cached in L2 only, not L1. | 07 | 7 · Run it |
# | `cute.nvgpu.cpasync.make_tiled_tma_atom` | `make_tiled_tma_atom(op, tensor, smem_layout, box)`: the TMA atom (the descriptor) and the tensor's coordinate tensor. | 08 | 3.3 · TMA: a tile in one instruction |
# | `cute.nvgpu.cpasync.tma_partition` | `tma_partition(atom, cta_coord, cta_layout, smem, gmem)`: the shared-memory and global views one TMA copy moves between, box in mode 0. | 08 | 3.3 · TMA: a tile in one instruction |
# | `cute.nvgpu.make_tiled_tma_atom_A` | `make_tiled_tma_atom_A(op, tensor, smem_layout, mma_tiler, tiled_mma)`: the TMA atom and coordinate tensor that load A's tiles for a tcgen05 tiled MMA. | 09 | Exercise 5 · Capstone: a warp-specialised Blackwell GEMM with its epilogue fused |
# | `cute.nvgpu.make_tiled_tma_atom_B` | `make_tiled_tma_atom_B(op, tensor, smem_layout, mma_tiler, tiled_mma)`: the TMA atom and coordinate tensor that load B's tiles for a tcgen05 tiled MMA. | 09 | Exercise 5 · Capstone: a warp-specialised Blackwell GEMM with its epilogue fused |
# | `cute.nvgpu.MmaUniversalOp` | `MmaUniversalOp(dtype)`: one fused multiply-add by one thread, as a 1x1x1 MMA operation. | 07 | 1 · The SIMT kernel: a thread-level MMA |
# | `cute.nvgpu.OperandMajorMode` | Which mode of an MMA operand tile is contiguous: `OperandMajorMode.K` or `OperandMajorMode.MN`. | 08 | 3.6 · The warpgroup MMA |
# | `cute.nvgpu.OperandMajorMode.K` | An MMA operand whose K mode is contiguous (`OperandMajorMode.MN`: M or N is). | 08 | 3.6 · The warpgroup MMA |
# | `cute.nvgpu.tcgen05.commit` | `tcgen05.commit(barrier)`: the mbarrier arrives once every tcgen05 MMA this thread issued before has finished; one elected lane issues it. | 09 | 09 · Blackwell: tcgen05 MMA and tensor memory |
# | `cute.nvgpu.tcgen05.CtaGroup.ONE` | A tcgen05 MMA of one CTA (`cta_group::1`): M 64 or 128. | 09 | 1 · See it: one MMA for the whole CTA |
# | `cute.nvgpu.tcgen05.CtaGroup.TWO` | A tcgen05 MMA shared by the two CTAs of a cluster pair (`cta_group::2`): M 128 or 256, each CTA holding half of A, B and C. | 09 | 09 · Blackwell: tcgen05 MMA and tensor memory |
# | `cute.nvgpu.tcgen05.Field.ACCUMULATE` | `tiled_mma.set(tcgen05.Field.ACCUMULATE, flag)`: whether the next tcgen05 MMAs add to the TMEM accumulator (True) or overwrite it (False, CuTeDSL's start). | 08 | 3.6 · The warpgroup MMA |
# | `cute.nvgpu.tcgen05.find_tmem_tensor_col_offset` | The number of TMEM columns a tensor in tensor memory spans. | 09 | 2.1 · The accumulator in TMEM, and the columns to allocate |
# | `cute.nvgpu.tcgen05.Ld32x32bOp` | `Ld32x32bOp(repetitions)`: the tcgen05.ld of the 32x32b shape: each thread of a warp reads one TMEM lane, 32 bits a column, `repetitions` columns. | 09 | 4 · Run it: the kernel on the simulator |
# | `cute.nvgpu.tcgen05.make_tmem_copy` | `make_tmem_copy(atom, tmem_tensor)`: the TiledCopy of a tcgen05.ld (or st) atom over a TMEM tensor, for the warps that reach its lanes. | 09 | 2.3 · From TMEM to registers |
# | `cute.nvgpu.tcgen05.MmaF16BF16Op` | `tcgen05.MmaF16BF16Op(ab, acc, (M, N, K), cta_group, a_src, a_major, b_major)`: Blackwell's `tcgen05.mma` (UMMA) for fp16/bf16 operands, issued by one thread for a CTA or a CTA pair, the accumulator in TMEM. | 09 | 1 · See it: one MMA for the whole CTA |
# | `cute.nvgpu.tcgen05.OperandSource.SMEM` | The tcgen05 MMA reads A from shared memory (through a matrix descriptor). | 08 | 3.6 · The warpgroup MMA |
# | `cute.nvgpu.tcgen05.Repetition.x16` | 16 repetitions of a TMEM copy's shape: with 32x32b, 16 columns of each lane. | 09 | Exercise 4 · The epilogue of D = alpha A B^T, 16 columns at a time |
# | `cute.nvgpu.tcgen05.Repetition.x32` | 32 repetitions of a TMEM copy's shape: with 32x32b, 32 columns of each lane. | 09 | 4 · Run it: the kernel on the simulator |
# | `cute.nvgpu.warp.LdMatrix8x8x16bOp` | `LdMatrix8x8x16bOp(transpose, num_matrices)`: `ldmatrix`, a warp loading 1, 2 or 4 8x8 matrices of 16-bit values into registers. | 06 | See it |
# | `cute.nvgpu.warp.MmaF16BF16Op` | `MmaF16BF16Op(ab_dtype, acc_dtype, shape)`: the warp-wide `mma.sync` on fp16 or bf16, shape (16, 8, 16) or (16, 8, 8). | 06 | 2. The MMA wants, and make_tiled_copy_A |
# | `cute.nvgpu.warp.StMatrix8x8x16bOp` | `StMatrix8x8x16bOp(transpose, num_matrices)`: `stmatrix`, the inverse of ldmatrix (sm_90). | 06 | Exercise 1 · A round trip through the registers |
# | `cute.nvgpu.warpgroup.commit_group` | Closes the wgmmas issued since the last commit into one group. | 07 | 8.1 · The cp.async groups, by their full names |
# | `cute.nvgpu.warpgroup.fence` | Orders the registers' earlier writes before the wgmmas that follow read them. | 08 | 3.7 · The consumers' main loop |
# | `cute.nvgpu.warpgroup.Field.ACCUMULATE` | `tiled_mma.set(Field.ACCUMULATE, True)`: wgmma adds its product to the accumulators (False overwrites them). | 08 | 3.6 · The warpgroup MMA |
# | `cute.nvgpu.warpgroup.make_smem_layout_atom` | `make_smem_layout_atom(kind, dtype)`: that atom as a swizzled composed layout of `dtype` elements. | 08 | 1 · See it: the 128-byte swizzled atom |
# | `cute.nvgpu.warpgroup.MmaF16BF16Op` | `MmaF16BF16Op(ab, acc, (64, N, 16), a_src, a_major, b_major)`: Hopper's warpgroup MMA (`wgmma`) on fp16 or bf16. | 08 | 3.6 · The warpgroup MMA |
# | `cute.nvgpu.warpgroup.OperandSource.SMEM` | wgmma reads A from shared memory (`OperandSource.RMEM`: from registers). | 08 | 3.6 · The warpgroup MMA |
# | `cute.nvgpu.warpgroup.SmemLayoutAtomKind` | The shared-memory layout atoms TMA and wgmma agree on: K- or MN-major, swizzled over 32, 64 or 128 bytes, or not. | 08 | 1 · See it: the 128-byte swizzled atom |
# | `cute.nvgpu.warpgroup.SmemLayoutAtomKind.K_SW128` | The K-major atom with the 128-byte swizzle: 8 rows of 128 bytes. | 08 | 1 · See it: the 128-byte swizzled atom |
# | `cute.nvgpu.warpgroup.SmemLayoutAtomKind.MN_SW128` | The MN-major atom with the 128-byte swizzle. | 08 | 3.2 · Tiling the atom to the stages |
# | `cute.nvgpu.warpgroup.wait_group` | `wait_group(n)`: waits until at most n wgmma groups are still running. | 07 | 8.1 · The cp.async groups, by their full names |

# %% [markdown]
# ## `cute.runtime`: tensors from outside
#
# | name | what it is | chapter | where |
# |---|---|---|---|
# | `cute.runtime.from_dlpack` | `from_dlpack(t, assumed_align=...)`: a torch (DLPack) tensor as a `cute.Tensor` over the same memory; `assumed_align` promises its alignment. | 02 | Run it |

# %% [markdown]
# ## `cute.math`: functions of register values
#
# | name | what it is | chapter | where |
# |---|---|---|---|
# | `cute.math.exp` | `cute.math.exp(v)`: e to the v, of a scalar or element by element of a register value. | 05 | Exercise 6 · Capstone: a row softmax, from a blank cell |

# %% [markdown]
# ## `cutlass`: numbers, compile-time values, loops, shared memory
#
# | name | what it is | chapter | where |
# |---|---|---|---|
# | `cutlass.Boolean` | The Boolean type of kernel values (a predicate). | 03 | 8. Compile it: what CuTeDSL knows, and what it leaves to run time |
# | `cutlass.const_expr` | `if const_expr(condition):` an `if` decided while tracing; the condition must be a Python value. | 07 | 7 · Run it |
# | `cutlass.Constexpr` | Annotation: the argument is a compile-time constant, its Python value used while tracing. | 00 | Your first kernel |
# | `cutlass.experimental.primitives` | CuTeDSL 4.8.1's experimental low-level calls, `tcgen05_fence` among them (imported as `primitives`; names that may change). | 09 | 3 · Compiled for real |
# | `cutlass.experimental.primitives.tcgen05_fence` | `tcgen05_fence("before_thread_sync")` or `("after_thread_sync")`: PTX `tcgen05.fence`, ordering tcgen05 operations across a thread synchronisation (an experimental CuTeDSL 4.8.1 name). | 09 | 3 · Compiled for real |
# | `cutlass.Float16` | The 16-bit float type (fp16), the same as `cute.Float16`. | 05 | 1. The copy atom: how many bits one instruction moves |
# | `cutlass.Float32` | The 32-bit float type, the same as `cute.Float32`; `Float32(0.0)` is a value of it. | 02 | 6. What the compiler makes of it: four 128-bit loads per operand per thread |
# | `cutlass.Float32.inf` | Infinity in fp32; `-cutlass.Float32.inf` is below every number (the start of a running maximum). | 05 | Exercise 6 · Capstone: a row softmax, from a blank cell |
# | `cutlass.Int16` | The 16-bit signed integer type. | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cutlass.Int32` | The 32-bit signed integer type; `Int32(0)` is a run-time integer of it. | 04 | See it |
# | `cutlass.Int64` | The 64-bit signed integer type (an mbarrier is one 8-byte word). | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `cutlass.max` | `cutlass.max(a, b)`: the larger of two values, run-time values included. | 05 | Exercise 6 · Capstone: a row softmax, from a blank cell |
# | `cutlass.memory.get_num_tmem_alloc_cols` | TMEM columns to allocate for a TMEM tensor or a list of them: their columns summed, rounded up to a power of two of at least 32; more than 512 is refused. | 09 | 2.1 · The accumulator in TMEM, and the columns to allocate |
# | `cutlass.memory.SmemAllocator` | `SmemAllocator()` hands out the block's shared memory: `allocate_tensor(type, layout, alignment)` carves a tensor out of it (the older `cutlass.utils.SmemAllocator` still works, with a deprecation warning). | 05 | Version 1 · CUDA style |
# | `cutlass.min` | `min(a, b)` of run-time values. | 05 | Exercise 6 · Capstone: a row softmax, from a blank cell |
# | `cutlass.range` | `range(start, stop, step)` in a kernel: a loop of the compiled program, its index a run-time value. | 04 | Exercise 5 · One block per row strip |
# | `cutlass.range_constexpr` | `range_constexpr(n)`: a loop Python runs while tracing, unrolled into the kernel; n must be known then. | 02 | Run it |
# | `cutlass.tensor_utils.LayoutEnum` | Whether a 2-D tensor is row-major (`LayoutEnum.ROW_MAJOR`) or column-major (`LayoutEnum.COL_MAJOR`). | 09 | 09 · Blackwell: tcgen05 MMA and tensor memory |
# | `cutlass.tensor_utils.LayoutEnum.ROW_MAJOR` | A tensor whose mode 1 is contiguous (for C or D: N-major). | 09 | 2.3 · From TMEM to registers |
# | `cutlass.utils.blackwell_helpers` | CuTeDSL's host-side helpers for sm_100 kernels: the trivial tiled MMA, operand and epilogue shared-memory layouts and the epilogue's TMEM load. | 09 | 09 · Blackwell: tcgen05 MMA and tensor memory |
# | `cutlass.utils.blackwell_helpers.compute_epilogue_tile_shape` | `compute_epilogue_tile_shape((M, N, K), use_2cta, layout_d, d_dtype)`: the strip of the accumulator the epilogue moves at a time. | 09 | 2.3 · From TMEM to registers |
# | `cutlass.utils.blackwell_helpers.get_tmem_load_op` | `get_tmem_load_op(tile, layout_d, d_dtype, acc_dtype, epi_tile, use_2cta)`: the tcgen05.ld copy atom (shape and repetitions) that brings one epilogue strip of TMEM to registers. | 09 | 2.3 · From TMEM to registers |
# | `cutlass.utils.blackwell_helpers.make_smem_layout_a` | `make_smem_layout_a(tiled_mma, (M, N, K), dtype, stages)`: the staged, swizzled shared-memory layout of A's tile one CTA holds for that MMA. | 08 | 3.2 · Tiling the atom to the stages |
# | `cutlass.utils.blackwell_helpers.make_smem_layout_b` | `make_smem_layout_b(tiled_mma, (M, N, K), dtype, stages)`: the same for B. | 09 | 2.2 · The shared-memory layouts of A and B |
# | `cutlass.utils.blackwell_helpers.make_trivial_tiled_mma` | `make_trivial_tiled_mma(a_dtype, b_dtype, a_major, b_major, acc_dtype, cta_group, (M, N))`: the tcgen05 MMA for those types as a TiledMMA whose instruction shape is the tile. | 09 | 2.1 · The accumulator in TMEM, and the columns to allocate |

# %% [markdown]
# ## Methods and properties of CuTeDSL objects
#
# | name | what it is | chapter | where |
# |---|---|---|---|
# | `.allocate_array` | `smem.allocate_array(dtype, n, byte_alignment=...)`: n elements of shared memory, as a pointer to the first. | 08 | 3.5 · The pipeline: a ring of stages, two barriers each |
# | `.allocate_tensor` | `smem.allocate_tensor(dtype, layout, byte_alignment, swizzle=...)`: a tensor in shared memory. | 05 | Version 1 · CUDA style |
# | `.element_type` | A tensor's element type (`Float32`, ...). | 02 | 6. What the compiler makes of it: four 128-bit loads per operand per thread |
# | `.fill` | `t.fill(x)`: sets every element of the tensor to x. | 05 | Version 2 · composition: the tile seen through the TV layout |
# | `.get_flat_coord` | `layout.get_flat_coord(i)`: the coordinate, one integer per top-level mode, that the layout maps to i (a thread layout read backwards: thread i's place). | 04 | 2. local_partition is a zipped divide plus a slice of the tile |
# | `.get_slice` | `tiled.get_slice(t)`: thread t's slice of a TiledCopy or TiledMMA, which partitions tensors for it. | 05 | 05 · TiledCopy: a reduction written four ways |
# | `.get_tile_size` | `tiled_mma.get_tile_size(i)`: the TiledMMA's tile size along mode i (0: M, 1: N, 2: K). | 07 | 1 · The SIMT kernel: a thread-level MMA |
# | `.inner` | A composed layout's inner function (the swizzle). | 08 | 1 · See it: the 128-byte swizzled atom |
# | `.iterator` | A tensor's pointer: where its element 0 is. | 05 | Version 4 · any reduced dimension |
# | `.launch` | `kernel(args).launch(grid=..., block=..., smem=..., cluster=...)`: launches the kernel, CUDA's `<<<grid, block>>>`. | 00 | Your first kernel |
# | `.layout` | A tensor's layout. | 01 | 6. Coalesce: the same function with fewer modes |
# | `.layout_dst_tv` | A copy atom's (thread, value) layout of what each thread writes. | 05 | 1. The copy atom: how many bits one instruction moves |
# | `.layout_dst_tv_tiled` | A TiledCopy's TV layout in the destination's numbering. | 06 | 3. The reference numbering is the destination |
# | `.layout_src_tv` | A copy atom's (thread, value) layout of what each thread reads. | 05 | 1. The copy atom: how many bits one instruction moves |
# | `.layout_src_tv_tiled` | A TiledCopy's TV layout in the source's numbering. | 06 | 2. The MMA wants, and make_tiled_copy_A |
# | `.layout_tv_tiled` | A TiledCopy's (thread, value) -> position layout over its tile. | 05 | See it |
# | `.load` | `t.load()`: the tensor's values, read into registers as one value (a `TensorSSA`). | 02 | 6. What the compiler makes of it: four 128-bit loads per operand per thread |
# | `.make_fragment_A` | `tiled_mma.make_fragment_A(partition)`: the thread's registers for A (for wgmma from shared memory: descriptors). | 06 | 4. retile: the MMA's registers seen by the copy |
# | `.make_fragment_B` | `tiled_mma.make_fragment_B(partition)`: the thread's registers for B. | 06 | Run it |
# | `.make_fragment_C` | `tiled_mma.make_fragment_C(partition)`: the thread's accumulator registers. | 07 | One warp, one tile, running |
# | `.mark_layout_dynamic` | `from_dlpack(t).mark_layout_dynamic()`: shape and strides become run-time values, except the stride that is 1. | 03 | 8. Compile it: what CuTeDSL knows, and what it leaves to run time |
# | `.outer` | A composed layout's outer layout. | 08 | 1 · See it: the 128-byte swizzled atom |
# | `.partition_A` | `thread_mma.partition_A(t)`: the thread's part of an A tile, (MMA, MMA_M, MMA_K). | 06 | 4. retile: the MMA's registers seen by the copy |
# | `.partition_B` | `thread_mma.partition_B(t)`: the thread's part of a B tile (N x K). | 06 | 4. retile: the MMA's registers seen by the copy |
# | `.partition_C` | `thread_mma.partition_C(t)`: the thread's part of a C tile. | 06 | 4. retile: the MMA's registers seen by the copy |
# | `.partition_D` | `thread_copy.partition_D(t)`: the thread's elements of a copy's destination tile. | 05 | 3. get_slice and partition_S: one thread's elements of a bigger tile |
# | `.partition_S` | `thread_copy.partition_S(t)`: the thread's elements of a copy's source tile. | 04 | The add with tails |
# | `.reduce` | `v.reduce(op, init, profile)`: reduces a loaded value over the modes the profile marks (`None` keeps a mode; 0 reduces all). | 05 | Version 2 · composition: the tile seen through the TV layout |
# | `.retile` | `thread_copy.retile(fragment)`: the thread's registers (an MMA fragment) grouped per copy instruction. | 05 | 4. What partition_S does to the coordinate space: tidfrg_S |
# | `.set` | `tiled_mma.set(field, value)`: sets a run-time field of the MMA, such as `Field.ACCUMULATE`. | 08 | 3.6 · The warpgroup MMA |
# | `.shape` | A layout's or tensor's shape. | 01 | See it |
# | `.store` | `t.store(v)`: writes a loaded value (a `TensorSSA`) into the tensor. | 02 | 6. What the compiler makes of it: four 128-bit loads per operand per thread |
# | `.stride` | A layout's or tensor's stride. | 01 | 01 · Layouts |
# | `.thr_layout_vmnk` | A TiledMMA's (thread of the atom, atom along M, N, K) -> thread index layout. | 06 | 6. The 2x2 TiledMMA of sgemm_sm80 |
# | `.tiler_mn` | A TiledCopy's tile, one layout per mode. | 05 | 2. make_tiled_copy_tv: the atom over a thread layout and a value layout |
# | `.tv_layout_A` | An MMA atom's (thread, value) -> element layout of A. | 07 | 2 · The tensor-core atom: `mma.sync.m16n8k16` |
# | `.tv_layout_A_tiled` | A TiledMMA's (thread, value) -> element layout of A over its whole tile. | 06 | 2. The MMA wants, and make_tiled_copy_A |
# | `.tv_layout_B` | An MMA atom's (thread, value) -> element layout of B (N x K). | 07 | 2 · The tensor-core atom: `mma.sync.m16n8k16` |
# | `.tv_layout_B_tiled` | A TiledMMA's (thread, value) -> element layout of B over its whole tile. | 06 | 2. The MMA wants, and make_tiled_copy_A |
# | `.tv_layout_C` | An MMA atom's (thread, value) -> element layout of C. | 07 | 2 · The tensor-core atom: `mma.sync.m16n8k16` |
# | `.tv_layout_C_tiled` | A TiledMMA's (thread, value) -> element layout of C over its whole tile. | 06 | 2. The MMA wants, and make_tiled_copy_A |
# | `.width` | A numeric type's size in bits (`Float16.width` is 16). | 01 | 3. `make_ordered_layout`: say which mode is fastest |
