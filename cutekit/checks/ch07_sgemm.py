"""Chapter 07 exercises: the tensor-core GEMM's layouts (TiledMMA, swizzle, pipeline stages, S2R copy) and
its main loop.

Layout answers are asked on random warp arrangements, row widths and pipeline depths, so an answer tuned to
the chapter's 128x128x64 kernel meets other cases. The swizzle is graded by counting bank conflicts with the
simulator's bank model (`cutekit.sim.wavefronts`); the main loop runs inside a small tensor-core GEMM on the
simulator, which reports wrong results and shared-memory races by name.
"""
from __future__ import annotations

import types

from .common import case_text, cutedsl_gives_the_same, each_outcome
from .grading import Criterion, Exercise, Verdict, failed, passed
from .kernels import gpu_median_ms, on_gpu

THIS_MODULE = __name__
LDMATRIX_SOURCE = "(32,8):(8,1)"
LDMATRIX_DESTINATION = "(32,(2,4)):(2,(1,64))"


def _warp_cases(rng, count):
    """`count` distinct (warps_m, warps_n) arrangements, never only the chapter's 2x2, at least one not square."""
    choices = [(1, 1), (2, 1), (1, 2), (2, 2), (4, 1), (1, 4), (4, 2), (2, 4)]
    while True:
        picked = rng.sample(choices, count)
        if any(m != n for m, n in picked):
            return picked


