"""Shared memory carved by hand (cutekit/sim/memory/structs.py), as NVIDIA's tensorop_gemm and flash_attention_v2 carve
it: cute.struct layouts equal to CuTeDSL 4.8.1's, SmemAllocator.allocate of bytes, structs and scalars, views of
one allocation with several element types, pointer swizzles on byte addresses, and the CuTe habits those
kernels rely on (a slice past the last tile copied with every predicate false, `t[None] = values`, cute.compile
called with the run-time arguments only)."""
import numpy
import pytest

from cutekit.sim import OutOfBoundsError


def _mixed_struct(cute, cutlass):
    @cute.struct
    class Inner:
        x: cutlass.Int8
        y: cute.struct.Align[cutlass.Float32, 8]

    @cute.struct
    class Mixed:
        flag: cutlass.Int8
        tile: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 100], 16]
        count: cutlass.Int32
        inner: Inner
        big: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, 3], 1024]
        b: cute.struct.MemRange[cutlass.Boolean, 5]
        last: cutlass.Int16
    return Inner, Mixed


def test_struct_offsets_size_and_alignment_are_cutedsls(sim):
    import cutlass
    import cutlass.cute as cute
    inner, mixed = _mixed_struct(cute, cutlass)
    # read off CuTeDSL 4.8.1 (cute.struct in cutlass/cute/core.py) for the same two structs
    assert mixed._offsets == {"flag": 0, "tile": 16, "count": 216, "inner": 224, "big": 1024, "b": 1036,
                              "last": 1042}
    assert (mixed.size_in_bytes(), mixed.__alignof__()) == (2048, 1024)
    assert inner._offsets == {"x": 0, "y": 8} and inner.__sizeof__() == 16


def test_one_allocation_seen_with_several_element_types(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.struct
    class Wide:
        words: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, 8], 16]

    @cute.struct
    class Narrow:
        halves: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 8], 16]
        bytes_: cute.struct.MemRange[cutlass.Int8, 4]

    @cute.kernel
    def reinterpret(gIn: cute.Tensor, gHalves: cute.Tensor, gBytes: cute.Tensor):
        raw = cutlass.memory.SmemAllocator().allocate(max(Wide.size_in_bytes(), Narrow.size_in_bytes()),
                                                     byte_alignment=16)
        words = Wide(raw).words.get_tensor(cute.make_layout(8))
        for i in range(8):
            words[i] = gIn[i]
        narrow = Narrow(raw)
        halves = narrow.halves.get_tensor(cute.make_layout(8))
        for i in range(8):
            gHalves[i] = halves[i]
        for i in range(4):
            gBytes[i] = narrow.bytes_[i]

    x = numpy.array([1.5, -2.0, 3.25, 0.0, 7.0, 1e-3, -1e4, 2.0], numpy.float32)
    halves, raw_bytes = numpy.zeros(8, numpy.float16), numpy.zeros(4, numpy.int8)
    reinterpret(from_dlpack(x), from_dlpack(halves), from_dlpack(raw_bytes)).launch()
    numpy.testing.assert_array_equal(halves.view(numpy.uint16), x[:4].view(numpy.uint16))
    numpy.testing.assert_array_equal(raw_bytes, x[4:5].view(numpy.int8))   # bytes 16-19: the fifth float


def test_structs_laid_over_one_allocation_share_its_elements(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def overlay(gOut: cute.Tensor):
        @cute.struct
        class Mainloop:
            a: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 64], 16]
            b: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 64], 16]

        @cute.struct
        class Epilogue:
            c: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 128], 16]

        tidx, _, _ = cute.arch.thread_idx()
        storage = cutlass.memory.SmemAllocator().allocate(
            max(Mainloop.size_in_bytes(), Epilogue.size_in_bytes()), byte_alignment=16)
        sB = Mainloop(storage).b.get_tensor(cute.make_layout(64))
        sC = Epilogue(storage).c.get_tensor(cute.make_layout(128))
        sB[tidx] = cutlass.Float16(tidx)
        cute.arch.sync_threads()
        gOut[tidx] = sC[64 + tidx]

    out = numpy.zeros(64, numpy.float16)
    overlay(from_dlpack(out)).launch(block=[64, 1, 1])
    numpy.testing.assert_array_equal(out, numpy.arange(64))


def test_a_pointer_swizzle_acts_on_byte_addresses(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def swizzled_store(gOut: cute.Tensor, gPrinted: cute.Tensor):
        @cute.struct
        class Tile:
            a: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 1024], 1024]

        tile = cutlass.memory.SmemAllocator().allocate(Tile)
        plain = tile.a.get_tensor(cute.make_layout(1024))
        for i in range(1024):
            plain[i] = 0.0
        swizzled = tile.a.get_tensor(cute.make_layout(1024), swizzle=cute.make_swizzle(3, 4, 3))
        swizzled[72] = 1.0
        gPrinted[0] = 1.0 if str(swizzled.iterator).endswith("S<3,4,3>") or "S<3,4,3>" in str(swizzled) else 0.0
        for i in range(1024):
            gOut[i] = plain[i]

    out, printed = numpy.zeros(1024, numpy.float16), numpy.zeros(1, numpy.float16)
    swizzled_store(from_dlpack(out), from_dlpack(printed)).launch()
    # CuTeDSL compiles this store to byte (144 & -896) = 128 of the 1024-aligned tile: 144 ^ ((144 >> 3) & 112)
    assert numpy.flatnonzero(out).tolist() == [64]
    assert printed[0] == 1.0


