"""A small CuTeDSL kernel for the compile_to_ptx tests: each thread copies `vector` contiguous floats of a
row-major (M, N) tensor with one copy atom of `vector * 32` bits."""
import cutlass
import cutlass.cute as cute


@cute.kernel
def copy_kernel(source: cute.Tensor, destination: cute.Tensor, tiled_copy: cute.TiledCopy):
    thread, _, _ = cute.arch.thread_idx()
    block, _, _ = cute.arch.block_idx()
    thread_copy = tiled_copy.get_slice(thread)
    from_tile = thread_copy.partition_S(source[(None, None), block])
    to_tile = thread_copy.partition_D(destination[(None, None), block])
    fragment = cute.make_fragment_like(from_tile)
    cute.copy(tiled_copy, from_tile, fragment)
    cute.copy(tiled_copy, fragment, to_tile)


@cute.jit
def copy(source: cute.Tensor, destination: cute.Tensor, vector: cutlass.Constexpr = 4):
    threads = cute.make_ordered_layout((4, 32), order=(1, 0))
    values = cute.make_ordered_layout((1, vector), order=(1, 0))
    tiler, tv_layout = cute.make_layout_tv(threads, values)
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), source.element_type,
                               num_bits_per_copy=vector * source.element_type.width)
    tiled_copy = cute.make_tiled_copy_tv(atom, threads, values)
    tiled_source = cute.zipped_divide(source, tiler)
    tiled_destination = cute.zipped_divide(destination, tiler)
    copy_kernel(tiled_source, tiled_destination, tiled_copy).launch(
        grid=[cute.size(tiled_source, mode=[1]), 1, 1], block=[cute.size(tv_layout, mode=[0]), 1, 1])