def reference_tiled_mma(warps_m, warps_n, cute=None):
    """The kernel's TiledMMA generalized: fp16 m16n8k16 atoms accumulating in fp32 on warps_m x warps_n warps,
    each warp covering 16 columns (two n8 atoms)."""
    if cute is None:
        from cutekit import cute
    atom = cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    return cute.make_tiled_mma(atom, cute.make_layout((warps_m, warps_n, 1)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def _cutedsl_agrees(function: str, arguments, learner_text) -> "callable":
    """A cutedsl-cpu criterion: real CuTeDSL, given each case, prints what the learner's answer printed."""
    return cutedsl_gives_the_same(THIS_MODULE, function, arguments, learner_text, multiline=True)


# ---- ch07.tiled_mma -------------------------------------------------------------------------------------------

def _mma_cases(rng):
    return [{"warps_m": m, "warps_n": n} for m, n in _warp_cases(rng, 4)]


def _mma_facts(tiled_mma) -> dict:
    if not hasattr(tiled_mma, "tv_layout_C_tiled"):
        raise TypeError(f"expected a TiledMMA made with cute.make_tiled_mma, got {type(tiled_mma).__name__}: "
                        f"{tiled_mma!r:.80}")
    return {"text": str(tiled_mma), "vmnk": str(tiled_mma.thr_layout_vmnk),
            "tile": tuple(tiled_mma.get_tile_size(i) for i in range(3)),
            "A": str(tiled_mma.tv_layout_A_tiled), "B": str(tiled_mma.tv_layout_B_tiled),
            "C": str(tiled_mma.tv_layout_C_tiled), "op": str(tiled_mma.op)}


def _ask_mma(answer, case):
    return _mma_facts(answer(case["warps_m"], case["warps_n"]))


def _mma_criterion(key: str, explain) -> "callable":
    @each_outcome
    def judge(outcome) -> Verdict | None:
        want = _mma_facts(reference_tiled_mma(outcome.case["warps_m"], outcome.case["warps_n"]))
        if outcome.value[key] != want[key]:
            return failed(f"{case_text(outcome.case)}: {explain(outcome.case, want[key], outcome.value[key])}")
        return None
    return judge


def _explain_warps(case, want, got):
    m, n = case["warps_m"], case["warps_n"]
    if m != n and got.startswith(f"(32,{n},{m},1)"):
        return f"the thread layout is {got}, warps_n x warps_m; it should be {want} (atom layout (warps_m, warps_n, 1))"
    if got.startswith(f"(32,{m},{n},1)"):
        return (f"the thread layout is {got}; it should be {want}: warp_m fastest (make_layout((warps_m, warps_n, 1)) "
                f"with its default column-major strides)")
    return f"the thread layout (Thr Layout VMNK) is {got}; it should be {want} ({m}x{n} warps of 32 threads)"


def _explain_tile(case, want, got):
    if got[1] == 8 * case["warps_n"]:
        return (f"the tile is {got}, so each warp covers one n8 atom; the kernel's permutation_mnk "
                f"(16*warps_m, 16*warps_n, 16) gives {want}: two n8 atoms per warp, one ldmatrix.x4 for B")
    return f"the tile (M, N, K) is {got}; it should be {want} (permutation_mnk = (16*warps_m, 16*warps_n, 16))"


def _explain_op(case, want, got):
    return (f"the atom is\n{got}\nit should be\n{want}\n(MmaF16BF16Op(Float16, Float32, (16, 8, 16)): fp16 in, "
            "fp32 accumulators, the m16n8k16 shape)")


TILED_MMA = Exercise(
    id="ch07.tiled_mma",
    statement="Write tiled_mma_for(warps_m, warps_n): fp16 mma.sync.m16n8k16 atoms with fp32 accumulators on "
              "warps_m x warps_n warps (warp_m fastest), permuted so every warp covers two n8 atoms side by side.",
    example="tiled_mma_for(2, 2) prints Thr Layout VMNK: (32,2,2,1):(1,32,64,0), Permutation MNK: (32:1,32:1,16:1)",
    cases=_mma_cases,
    ask=_ask_mma,
    criteria=(
        Criterion("the atom: fp16 inputs, fp32 accumulators, 16x8x16", "reference", 1, _mma_criterion("op", _explain_op)),
        Criterion("warps_m x warps_n warps, warp_m fastest", "reference", 1, _mma_criterion("vmnk", _explain_warps)),
        Criterion("the tile is (16 warps_m, 16 warps_n, 16): two n8 atoms per warp", "reference", 1,
                  _mma_criterion("tile", _explain_tile)),
        Criterion("every thread holds the same A, B and C elements as the kernel's TiledMMA", "reference", 1,
                  _mma_criterion("C", lambda case, want, got: f"tv_layout_C_tiled is {got}; it should be {want}")),
        Criterion("real CuTeDSL prints the same TiledMMA", "cutedsl-cpu", 1,
                  _cutedsl_agrees("tiled_mma_in_cutedsl", lambda case: (case["warps_m"], case["warps_n"]),
                                  lambda value: value["text"])),
    ),
)


# ---- ch07.swizzle ---------------------------------------------------------------------------------------------

ROW_CASES = [(32, 16), (64, 16), (128, 16), (16, 32), (32, 32), (64, 32)]   # (row elements, element bits)


def _swizzle_cases(rng):
    while True:
        picked = rng.sample(ROW_CASES, 4)
        widths = {row * bits // 8 for row, bits in picked}
        if any(bits == 32 for _, bits in picked) and 64 in widths and len(widths) >= 2 and (64, 16) in picked:
            return [{"row_elements": row, "element_bits": bits} for row, bits in picked]


def _bank_counts(swizzle_bits, row_elements: int, element_bits: int) -> dict:
    """Conflicts of the ldmatrix reads and the cp.async writes of two 8-row atoms, each request served as the
    hardware serves 16-byte accesses (8 lanes per phase), and the 16-byte vectors the swizzle splits."""
    from cutekit import cute
    from cutekit.sim import wavefronts
    B, M, S = swizzle_bits
    swizzle = cute.make_swizzle(B, M, S)
    element_bytes = element_bits // 8
    vector = 16 // element_bytes
    chunks = row_elements // vector
    rows = 16

    def address(row, chunk):
        return swizzle(row * row_elements + chunk * vector) * element_bytes

    split = 0
    for row in range(rows):
        for chunk in range(chunks):
            first = swizzle(row * row_elements + chunk * vector)
            if first % vector or any(swizzle(row * row_elements + chunk * vector + i) != first + i
                                     for i in range(vector)):
                split += 1
    reads = 0
    for first_row in range(0, rows, 8):           # ldmatrix: 8 lanes give the same chunk of 8 consecutive rows
        for chunk in range(chunks):
            lanes = [(lane, [address(first_row + lane, chunk)]) for lane in range(8)]
            reads += wavefronts(lanes, 16) - 1
    writes = 0
    order = [(row, chunk) for row in range(rows) for chunk in range(chunks)]   # lanes walk along the rows
    for start in range(0, len(order), 8):
        lanes = [(lane, [address(*order[start + lane])]) for lane in range(8)]
        writes += wavefronts(lanes, 16) - 1
    return {"split": split, "reads": reads, "writes": writes}


def _ask_swizzle(answer, case):
    value = answer(case["row_elements"], case["element_bits"])
    if not isinstance(value, (tuple, list)) or len(value) != 3 or not all(isinstance(v, int) for v in value):
        raise TypeError(f"expected a tuple (B, M, S) of three ints, got {value!r}")
    if not all(0 <= v <= 8 for v in value):
        raise ValueError(f"(B, M, S) = {tuple(value)}: each should be between 0 and 8 for a shared-memory atom")
    return {"bits": tuple(value), **_bank_counts(tuple(value), case["row_elements"], case["element_bits"])}


def _swizzle_criterion(key: str, hint) -> "callable":
    @each_outcome
    def judge(outcome) -> Verdict | None:
        if outcome.value[key]:
            case = outcome.case
            row_bytes = case["row_elements"] * case["element_bits"] // 8
            return failed(f"rows of {case['row_elements']} x {case['element_bits']}-bit values ({row_bytes} bytes), "
                          f"Swizzle<{','.join(map(str, outcome.value['bits']))}>: {hint(case, outcome.value)}")
        return None
    return judge


def _split_hint(case, value):
    vector = 128 // case["element_bits"]
    return (f"{value['split']} of the 16-byte vectors are split apart, so a 128-bit cp.async or ldmatrix row no "
            f"longer lands in 16 contiguous bytes: M is the number of offset bits a vector spans "
            f"({vector} elements = {vector.bit_length() - 1} bits), and the XOR must leave them alone")


def _reads_hint(case, value):
    row_bytes = case["row_elements"] * case["element_bits"] // 8
    extra = (" Rows narrower than 128 bytes share a 128-byte line: the row bits to XOR start above the ones "
             "that already separate them." if row_bytes < 128 else "")
    return (f"the ldmatrix reads (chunk c of 8 consecutive rows) need {value['reads']} extra passes; the XOR "
            f"must take the row number's bits (offset bit log2(row elements) up: S = that minus M) into the "
            f"16-byte chunk bits, B of them (at most 3: 8 chunks of 16 bytes fill the 32 banks).{extra}")


def _writes_hint(case, value):
    return (f"the cp.async writes (consecutive lanes along a row) need {value['writes']} extra passes: B must not "
            "exceed the chunk bits of a row, or one row's chunks fold onto the same banks")


SWIZZLE = Exercise(
    id="ch07.swizzle",
    statement="Write swizzle_for(row_elements, element_bits): (B, M, S) of the Swizzle that makes the cp.async "
              "writes and the ldmatrix reads of a K-major shared-memory atom (8 rows of row_elements) conflict-free.",
    example="swizzle_for(64, 16) == (3, 3, 3): the kernel's 8 x 64 fp16 atom",
    cases=_swizzle_cases,
    ask=_ask_swizzle,
    criteria=(
        Criterion("16-byte vectors stay whole", "reference", 1, _swizzle_criterion("split", _split_hint)),
        Criterion("the ldmatrix reads are conflict-free", "reference", 2, _swizzle_criterion("reads", _reads_hint)),
        Criterion("the cp.async writes are conflict-free", "reference", 1, _swizzle_criterion("writes", _writes_hint)),
    ),
)


# ---- ch07.pipeline_stages -------------------------------------------------------------------------------------

def _pipeline_cases(rng):
    cases = [{"k_tiles": rng.randint(6, 10), "stages": 3}, {"k_tiles": rng.randint(7, 12), "stages": rng.choice([4, 5])},
             {"k_tiles": rng.randint(4, 8), "stages": 2}, {"k_tiles": rng.randint(1, 3), "stages": rng.choice([4, 5])}]
    return cases


def reference_schedule(k_tiles: int, stages: int) -> list:
    """The kernel's main loop: iteration k reads stage k % stages and refills stage (k - 1) % stages, the one
    finished in the previous iteration, with k-tile k + stages - 1 while there is one."""
    plan = []
    for k_tile in range(k_tiles):
        upcoming = k_tile + stages - 1
        plan.append((k_tile % stages, upcoming % stages, upcoming) if upcoming < k_tiles else (k_tile % stages, None, None))
    return plan


def _ask_pipeline(answer, case):
    plan = answer(case["k_tiles"], case["stages"])
    if not isinstance(plan, (list, tuple)) or not all(isinstance(step, (list, tuple)) and len(step) == 3 for step in plan):
        raise TypeError(f"expected a list of (read_stage, write_stage, loaded_k_tile) tuples, got {plan!r:.120}")
    if len(plan) != case["k_tiles"]:
        raise ValueError(f"expected one step per k-tile ({case['k_tiles']}), got {len(plan)}")
    return [tuple(None if v is None else int(v) for v in step) for step in plan]


def _replay(case, plan):
    """Play the schedule against the stages' contents; the first problem as (kind, text), or None."""
    stages, k_tiles = case["stages"], case["k_tiles"]
    holds = {stage: stage for stage in range(min(stages - 1, k_tiles))}    # filled before the loop
    for k_tile, (read, write, loaded) in enumerate(plan):
        if holds.get(read) != k_tile:
            return "read", (f"iteration {k_tile} reads stage {read}, which holds k-tile {holds.get(read)}; k-tile "
                            f"{k_tile} is in stage {next((s for s, k in holds.items() if k == k_tile), None)} "
                            f"(the prologue put k-tile s in stage s, and each refill goes where the last one left off)")
        if write is not None:
            if write == read:
                return "write", (f"iteration {k_tile} refills stage {write} while it multiplies from it: a race; "
                                 "refill the stage finished in the previous iteration")
            if holds.get(write) is not None and holds[write] > k_tile:
                return "write", (f"iteration {k_tile} refills stage {write}, which still holds k-tile {holds[write]} "
                                 "that has not been multiplied yet")
            if not 0 <= write < stages:
                return "write", f"iteration {k_tile} writes stage {write}, there are only {stages}"
            holds[write] = loaded
    return None


def _pipeline_criterion(kind: str) -> "callable":
    @each_outcome
    def judge(outcome) -> Verdict | None:
        found = _replay(outcome.case, outcome.value)
        if found and (kind == "read" or found[0] == kind):
            if kind == "write" or found[0] == "read":
                return failed(f"{case_text(outcome.case)}: {found[1]}")
        return None
    return judge


@each_outcome
def _loads_criterion(outcome) -> Verdict | None:
    case = outcome.case
    want = [step[2] for step in reference_schedule(case["k_tiles"], case["stages"])]
    got = [step[2] for step in outcome.value]
    if got == want:
        return None
    late = [k for k in got if k is not None and k >= case["k_tiles"]]
    why = (f"k-tile {late[0]} does not exist (there are {case['k_tiles']}): load None once none is left"
           if late else "iteration k loads k-tile k + stages - 1 (stages - 1 are in flight ahead of it)")
    return failed(f"{case_text(case)}: the loaded k-tiles are {got}, they should be {want}: {why}")


PIPELINE_STAGES = Exercise(
    id="ch07.pipeline_stages",
    statement="Write schedule(k_tiles, stages): for each main-loop iteration, (read_stage, write_stage, "
              "loaded_k_tile), with (read_stage, None, None) when no k-tile is left to load.",
    example="schedule(4, 3) == [(0, 2, 2), (1, 0, 3), (2, None, None), (0, None, None)]",
    cases=_pipeline_cases,
    ask=_ask_pipeline,
    criteria=(
        Criterion("each iteration reads the stage that holds its k-tile", "reference", 2, _pipeline_criterion("read")),
        Criterion("each refill goes to a stage nobody still needs", "reference", 1, _pipeline_criterion("write")),
        Criterion("it loads k-tile k + stages - 1, and nothing past the last k-tile", "reference", 1, _loads_criterion),
    ),
)


# ---- ch07.s2r_copy --------------------------------------------------------------------------------------------

def _s2r_cases(rng):
    return [{"warps_m": m, "warps_n": n, "operand": operand}
            for (m, n), operand in zip(_warp_cases(rng, 4), ("A", "B", "A", "B"))]


def _copy_facts(tiled_copy) -> dict:
    if not hasattr(tiled_copy, "layout_tv_tiled"):
        raise TypeError(f"expected a TiledCopy, got {type(tiled_copy).__name__}: {tiled_copy!r:.80}")
    return {"text": str(tiled_copy), "src": str(tiled_copy.layout_src_tv), "dst": str(tiled_copy.layout_dst_tv),
            "tiled": str(tiled_copy.layout_tv_tiled), "tiler": str(tiled_copy.tiler_mn)}


def _ask_s2r(answer, case):
    return _copy_facts(answer(reference_tiled_mma(case["warps_m"], case["warps_n"]), case["operand"]))


def _reference_s2r(case):
    from cutekit import cute
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cute.Float16)
    tiled_mma = reference_tiled_mma(case["warps_m"], case["warps_n"])
    make = cute.make_tiled_copy_A if case["operand"] == "A" else cute.make_tiled_copy_B
    return make(atom, tiled_mma)


@each_outcome
def _s2r_atom(outcome) -> Verdict | None:
    src, dst = outcome.value["src"], outcome.value["dst"]
    if (src, dst) != (LDMATRIX_SOURCE, LDMATRIX_DESTINATION):
        return failed(f"{case_text(outcome.case)}: the atom moves {src} -> {dst}; ldmatrix of four 8x8 "
                      f"matrices, not transposed, moves {LDMATRIX_SOURCE} -> {LDMATRIX_DESTINATION} "
                      "(LdMatrix8x8x16bOp(False, 4) on Float16)")
    return None


def _s2r_field(key: str, words: str) -> "callable":
    @each_outcome
    def judge(outcome) -> Verdict | None:
        want = _copy_facts(_reference_s2r(outcome.case))[key]
        if outcome.value[key] != want:
            operand = outcome.case["operand"]
            return failed(f"{case_text(outcome.case)}: {words} is {outcome.value[key]}, it should be {want} "
                          f"(make_tiled_copy_{operand} takes the layout from the MMA's {operand} operand)")
        return None
    return judge


S2R_COPY = Exercise(
    id="ch07.s2r_copy",
    statement="Write s2r_copy(tiled_mma, operand): the ldmatrix (x4, not transposed) TiledCopy that loads the "
              "MMA's operand 'A' or 'B' from shared memory into exactly the fragments the MMA expects.",
    example="s2r_copy(tiled_mma, 'A').layout_tv_tiled == tiled_mma.tv_layout_A_tiled",
    cases=_s2r_cases,
    ask=_ask_s2r,
    criteria=(
        Criterion("the atom is ldmatrix x4, not transposed, on fp16", "reference", 1, _s2r_atom),
        Criterion("it covers the MMA's (M, K) or (N, K) tile", "reference", 1, _s2r_field("tiler", "the copy's tile")),
        Criterion("every thread receives the MMA's fragment of that operand", "reference", 2,
                  _s2r_field("tiled", "the copy's TV layout")),
        Criterion("real CuTeDSL prints the same TiledCopy", "cutedsl-cpu", 1,
                  _cutedsl_agrees("s2r_copy_in_cutedsl",
                                  lambda case: (case["warps_m"], case["warps_n"], case["operand"]),
                                  lambda value: value["text"])),
    ),
)


# ---- ch07.main_loop -------------------------------------------------------------------------------------------

def _main_loop_cases(rng):
    return [{"k_tiles": 1, "seed": rng.randrange(10_000)}, {"k_tiles": rng.randint(2, 3), "seed": rng.randrange(10_000)}]


def _use_the_simulator(answer):
    """Make `import cutlass` the simulator in this (forked, throw-away) process, and point the answer's own
    `cutlass` / `cute` names at it too (on a GPU machine the notebook imported the real package)."""
    import importlib

    import cutekit
    cutekit.use("sim")
    namespace = getattr(answer, "__globals__", {})
    for key, value in list(namespace.items()):
        name = getattr(value, "__name__", "")
        if isinstance(value, types.ModuleType) and (name == "cutlass" or name.startswith("cutlass.")):
            if not getattr(value, "__cutekit_sim__", False):
                namespace[key] = importlib.import_module(name)


def _main_loop_program(answer):
    """A one-stage tensor-core GEMM, C (fp32) = A B^T with A (M, K) and B (N, K) fp16, one 32x32 tile per
    CTA of 4 warps (the 2x2 TiledMMA), with `answer` as its main loop; built on whatever `cutlass` is
    imported now (the simulator, or real CuTeDSL on a GPU). Returns the host function.

    Only ever called in a worker process (forked for the simulator, fresh for the GPU): it binds this
    module's `cutlass` and `cute`, because CuTeDSL evaluates a kernel's annotations in its module's globals."""
    global cutlass, cute
    import cutlass
    import cutlass.cute as cute
    tile_k = 32
    # real CuTeDSL rewrites Python loops (range_constexpr, range over a k-tile count) only in functions
    # decorated in their source: the learner's plain function is reloaded with @cute.jit on it, and is
    # then inlined into the kernel (the simulator runs it as it is)
    loop = answer if getattr(cutlass, "__cutekit_sim__", False) else _decorated_with_jit(answer)

    @cute.kernel
    def kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, smem_layout: cute.ComposedLayout,
               g2s: cute.TiledCopy, tiled_mma: cute.TiledMma, s2r_A: cute.TiledCopy, s2r_B: cute.TiledCopy):
        tidx, _, _ = cute.arch.thread_idx()
        m_tile, n_tile, _ = cute.arch.block_idx()
        tiler = (32, 32, tile_k)
        gA = cute.local_tile(mA, tiler, (m_tile, n_tile, None), proj=(1, None, 1))
        gB = cute.local_tile(mB, tiler, (m_tile, n_tile, None), proj=(None, 1, 1))
        gC = cute.local_tile(mC, tiler, (m_tile, n_tile, None), proj=(1, 1, None))
        smem = cutlass.utils.SmemAllocator()
        sA = smem.allocate_tensor(cutlass.Float16, smem_layout, 128)
        sB = smem.allocate_tensor(cutlass.Float16, smem_layout, 128)
        copier = g2s.get_slice(tidx)
        thread_mma = tiled_mma.get_slice(tidx)
        tCrA = tiled_mma.make_fragment_A(thread_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thread_mma.partition_B(sB))
        tCgC = thread_mma.partition_C(gC)
        accumulators = tiled_mma.make_fragment_C(tCgC)
        accumulators.fill(0.0)
        parts = types.SimpleNamespace(
            tAgA=copier.partition_S(gA), tAsA=copier.partition_D(sA),
            tBgB=copier.partition_S(gB), tBsB=copier.partition_D(sB),
            tXsA=s2r_A.get_slice(tidx).partition_S(sA), tXrA=s2r_A.get_slice(tidx).retile(tCrA),
            tXsB=s2r_B.get_slice(tidx).partition_S(sB), tXrB=s2r_B.get_slice(tidx).retile(tCrB),
            tCrA=tCrA, tCrB=tCrB)
        loop(tiled_mma, g2s, s2r_A, s2r_B, parts, accumulators)
        cute.autovec_copy(accumulators, tCgC)

    @cute.jit
    def host(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
        atom = cute.make_composed_layout(cute.make_swizzle(2, 3, 3), 0, cute.make_layout((8, tile_k), stride=(tile_k, 1)))
        smem_layout = cute.tile_to_shape(atom, (32, tile_k), (0, 1))
        copy_atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float16, num_bits_per_copy=128)
        g2s = cute.make_tiled_copy_tv(copy_atom, cute.make_layout((32, 4), stride=(4, 1)), cute.make_layout((1, 8)))
        tiled_mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                                        cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))
        ldmatrix = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16)
        kernel(mA, mB, mC, smem_layout, g2s, tiled_mma, cute.make_tiled_copy_A(ldmatrix, tiled_mma),
               cute.make_tiled_copy_B(ldmatrix, tiled_mma)).launch(
            grid=[cute.size(mC, mode=[0]) // 32, cute.size(mC, mode=[1]) // 32, 1], block=[128, 1, 1])

    return host


def _decorated_with_jit(function):
    """`function` loaded again from a copy of its module file in which its `def` carries `@cute.jit`
    (as it is, if the learner decorated it already)."""
    import importlib.util
    import inspect
    import tempfile
    from pathlib import Path
    source_file = Path(inspect.getsourcefile(inspect.unwrap(function)))
    lines = source_file.read_text().splitlines(keepends=True)
    first = inspect.unwrap(function).__code__.co_firstlineno - 1
    header = []
    for line in lines[first:]:
        header.append(line)
        if line.lstrip().startswith(("def ", "async def ")):
            break
    if any(line.lstrip().startswith("@") and "jit" in line for line in header):
        return function
    lines.insert(first, "@cute.jit\n")
    folder = Path(tempfile.mkdtemp(prefix="cutekit-jit-"))
    path = folder / f"jit_{source_file.name}"
    path.write_text("".join(lines))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, function.__name__)


def _one_tile_gemm(answer, k_tiles: int, seed: int) -> dict:
    """C (32x32, fp32) = A (32 x 32 k_tiles) B^T on one CTA of 4 warps, single-stage, on the simulator, with
    `answer` as the main loop; the elements that differ from NumPy's product."""
    _use_the_simulator(answer)
    import numpy

    from cutlass.cute.runtime import from_dlpack
    tile_k = 32
    host = _main_loop_program(answer)
    # NumPy, not torch: this runs in a forked child, and torch's thread pool does not survive a fork
    rng = numpy.random.default_rng(seed)
    a = rng.standard_normal((32, tile_k * k_tiles)).astype(numpy.float16)
    b = rng.standard_normal((32, tile_k * k_tiles)).astype(numpy.float16)
    c = numpy.full((32, 32), numpy.nan, dtype=numpy.float32)
    host(*[from_dlpack(t, assumed_align=16) for t in (a, b, c)])

    def product(k_size):
        return a[:, :k_size].astype(numpy.float32) @ b[:, :k_size].astype(numpy.float32).T
    wrong = numpy.argwhere(~numpy.isclose(c, product(tile_k * k_tiles), rtol=1e-3, atol=1e-2)).tolist()
    # which k-tiles the result holds: C equals the product over the first j k-tiles for some j?
    partial = [j for j in range(k_tiles + 1) if numpy.allclose(c, product(tile_k * j), rtol=1e-3, atol=1e-2)]
    return {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None, "k_tiles_summed": partial}


def gpu_main_loop(answer, case):
    """Harness (runs on the GPU, real CuTeDSL): the learner's main loop in the one-stage GEMM on a grid of
    32x32 tiles, compared with torch.matmul in fp32, then timed (median of 20 launches) next to it."""
    import torch
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    M, N, K = case["M"], case["N"], case["K"]
    generator = torch.Generator(device="cuda").manual_seed(M + N + K)
    a = torch.randn(M, K, device="cuda", generator=generator).half()
    b = torch.randn(N, K, device="cuda", generator=generator).half()
    c = torch.full((M, N), float("nan"), device="cuda")
    views = [from_dlpack(t, assumed_align=16) for t in (a, b, c)]
    compiled = cute.compile(_main_loop_program(answer), *views)
    compiled(*views)
    torch.cuda.synchronize()
    reference = a.float() @ b.float().T
    wrong = (~torch.isclose(c, reference, rtol=1e-3, atol=1e-2)).nonzero().tolist()
    result = {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None}
    result["ms"] = gpu_median_ms(lambda: compiled(*views))
    result["torch_ms"] = gpu_median_ms(lambda: torch.matmul(a, b.T))
    return result


def _main_loop_gpu_criterion(context) -> Verdict:
    cases = [{"M": 1024, "N": 1024, "K": 2048}]
    reply = on_gpu(context.answer, f"{__name__}:gpu_main_loop", cases)
    if not reply.ok:
        return failed(f"on the GPU: {reply.error[:600]}")
    value, error = reply.values[0]
    where = "a 1024x1024x2048 GEMM of 32x32 tiles on the GPU"
    if error:
        return failed(f"{where}: {error[:400]}")
    if value["wrong"]:
        return failed(f"{where}: {value['wrong']} of {1024 * 1024} outputs differ from torch.matmul, the first at "
                      f"{value['first']} (on real hardware a missing sync_threads() shows up as wrong values "
                      "that change from run to run)")
    return Verdict(True, f"{where}: {value['ms']:.3f} ms; torch.matmul fp16 {value['torch_ms']:.3f} ms (one "
                         "stage and 32x32 tiles: the rest of chapter 07 is what closes the gap)")


def _ask_main_loop(answer, case):
    return _one_tile_gemm(answer, case["k_tiles"], case["seed"])


def _main_loop_criterion(several: bool) -> "callable":
    def judge(context) -> Verdict:
        for outcome in context.outcomes:
            case = outcome.case
            if (case["k_tiles"] > 1) != several:
                continue
            where = f"a 32x32 tile with K = {32 * case['k_tiles']} ({case['k_tiles']} k-tile{'s' if several else ''})"
            if outcome.error:
                text = outcome.error.splitlines()[0][:500]
                hint = ""
                if "race" in outcome.error.lower():
                    hint = (" (wait for the copies, then cute.arch.sync_threads() before any warp reads shared "
                            "memory; and a second sync_threads() at the end of the k-tile, before the next copy "
                            "overwrites what other warps may still be reading)")
                return failed(f"{where}: {text}{hint}")
            value = outcome.value
            if value["wrong"]:
                summed = value["k_tiles_summed"]
                if summed and summed[-1] == 0:
                    why = ("C is all zeros: nothing reached the tensor cores; load both operands' fragments "
                           "(cute.copy(s2r_A, ...) and cute.copy(s2r_B, ...)) before each cute.gemm")
                elif summed and summed[-1] < case["k_tiles"]:
                    why = (f"C holds the product of the first {summed[-1]} k-tile(s) only: loop over every k-tile "
                           "(cute.size(parts.tAgA, mode=[3])) and accumulate")
                else:
                    why = ("for every k-block kb: copy parts.tXsA[None, None, kb] into parts.tXrA[None, None, kb] (and B), "
                           "then cute.gemm(tiled_mma, accumulators, tCrA[None, None, kb], tCrB[None, None, kb], "
                           "accumulators); and wait for the cp.async copies (cp_async_wait_group) before reading")
                return failed(f"{where}: {value['wrong']} of 1024 outputs differ from NumPy's product, the first at (m, n) = "
                              f"{value['first']}: {why}")
        return passed()
    return judge


MAIN_LOOP = Exercise(
    id="ch07.main_loop",
    statement="Write main_loop(tiled_mma, g2s, s2r_A, s2r_B, parts, accumulators): for every k-tile, cp.async "
              "it to shared memory, wait and synchronize, then ldmatrix and cute.gemm every k-block; race-free.",
    example="a single-stage 32x32 tensor-core GEMM on the simulator equals NumPy's A @ B.T",
    cases=_main_loop_cases,
    ask=_ask_main_loop,
    timeout=240.0,
    criteria=(
        Criterion("one k-tile: C = A B^T", "reference", 2, _main_loop_criterion(False)),
        Criterion("several k-tiles: all accumulated, no shared-memory race", "reference", 2, _main_loop_criterion(True)),
        Criterion("on the GPU: a 1024x1024x2048 GEMM equals torch.matmul, timed against it", "gpu", 1,
                  _main_loop_gpu_criterion),
    ),
)


# ---- what the CuTeDSL worker calls, with `cute` = cutlass.cute ------------------------------------------------

def tiled_mma_in_cutedsl(cute, warps_m, warps_n):
    import cutlass
    atom = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    return cute.make_tiled_mma(atom, cute.make_layout((warps_m, warps_n, 1)),
                               permutation_mnk=(16 * warps_m, 16 * warps_n, 16))


def s2r_copy_in_cutedsl(cute, warps_m, warps_n, operand):
    import cutlass
    tiled_mma = tiled_mma_in_cutedsl(cute, warps_m, warps_n)
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16)
    return (cute.make_tiled_copy_A if operand == "A" else cute.make_tiled_copy_B)(atom, tiled_mma)


EXERCISES = [TILED_MMA, SWIZZLE, PIPELINE_STAGES, S2R_COPY, MAIN_LOOP]