def test_a_swizzled_layout_on_an_unaligned_member_is_refused_by_name(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def unaligned(gOut: cute.Tensor):
        @cute.struct
        class Tiles:
            pad: cutlass.Float16
            a: cute.struct.MemRange[cutlass.Float16, 512]

        tiles = cutlass.memory.SmemAllocator().allocate(Tiles)
        layout = cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
        tiles.a.get_tensor(layout)[0, 0] = 1.0

    with pytest.raises(Exception, match="starts 1 elements into its allocation"):
        unaligned(from_dlpack(numpy.zeros(1, numpy.float16))).launch()


def test_allocate_gives_scalars_and_struct_members_that_read_and_write(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def scalars(gOut: cute.Tensor):
        @cute.struct
        class Counters:
            total: cutlass.Int32
            scale: cutlass.Float32

        smem = cutlass.memory.SmemAllocator()
        counters = smem.allocate(Counters)
        alone = smem.allocate(cutlass.Float32)
        counters.total = 41
        counters.scale = 0.5
        alone.store(2.0)
        gOut[0] = counters.total.ptr.load() + 1
        gOut[1] = counters.scale.ptr.load() * alone.load()

    out = numpy.zeros(2, numpy.float32)
    scalars(from_dlpack(out)).launch()
    numpy.testing.assert_array_equal(out, [42, 1.0])


def test_a_slice_past_the_last_tile_copies_with_false_predicates_and_refuses_reads(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def past_the_end(gIn: cute.Tensor, gOut: cute.Tensor, read_it: cutlass.Constexpr):
        tiles = cute.zipped_divide(gIn, (8,))                      # (8, 2): two tiles
        staged = cutlass.memory.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(8), 16)
        pred = cute.make_rmem_tensor(cute.make_layout(2), cutlass.Boolean)
        pred.fill(False)
        atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float32, num_bits_per_copy=128)
        beyond = tiles[None, 2]                                     # the tile after the last, as CuTe allows
        cute.copy(atom, cute.zipped_divide(beyond, (4,)), cute.zipped_divide(staged, (4,)), pred=pred)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        gOut[0] = staged[0] + 1.0                                   # zero filled: 1
        if cutlass.const_expr(read_it):
            gOut[1] = beyond[0]

    x, out = numpy.arange(16, dtype=numpy.float32), numpy.zeros(2, numpy.float32)
    past_the_end(from_dlpack(x, assumed_align=16), from_dlpack(out), False).launch()
    assert out[0] == 1.0
    with pytest.raises(OutOfBoundsError, match="coordinate 2 is out of range"):
        past_the_end(from_dlpack(x, assumed_align=16), from_dlpack(out), True).launch()


def test_a_coordinate_tensor_slices_past_its_shape(sim):
    import cutlass.cute as cute
    sliced = cute.make_identity_tensor((4, 4, 1))[None, None, 1]       # CuTeDSL 4.8.1 prints the same
    assert str(sliced) == "tensor<(0,0,1) o (4,4):(1@0,1@1)>" and sliced[2, 3] == (2, 3, 1)


def test_assigning_values_to_a_slice_stores_every_element(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def assign(gIn: cute.Tensor, gOut: cute.Tensor):
        frag = cute.make_rmem_tensor(cute.make_layout((2, 4)), cutlass.Float32)
        frag.store(gIn.load())
        halves = cute.make_fragment_like(frag, cutlass.Float16)
        halves[None] = (frag.load() * 2.0).to(cutlass.Float16)
        halves[None, 3] = frag[None, 0].load().to(cutlass.Float16)
        gOut.store(halves.load())

    x, out = numpy.arange(8, dtype=numpy.float32).reshape(4, 2).T, numpy.zeros((4, 2), numpy.float16).T
    assign(from_dlpack(x), from_dlpack(out)).launch()
    want = x * 2
    want[:, 3] = x[:, 0]
    numpy.testing.assert_array_equal(out, want)


def test_compile_keeps_constexpr_arguments_and_takes_the_rest_at_the_call(sim):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.kernel
    def scale(gX: cute.Tensor, factor: cutlass.Constexpr):
        tidx, _, _ = cute.arch.thread_idx()
        gX[tidx] = gX[tidx] * factor

    @cute.jit
    def run(factor: cutlass.Constexpr, mX: cute.Tensor, stream, offset: cutlass.Constexpr = 0):
        scale(mX, factor + offset).launch(block=[4, 1, 1])

    x = numpy.ones(4, numpy.float32)
    compiled = cute.compile(run, 3, from_dlpack(x), 0, offset=1)    # as NVIDIA's compile_bmm compiles bmm
    compiled(from_dlpack(x), 0)                                      # and its run() calls it
    numpy.testing.assert_array_equal(x, 4)
