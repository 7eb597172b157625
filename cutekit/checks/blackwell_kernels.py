"""Chapter 09's kernel exercises: two pieces of the chapter's Blackwell GEMM (benchmarks/kernels/blackwell_gemm.py)
that the learner writes, each in a configuration the chapter does not run.

- `ch09.mma_warp_loop`: the MMA warp's k-loop of a warp-specialised variant (warp 1 loads with TMA, warp 0 only
  multiplies; 3 stages where the chapter has 2): wait for the stage's full barrier, the UMMAs of the k-tile with
  tcgen05.Field.ACCUMULATE false for the very first k-block only, tcgen05.commit to release the stage, and the
  last commit to the accumulator barrier.
- `ch09.tmem_epilogue`: the epilogue of D = alpha A B^T on a 128 x 256 tile, in strips of 16 columns (the
  chapter's are 32): wait for the accumulator barrier, tcgen05.ld, scale, convert, store, and tcgen05.wait::ld
  after the last load, before the TMEM is freed.

Tiers. cutedsl-cpu: the kernel with the learner's function compiled by real CuTeDSL for sm_100a, its PTX read
(UMMA and commit counts per k-tile, every commit behind elect.sync, the waits, the tcgen05.ld shape and count,
a wait::ld after the last load; no wgmma, no mma.sync). gpu: on an sm_100 GPU, a GEMM compared with torch and timed. The
simulator tier (reference) runs the kernel with the learner's function on small problems and names what D holds
(`mma_loop_diagnosis`, `epilogue_diagnosis`) or the simulator's message; it is graded only where cutekit's
simulator runs tcgen05 instructions (cutekit/sim/arch/sm100.py), and absent otherwise.
"""
from __future__ import annotations

import importlib.util
import re
import tempfile
from pathlib import Path

from .cutedsl import FakeTensor, compile_to_ptx
from .grading import Criterion, Exercise, Verdict, failed, passed
from .kernels import (decorated_with_jit, fresh_kernel, gpu_gemm_bias_relu, gpu_gemm_criterion, kernel_module_source,
                      kernel_root, unwrap)

KERNEL = "benchmarks.kernels.blackwell_gemm"
ARCH = "sm_100a"
K_BLOCKS = 4                            # BK / 16: the UMMAs of one 64-wide fp16 k-tile
# each exercise's role in the kernel and the settings the kernel is traced with
ROLES = {"ch09.mma_warp_loop": "mma_loop", "ch09.tmem_epilogue": "scaled_epilogue"}
SETTINGS = {"mma_loop": {"STAGES": 3, "PRODUCER_WARP": True, "BN": 128},
            "scaled_epilogue": {"BN": 256, "ALPHA": 0.5}}
STRIP = 16                              # exercise 4: columns per tcgen05.ld
FAKES = (FakeTensor("Float16", 2, 64),) * 3


def simulator_runs_tcgen05() -> bool:
    """Whether cutekit's simulator has an sm_100 machine (tcgen05 MMA, TMEM, commit). Without one the simulator
    criteria of these exercises are left out: the PTX and the GPU grade them."""
    return importlib.util.find_spec("cutekit.sim.arch.sm100") is not None


# ---- the kernel with the learner's function -------------------------------------------------------------------

def _fresh_kernel():
    """The chapter's kernel module imported anew (on whatever `cutlass` is imported now)."""
    return fresh_kernel(KERNEL, "function")


def kernel_with(answer, role: str):
    """The chapter's kernel module with the learner's function as its `role` ("mma_loop" or "scaled_epilogue") and
    that exercise's settings (the module is a fresh import: they stay set). Real CuTeDSL needs the function
    decorated in its source (decorated_with_jit); the simulator runs it as it is."""
    import cutlass
    module = _fresh_kernel()
    function = answer if getattr(cutlass, "__cutekit_sim__", False) else decorated_with_jit(answer)
    setattr(module, role, function)
    for name, value in SETTINGS[role].items():
        setattr(module, name, value)
    return module


LAZY_KERNEL = """

import sys as _sys
_sys.path.insert(0, {root!r})      # where the chapter's kernel package lives


def __getattr__(name):
    \"\"\"`gemm_tn`: the chapter's kernel with the function above as its {role} (built on first use).\"\"\"
    if name == "gemm_tn":
        from cutekit.checks import blackwell_kernels
        return blackwell_kernels.kernel_with({name}, "{role}").gemm_tn
    raise AttributeError(name)
"""


def _kernel_root() -> str:
    return kernel_root(KERNEL)


def compile_with(answer, role: str):
    """The PTX report of the chapter's kernel compiled for sm_100a with the learner's function as `role`."""
    source = kernel_module_source(answer)
    with tempfile.TemporaryDirectory(prefix="cutekit-ch09-") as folder:
        path = Path(folder) / f"learner_{role}.py"
        path.write_text(source + LAZY_KERNEL.replace("{name}", unwrap(answer).__code__.co_name)
                        .replace("{role}", role).replace("{root!r}", repr(_kernel_root())))
        return compile_to_ptx(str(path), "gemm_tn", FAKES, arch=ARCH)


def _loads_per_wait(ptx: str) -> list:
    """The number of tcgen05.ld between one tcgen05.wait::ld and the next (in the order the PTX lists them)."""
    runs, count = [], 0
    for line in ptx.splitlines():
        line = line.strip()
        if line.startswith("tcgen05.ld"):
            count += 1
        elif line.startswith("tcgen05.wait::ld") and count:
            runs.append(count)
            count = 0
    return runs


def _loads_never_waited(ptx: str) -> int:
    """The tcgen05.ld after the last tcgen05.wait::ld before the kernel's tcgen05.dealloc (in the order the PTX
    lists them): loads whose read of TMEM nothing orders before the columns are freed."""
    count = 0
    for line in ptx.splitlines():
        line = line.strip()
        if line.startswith("tcgen05.ld"):
            count += 1
        elif line.startswith("tcgen05.wait::ld"):
            count = 0
        elif line.startswith("tcgen05.dealloc"):
            break
    return count


def _waits_ld(ptx: str) -> int:
    """The number of tcgen05.wait::ld in the PTX (the opcode counts stop at its "::")."""
    return sum(1 for line in ptx.splitlines() if line.strip().startswith("tcgen05.wait::ld"))


# why a kernel waits for its TMEM loads (PTX ISA 9.7.16.6.4.5): not for their registers, which a true register
# dependency orders, but to order their reads of TMEM before a later write or the dealloc
WAIT_LD_REASON = ("a tcgen05.ld reads TMEM asynchronously, and only tcgen05.wait::ld orders that read before a later "
                  "write of the same columns or their tcgen05.dealloc (the PTX ISA: to avoid anti-dependency hazards "
                  "around tcgen05.ld, tcgen05.wait::ld must be used); using the registers needs no wait, freeing the "
                  "TMEM does")


# a compile error's words -> what it means for the learner's code
COMPILE_CLUES = (
    ("atom tv layout exists in the data layout", "the TMEM load atom does not fit the strip it is tiled over: a "
     "tcgen05.ld atom of the 32x32b shape with n repetitions reads n columns of each thread's lane, and the copy "
     "is made for one strip (128 lanes by the strip's columns)"),
    ("dynamic", "a loop whose trip count is a run-time value needs cutlass.range; one over compile-time numbers "
     "(the k-blocks, the strips) unrolls with cutlass.range_constexpr"),
)


def _compile_failure(report, what: str) -> Verdict:
    text = report.error.strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # CuTeDSL's message: the learner's line and the error, not the traceback inside CuTeDSL
    kept = [line for line in lines if "site-packages" not in line and not line.lstrip().startswith("^")][:8]
    advice = next((fix for clue, fix in COMPILE_CLUES if clue in text), "")
    return failed(f"CuTeDSL could not compile the kernel with your {what} for sm_100a:\n" + "\n".join(kept)[:900]
                  + (f"\nTo fix: {advice}" if advice else ""))


def _unelected_commits(ptx: str) -> int:
    """tcgen05.commit lines with no elect.sync before them in their basic block (CuTeDSL's elect_one compiles to
    elect.sync, a predicate and a branch round the block's rest)."""
    lines = ptx.splitlines()
    unelected = 0
    for i, line in enumerate(lines):
        if "tcgen05.commit" not in line:
            continue
        start = next((j for j in range(i - 1, -1, -1) if lines[j].strip().endswith(":")), 0)
        unelected += not any("elect.sync" in before for before in lines[start:i])
    return unelected


def _common_ptx(report) -> Verdict | None:
    for opcode, name in (("wgmma", "wgmma (Hopper's warpgroup MMA, sm_90a only)"),
                         ("mma.sync", "mma.sync (chapter 07's warp MMA)")):
        if report.count(opcode):
            return failed(f"the compiled kernel has {report.count(opcode)} {name}: a Blackwell kernel multiplies "
                          f"with tcgen05.mma")
    if report.local_memory:
        return failed(f"the compiled kernel uses local memory ({report.local_memory} ld/st.local): a register "
                      f"tensor indexed with a run-time value (a k-block or strip index from a run-time loop)")
    return None


# ---- ch09.mma_warp_loop --------------------------------------------------------------------------------------

def mma_loop_ptx(report) -> Verdict:
    """The PTX of the warp-specialised kernel with the learner's MMA loop: its UMMAs, commits and waits."""
    if not report.ok:
        return _compile_failure(report, "MMA loop")
    common = _common_ptx(report)
    if common:
        return common
    mmas, commits = report.count("tcgen05.mma"), report.count("tcgen05.commit")
    if not mmas:
        return failed("the compiled kernel has no tcgen05.mma: the loop issues the k-tile's UMMAs with cute.gemm "
                      "on the tiled MMA, one per k-block of the stage")
    unelected = _unelected_commits(report.ptx)
    if unelected:
        return failed(f"{unelected} of the {commits} tcgen05.commit have no elect.sync before them: every thread "
                      f"of the warp that executes tcgen05.commit makes the barrier arrive, and the barriers count "
                      f"one arrival; CuTeDSL leaves the choice of one thread to you (an elect_one block, "
                      f"cute.arch.elect_one)")
    if commits == 0:
        return failed("the compiled kernel has no tcgen05.commit: nothing releases a stage (the producer waits for "
                      "it forever, a deadlock) and nothing tells the epilogue the accumulator is ready")
    if commits == 1:
        return failed("the compiled kernel has one tcgen05.commit: the stages are never released (no commit to the "
                      "stage's empty barrier after each k-tile's UMMAs), so the producer waits forever for a stage "
                      "to refill once the first lap is done (a deadlock)")
    if mmas == K_BLOCKS * commits:
        return failed(f"the compiled kernel has {mmas} tcgen05.mma and {commits} tcgen05.commit, one per copy of the "
                      f"loop's body: the last commit, to the accumulator barrier after the loop, is missing (the "
                      f"epilogue waits on that barrier forever)")
    per_tile = mmas / (commits - 1)
    if per_tile != K_BLOCKS:
        return failed(f"the compiled kernel issues {per_tile:g} tcgen05.mma per k-tile ({mmas} UMMAs, {commits - 1} "
                      f"commits that release a stage): a stage holds a 64-wide k-tile, {K_BLOCKS} k-blocks of 16, "
                      f"one UMMA each (the fragment's third mode counts them)")
    # waits: the producer's (one per copy of its loop: one expect_tx each), the MMA warp's, the epilogue's one
    expected = report.count("mbarrier.arrive.expect_tx") + (commits - 1) + 1
    waits = report.count("mbarrier.try_wait")
    if waits < expected:
        return failed(f"the compiled kernel has {waits} mbarrier waits where the producer's, one per k-tile of "
                      f"the MMA loop and the epilogue's make {expected}: the MMA loop must wait on the stage's full "
                      f"barrier before the k-tile's UMMAs read it")
    return passed()


# ---- ch09.tmem_epilogue ----------------------------------------------------------------------------------------

EPILOGUE_WAITS = 7       # mbarrier waits in the kernel with the right epilogue (6 in the chapter's loop, 1 here)


def epilogue_ptx(report) -> Verdict:
    """The PTX of the kernel (BN = 256, alpha = 0.5) with the learner's epilogue: the tcgen05.ld strips, one
    wait::ld after the last load, the accumulator wait, the scaling."""
    if not report.ok:
        return _compile_failure(report, "epilogue")
    common = _common_ptx(report)
    if common:
        return common
    strips = SETTINGS["scaled_epilogue"]["BN"] // STRIP
    loads = report.count("tcgen05.ld")
    shapes = sorted({line.split()[0] for line in report.ptx.splitlines() if line.strip().startswith("tcgen05.ld")})
    wanted = f"tcgen05.ld.sync.aligned.32x32b.x{STRIP}.b32"
    if shapes != [wanted]:
        return failed(f"the compiled kernel loads TMEM with {', '.join(shapes) or 'no tcgen05.ld'}: the exercise's "
                      f"strips are {STRIP} columns of the 32x32b shape (a thread reads its own lane, 32 bits a "
                      f"column), one tcgen05.ld each, so {wanted}")
    if loads != strips:
        return failed(f"the compiled kernel has {loads} tcgen05.ld of {STRIP} columns: the 256 columns of the tile "
                      f"are {strips} strips of {STRIP}, each loaded once")
    fences = _waits_ld(report.ptx)
    if fences == 0:
        return failed(f"the compiled kernel has no tcgen05.wait::ld, and the kernel frees the accumulator's TMEM "
                      f"after the epilogue: {WAIT_LD_REASON}")
    runs = _loads_per_wait(report.ptx)
    if fences > 1 and len(set(runs)) == 1 and runs[0] > 1:
        return failed(f"the compiled kernel issues {runs[0]} tcgen05.ld before each tcgen05.wait::ld: each copy "
                      f"moves {runs[0] * STRIP} columns, {runs[0]} loads of {STRIP}; the exercise's strips are "
                      f"{STRIP} columns, one load each, the same width as the load atom")
    unwaited = _loads_never_waited(report.ptx)
    if unwaited:
        return failed(f"the compiled kernel's last {unwaited} tcgen05.ld have no tcgen05.wait::ld after them before "
                      f"the TMEM is freed: a wait orders only the loads issued before it, and {WAIT_LD_REASON}")
    waits = report.count("mbarrier.try_wait")
    if waits < EPILOGUE_WAITS:
        return failed(f"the compiled kernel has {waits} mbarrier waits where the main loop's and one in the "
                      f"epilogue make {EPILOGUE_WAITS}: the epilogue must wait on the accumulator barrier (the last "
                      f"tcgen05.commit) before its first tcgen05.ld, or it reads TMEM the UMMAs are still writing")
    if report.count("mul.rn.f16") or report.count("mul.f16"):
        return failed("the compiled kernel multiplies fp16 values: alpha scales the fp32 accumulators, before the "
                      "conversion to fp16 rounds them (scaling after it rounds twice)")
    if not report.count("mul.f32") and not report.count("mul.rn.f32") and not report.count("fma.rn.f32"):
        return failed("the compiled kernel multiplies no fp32 value: D is alpha A B^T, the accumulators scaled by "
                      "alpha before the conversion to fp16")
    return passed()


# ---- what the simulator leaves in D ----------------------------------------------------------------------------

def block_products(a, b, width: int = 16):
    """The product of each k-block: a list of (M, N) float32 arrays, A[:, 16k:16k+16] B[:, 16k:16k+16]^T."""
    import numpy
    return [a[:, k:k + width].astype(numpy.float32) @ b[:, k:k + width].astype(numpy.float32).T
            for k in range(0, a.shape[1], width)]


def _compared(d32, want, tolerance) -> dict:
    """D (fp32) against what it should hold: how many differ and are NaN; where D differs, the first such place with
    both values; "cause" is "right" where nothing differs, "all nan" where nothing was written."""
    import numpy
    wrong = ~numpy.isclose(d32, want, **tolerance)
    out = {"wrong": int(wrong.sum()), "nan": int(numpy.isnan(d32).sum())}
    if not out["wrong"]:
        out["cause"] = "right"
        return out
    first = tuple(int(i) for i in numpy.argwhere(wrong)[0])
    out.update(first=first, got=float(d32[first]), want=float(want[first]))
    if out["nan"] == d32.size:
        out["cause"] = "all nan"
    return out


def mma_loop_diagnosis(a, b, d) -> dict:
    """What D = (fp16 result of the MMA loop) holds, from A and B: "right", or the cause a hint names. D is
    fitted as a sum of the k-blocks' products with one coefficient each (least squares): 1 for every k-block is
    the right product; 0 for all but the last is an accumulator overwritten by each UMMA; a block missing,
    counted twice, or another k-tile's, shows in its coefficient."""
    import numpy
    d32 = d.astype(numpy.float32)
    blocks = block_products(a, b)
    product = sum(blocks)
    tolerance = {"rtol": 2e-2, "atol": 6e-2}
    out = _compared(d32, product, tolerance)
    if "cause" in out:
        return out
    if out["nan"]:
        out["cause"] = "some nan"
        return out
    per_tile = 4
    tiles = [sum(blocks[i:i + per_tile]) for i in range(0, len(blocks), per_tile)]
    for cause, candidate in (("last k-block", blocks[-1]), ("last k-tile", tiles[-1]),
                             ("first k-block missing", product - blocks[0]),
                             ("first k-tile twice", product + tiles[0])):
        if numpy.isclose(d32, candidate, **tolerance).mean() > 0.99:
            out["cause"] = cause
            return out
    if numpy.isclose(d32, 0, atol=1e-3).all():
        out["cause"] = "zero"
        return out
    basis = numpy.stack([block.ravel() for block in blocks], axis=1)
    coefficients, *_ = numpy.linalg.lstsq(basis, d32.ravel(), rcond=None)
    out["coefficients"] = [round(float(c), 2) for c in coefficients]
    residual = numpy.abs(basis @ coefficients - d32.ravel()).max()
    out["cause"] = "blocks" if residual < 0.5 else "other"
    return out


def epilogue_diagnosis(product, d, alpha: float) -> dict:
    """What D holds against alpha * product (fp32 A B^T): "right", or the cause a hint names (rows or columns
    never written, rows of another lane quarter, alpha missing or applied twice, D transposed within a strip)."""
    import numpy
    want = alpha * product
    d32 = d.astype(numpy.float32)
    tolerance = {"rtol": 2e-2, "atol": 6e-2}
    out = _compared(d32, want, tolerance)
    if "cause" in out:
        return out
    unwritten = numpy.isnan(d32)
    if unwritten.any():
        rows = numpy.nonzero(unwritten.all(axis=1))[0]
        columns = numpy.nonzero(unwritten.all(axis=0))[0]
        if len(columns) and not len(rows):
            out.update(cause="columns unwritten", columns=[int(columns[0]), int(columns[-1])],
                       count=int(len(columns)))
        elif len(rows) and not len(columns):
            out.update(cause="rows unwritten", rows=[int(rows[0]), int(rows[-1])], count=int(len(rows)))
        else:
            out["cause"] = "some nan"
        return out
    for cause, candidate in (("no alpha", product), ("alpha twice", alpha * alpha * product)):
        if numpy.isclose(d32, candidate, **tolerance).all():
            out["cause"] = cause
            return out
    M = d.shape[0]
    quarter = numpy.arange(M) % 32
    if numpy.isclose(d32, want[quarter], **tolerance).all():
        out["cause"] = "lanes of warp 0"
        return out
    out["cause"] = "other"
    return out


# ---- the simulator tier ----------------------------------------------------------------------------------------

def _role_cases(role: str):
    def draw(rng):
        if role == "mma_loop":        # 3 stages: fewer k-tiles than stages, then twice round the ring and one more
            return [{"M": 128, "N": 128, "K": 64 * rng.choice([1, 2]), "_data": rng.randrange(10_000)},
                    {"M": 128, "N": 128, "K": 64 * 7, "_data": rng.randrange(10_000)}]
        return [{"M": 128, "N": 256, "K": 64 * rng.choice([1, 2]), "_data": rng.randrange(10_000)}]
    return draw


def _run_role(answer, role: str, case: dict) -> dict:
    """D from the kernel with the learner's function, on the simulator (in the forked sandbox)."""
    from .kernels import use_the_simulator
    use_the_simulator(answer)
    import numpy

    from cutlass.cute.runtime import from_dlpack
    module = kernel_with(answer, role)
    rng = numpy.random.default_rng(case["_data"])
    a = rng.standard_normal((case["M"], case["K"])).astype(numpy.float16)
    b = rng.standard_normal((case["N"], case["K"])).astype(numpy.float16)
    d = numpy.full((case["M"], case["N"]), numpy.nan, dtype=numpy.float16)
    try:
        module.gemm_tn(*[from_dlpack(t, assumed_align=16) for t in (a, b, d)])
    except Exception as error:  # noqa: BLE001 - the kernel's failure is the learner's message
        return {"error": f"{type(error).__name__}: {str(error).strip()}"}
    if role == "mma_loop":
        return {"error": "", **mma_loop_diagnosis(a, b, d)}
    product = a.astype(numpy.float32) @ b.astype(numpy.float32).T
    return {"error": "", **epilogue_diagnosis(product, d, SETTINGS[role]["ALPHA"])}


def _asker(role: str):
    def ask(answer, case):
        if not simulator_runs_tcgen05():
            return {"simulated": False}
        return _run_role(answer, role, case)
    return ask


# what a simulator message says -> the cause and the place
MMA_LOOP_ERRORS = (
    ("never go on", "a wait that never returns (a deadlock): each stage must be released by a tcgen05.commit to its "
     "empty barrier after the k-tile's UMMAs, the accumulator barrier by the last commit after the loop; the "
     "MMA loop waits on the stage's full barrier (not its empty one) for the phase that k-tile's copies complete "
     "(a stage's first fill completes its phase 0, its second phase 1, ...), and the stage index wraps round the "
     "ring of `stages` (past it, a wait is on a barrier no copy fills)"),
    ("wrong phase", "the MMA loop's wait on the full barrier returned before the k-tile's copies landed: its "
     "parity is that of the phase this k-tile's copies complete, worked out from the k-tile index"),
    ("more arrivals", "a barrier got more arrivals than it counts: tcgen05.commit is issued by one thread of the "
     "warp (one elected lane: cute.arch.elect_one), once per k-tile and once after the loop"),
    ("nothing has written", "TMEM starts with whatever it held: the very first UMMA of the tile overwrites it "
     "(ACCUMULATE false), every later one adds (true)"),
    ("out-of-bounds", "a stage index ran past the last stage: it wraps round the ring of `stages`"),
    ("was not initialized", "a barrier index ran past the `stages` barriers: the stage index wraps round the ring"),
)
EPILOGUE_ERRORS = (
    ("never go on", "a wait that never returns: the accumulator barrier completes one phase, its phase 0, when "
     "the last commit's UMMAs are done; the epilogue waits for that phase"),
    ("outside its quarter", "a warp may read only its own quarter of TMEM's lanes (warp w: lanes 32 (w % 4) to "
     "32 (w % 4) + 31): each thread's slice of the TMEM copy comes from its own thread index in the CTA"),
    ("make_tmem_copy", "the TMEM load atom does not fit the strip it is tiled over: a tcgen05.ld atom of the "
     "32x32b shape with n repetitions reads n columns of each thread's lane, and the copy is made for one strip "
     "(128 lanes by the strip's columns)"),
    ("read before the MMA's commit completed", "the epilogue read TMEM before the UMMAs that write it were done: "
     "it waits on the accumulator barrier, for the phase the last commit completes, before its first load"),
    ("out-of-bounds", "a strip index ran past the tile's strips: there are 256 / 16 of them"),
)
# the simulator's own remedies that spell out the code of a fix: the hint keeps the cause, the advice says where
SIMULATOR_REMEDIES = (
    (re.compile(r" Slice the TMEM copy with the thread's own index \(tiled_copy\.get_slice\(tidx\)\)"), ""),
    (re.compile(r" Let the first MMA overwrite it: tiled_mma\.set\([^)]*\) before it \(CuTeDSL starts the field "
                r"false\), True after it"), ""),
    (re.compile(r" Call cute\.arch\.mbarrier_wait\(bar, phase\) first"), ""),
    (re.compile(r" Put it inside\s+`with cute\.arch\.elect_one\(\):`"), ""),
)


def _simulated_criterion(index: int, errors, hint):
    def judge(context) -> Verdict:
        if len(context.outcomes) <= index:
            return passed()
        outcome = context.outcomes[index]
        case = outcome.case
        where = f"M={case['M']}, N={case['N']}, K={case['K']} ({case['K'] // 64} k-tiles of 64)"
        value = outcome.value or {}
        error = outcome.error or value.get("error", "")
        if error:
            advice = next((fix for clue, fix in errors if clue in error), "")
            for remedy, replacement in SIMULATOR_REMEDIES:
                error = remedy.sub(replacement, error)
            return failed(f"{where}: {error.strip()[:900]}" + (f"\nTo fix: {advice}" if advice else ""))
        if value.get("cause", "right") != "right":
            return failed(f"{where}: {hint(value, case)}")
        return Verdict(True, f"{where}: D equals the product")
    return judge


def mma_loop_hint(value: dict, case: dict) -> str:
    head = (f"{value['wrong']} of {case['M'] * case['N']} entries of D differ from A B^T, the first at "
            f"{value['first']}: yours {value['got']:.3f}, expected {value['want']:.3f}. ")
    cause = value["cause"]
    if cause == "last k-block":
        return head + ("D holds only the last k-block's product: every UMMA overwrote the accumulator. "
                       "tcgen05.Field.ACCUMULATE false makes a UMMA write D = A B; it must turn true after the very "
                       "first k-block and stay true")
    if cause == "last k-tile":
        return head + ("D holds only the last k-tile's product: the accumulator was overwritten at the start of "
                       "every k-tile. ACCUMULATE is false for the very first k-block of the first k-tile only")
    if cause == "first k-block missing" or cause == "first k-tile twice" or cause == "other" or cause == "zero":
        return head + ("D is not a sum of the k-blocks' products, each once: a UMMA accumulated into TMEM that no "
                       "UMMA had written (ACCUMULATE true from the first k-block), or read a stage before its "
                       "copies landed")
    if cause in ("all nan", "some nan"):
        return head + f"{value['nan']} entries of D hold NaN: the accumulator held values no UMMA wrote"
    if cause == "blocks":
        coefficients = value["coefficients"]
        missing = [i for i, c in enumerate(coefficients) if abs(c) < 0.25]
        extra = [i for i, c in enumerate(coefficients) if c > 1.5]
        text = head + "D is a sum of k-blocks' products, but not each once: "
        if missing:
            text += f"k-blocks {missing[:8]} (16 k each, counted from 0) are missing"
        if extra:
            text += ("; " if missing else "") + f"k-blocks {extra[:8]} are counted more than once"
        return text + (" (every k-tile's stage is multiplied once, all of its k-blocks, the stage the k-tile "
                       "index wraps to)")
    return head


def epilogue_hint(value: dict, case: dict) -> str:
    head = (f"{value['wrong']} of {case['M'] * case['N']} entries of D differ from alpha A B^T, the first at "
            f"{value['first']}: yours {value['got']:.3f}, expected {value['want']:.3f}. ")
    cause = value["cause"]
    if cause == "columns unwritten":
        first, last = value["columns"]
        return head + (f"columns {first}-{last} ({value['count']}) were never written: the strips must cover all "
                       f"256 columns of the tile, {STRIP} at a time")
    if cause == "rows unwritten":
        first, last = value["rows"]
        return head + (f"rows {first}-{last} were never written: each of the 4 warps stores the rows of its own "
                       f"quarter of TMEM's lanes; the thread's slice comes from its index in the CTA")
    if cause == "lanes of warp 0":
        return head + ("every row r of D holds row r % 32: all four warps read the lanes of warp 0. A warp reaches "
                       "only its own quarter of TMEM's lanes; the thread's slice of the TMEM copy comes from its "
                       "index in the CTA (0-127)")
    if cause == "no alpha":
        return head + "D is A B^T: the accumulators were never scaled by alpha"
    if cause == "alpha twice":
        return head + "D is alpha^2 A B^T: the scale was applied twice"
    if cause in ("all nan", "some nan"):
        return head + (f"{value['nan']} entries of D were never written or hold NaN: registers used before a TMEM "
                       f"load filled them")
    return head + ("the values are not alpha A B^T: a strip stored to another strip's columns, or a strip's "
                   "values taken from registers another strip's load filled")


def _ptx_criterion(role: str, judge_report):
    def judge(context) -> Verdict:
        try:
            report = compile_with(context.answer, role)
        except (OSError, TypeError) as error:
            return failed(f"the function's source cannot be read ({error}); define it in a notebook cell or a .py "
                          f"file")
        return judge_report(report)
    return judge


# ---- the GPU tier ---------------------------------------------------------------------------------------------

GPU_CASE = {"M": 4096, "N": 4096, "K": 4096}


def _gpu_role(role: str, function, case) -> dict:
    """Harness (an sm_100 GPU, real CuTeDSL): the kernel with the learner's function on a GEMM compared with torch,
    then timed (median of 20 launches) next to torch.matmul."""
    import torch
    from cutlass.cute.runtime import from_dlpack

    import cutlass.cute as cute
    from .kernels import gpu_median_ms
    M, N, K = case["M"], case["N"], case["K"]
    generator = torch.Generator(device="cuda").manual_seed(M + N + K)
    a = torch.randn(M, K, device="cuda", generator=generator).half()
    b = torch.randn(N, K, device="cuda", generator=generator).half()
    d = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    module = kernel_with(function, role)
    views = [from_dlpack(t, assumed_align=16) for t in (a, b, d)]
    compiled = cute.compile(module.gemm_tn, *views)
    compiled(*views)
    torch.cuda.synchronize()
    alpha = SETTINGS[role].get("ALPHA") or 1.0
    reference = alpha * (a.float() @ b.float().T)
    wrong = (~torch.isclose(d.float(), reference, rtol=2e-2, atol=0.25)).nonzero().tolist()
    result = {"wrong": len(wrong), "first": tuple(wrong[0]) if wrong else None}
    if not wrong:
        result["ms"] = gpu_median_ms(lambda: compiled(*views))
        result["torch_ms"] = gpu_median_ms(lambda: torch.matmul(a, b.T))
    return result


def gpu_mma_loop(function, case):
    return _gpu_role("mma_loop", function, case)


def gpu_scaled_epilogue(function, case):
    return _gpu_role("scaled_epilogue", function, case)


def _gpu_criterion(harness: str):
    return gpu_gemm_criterion(__name__, harness, GPU_CASE, chapter_kernel=False)


def _simulator_criteria(names_and_points, errors, hint) -> tuple:
    if not simulator_runs_tcgen05():
        return ()
    return tuple(Criterion(name, "reference", points, _simulated_criterion(index, errors, hint))
                 for index, (name, points) in enumerate(names_and_points))


MMA_WARP_LOOP = Exercise(
    id="ch09.mma_warp_loop",
    statement="Write the MMA warp's loop of a warp-specialised kernel with 3 stages, mma_loop(tiled_mma, "
              "accumulator, tCrA, tCrB, full, empty, accumulator_ready, k_tiles, stages): for every k-tile wait "
              "until its stage is filled (on the stage's full barrier), issue the UMMAs of its k-blocks (ACCUMULATE "
              "false for the very first k-block only), release the stage with tcgen05.commit on its empty barrier; "
              "after the loop, a commit on accumulator_ready.",
    example="it replaces the kernel's `mma_loop` (warp 0); warp 1 loads, all four warps run the epilogue",
    rule=("A tcgen05.mma's ACCUMULATE field decides whether it adds to the TMEM accumulator or overwrites it; TMEM "
          "holds whatever it held before, so only the very first UMMA of the tile overwrites.\n"
          "tcgen05.commit makes an mbarrier arrive once every tcgen05.mma the thread issued before it has finished: "
          "after a k-tile's UMMAs it tells the producer the stage may be refilled, after the last one it tells the "
          "epilogue the accumulator is complete; one thread of the warp issues it, and each barrier counts one "
          "arrival.\n"
          "A wait names the parity of the phase it waits for: a stage's first fill completes its phase 0, the "
          "second phase 1, alternating as the k-tiles go round the ring."),
    cases=_role_cases("mma_loop"),
    ask=_asker("mma_loop"),
    timeout=240.0,
    criteria=_simulator_criteria((("fewer k-tiles than stages: D = A B^T", 1),
                                  ("7 k-tiles, twice round 3 stages and one more: D = A B^T", 2)),
                                 MMA_LOOP_ERRORS, mma_loop_hint) + (
        Criterion("compiled by real CuTeDSL for sm_100a: 4 tcgen05.mma and one elected commit per k-tile, a last "
                  "commit, a wait per k-tile", "cutedsl-cpu", 2, _ptx_criterion("mma_loop", mma_loop_ptx)),
        Criterion("on an sm_100 GPU: a 4096^3 GEMM equals torch, timed against it", "gpu", 1,
                  _gpu_criterion("gpu_mma_loop"), needs="sm_100"),
    ),
)


TMEM_EPILOGUE = Exercise(
    id="ch09.tmem_epilogue",
    statement="Write the epilogue of D = alpha A B^T for a 128 x 256 tile in strips of 16 columns, "
              "scaled_epilogue(accumulator, gD, accumulator_ready, thread, alpha): wait until the accumulator is "
              "ready, then for each strip load the thread's row of it from TMEM (tcgen05.ld 32x32b, 16 "
              "repetitions), scale by alpha, convert to fp16 and store it to D; wait for the loads "
              "(tcgen05.wait::ld) before returning, since the kernel then frees the TMEM.",
    example="it replaces the kernel's epilogue (all four warps, thread 0-127); alpha is 0.5 in the check",
    rule=("A warp reaches only its own quarter of TMEM's 128 lanes (warp w: lanes 32 (w % 4) onward), and with the "
          "32x32b shape each thread reads one lane, a row of the tile: the thread's slice of the TMEM copy comes "
          "from its index in the CTA.\n"
          "A tcgen05.ld's registers may be used right after it (a true register dependency orders them); "
          "tcgen05.wait::ld orders its read of TMEM before a later write or the dealloc of those columns, so the "
          "kernel waits for its loads before the TMEM is freed.\n"
          "The epilogue starts after the accumulator barrier's phase 0 completes (the last tcgen05.commit); the "
          "strips cover the tile's columns, each loaded once."),
    cases=_role_cases("scaled_epilogue"),
    ask=_asker("scaled_epilogue"),
    timeout=240.0,
    criteria=_simulator_criteria((("a 128 x 256 tile: D = alpha A B^T", 2),), EPILOGUE_ERRORS, epilogue_hint) + (
        Criterion(f"compiled by real CuTeDSL for sm_100a: 16 tcgen05.ld 32x32b.x{STRIP}, a wait::ld after the last, "
                  f"the accumulator wait, the fp32 scale", "cutedsl-cpu", 2, _ptx_criterion("scaled_epilogue",
                                                                                    epilogue_ptx)),
        Criterion("on an sm_100 GPU: a 4096^3 GEMM equals torch, timed against it", "gpu", 1,
                  _gpu_criterion("gpu_scaled_epilogue"), needs="sm_100"),
    ),
)


def simulate_kernel(a, b, *, edit: tuple | None = None, **knobs):
    """D = A B^T for fp16 NumPy arrays a (M, K) and b (N, K), computed by the chapter's kernel on the simulator
    (with the module settings `knobs`, e.g. STAGES=3); M and N multiples of 128 (BN), K of 64. `edit` = (old, new)
    plants one change in the kernel's source first: how chapter 09 shows a mistake stopped by name. Returns D
    (fp16)."""
    import numpy

    import cutekit
    if a.shape[0] % 128 or b.shape[0] % knobs.get("BN", 128) or a.shape[1] % 64 or a.shape[1] != b.shape[1]:
        raise ValueError(f"simulate_kernel: the chapter's kernel needs M a multiple of 128, N of BN and K of 64 "
                         f"(no predication), got A {a.shape} and B {b.shape}")
    with cutekit.using("sim", fresh=("benchmarks",)):
        module = _fresh_kernel()
        if edit is not None:
            source = Path(module.__file__).read_text()
            if source.count(edit[0]) != 1:
                raise ValueError(f"simulate_kernel(edit=...): the kernel's source holds {edit[0]!r} "
                                 f"{source.count(edit[0])} times, not once")
            exec(compile(source.replace(*edit), module.__file__, "exec"), module.__dict__)  # noqa: S102
        from cutlass.cute.runtime import from_dlpack
        d = numpy.full((a.shape[0], b.shape[0]), numpy.nan, numpy.float16)
        with module.configured(**knobs):
            module.gemm_tn(*[from_dlpack(t, assumed_align=16) for t in (a, b, d)])
        return d


# ---- ch09.capstone: a whole Blackwell kernel, D = relu(A B^T + bias) ----------------------------------------------

CAPSTONE_TOLERANCE = {"rtol": 2e-2, "atol": 6e-2}     # fp16 D against fp32 NumPy
_CAPSTONE_FAILED: dict = {}     # in the forked child: the answer whose first problem failed (its second is skipped)


def _eighths(rng, low: int, high: int, avoid: int = 64) -> int:
    """A multiple of 8 from low to high that `avoid` does not divide (TMA moves rows of whole 16-byte chunks)."""
    return 8 * rng.choice([e for e in range(-(-low // 8), high // 8 + 1) if (8 * e) % avoid])


def _capstone_cases(rng):
    """Two ragged problems: two tile-columns of 128 (the second partial) over one short k-tile, and two tile-rows
    (the second partial) over 7 k-tiles, twice round a ring of 3 stages and one more."""
    edges = {"M": rng.randint(65, 127), "N": _eighths(rng, 136, 248), "K": _eighths(rng, 8, 56), "_shape": 0,
             "_data": rng.randrange(10_000)}
    laps = {"M": rng.choice([m for m in range(129, 201) if m % 64]), "N": _eighths(rng, 8, 120),
            "K": _eighths(rng, 6 * 64 + 8, 7 * 64 - 8),
            "_shape": 1, "_data": rng.randrange(10_000)}
    return [edges, laps]


def _capstone_data(case: dict):
    import numpy
    rng = numpy.random.default_rng(case["_data"])
    a = rng.standard_normal((case["M"], case["K"])).astype(numpy.float16)
    b = rng.standard_normal((case["N"], case["K"])).astype(numpy.float16)
    bias = (4 * rng.standard_normal(case["N"])).astype(numpy.float32)
    d = numpy.full((case["M"], case["N"]), numpy.nan, dtype=numpy.float16)
    return a, b, bias, d


def _one_k_block(a, b, bias, d32) -> bool:
    """Whether D is relu(the product of a single 16-wide k-block + bias), or relu(bias) alone: every MMA overwrote
    the accumulator, so D keeps the last MMA's k-block, which lies in the zeros past K (the TMA's padding of the
    last 64-wide k-tile) when K is not a multiple of 64 and ends 16 or more short of the tile's end."""
    import numpy
    k = a.shape[1]
    candidates = [numpy.maximum(numpy.zeros_like(d32) + bias, 0)]
    for start in range(0, k, 16):
        block = a[:, start:start + 16].astype(numpy.float32) @ b[:, start:start + 16].astype(numpy.float32).T
        candidates.append(numpy.maximum(block + bias, 0))
    return any(numpy.isclose(d32, candidate, **CAPSTONE_TOLERANCE).mean() > 0.99 for candidate in candidates)


def capstone_diagnosis(a, b, bias, d) -> dict:
    """What D holds against relu(A B^T + bias), from A, B and bias: "right", or the cause a hint names."""
    import numpy
    product = a.astype(numpy.float32) @ b.astype(numpy.float32).T
    want = numpy.maximum(product + bias, 0)
    d32 = d.astype(numpy.float32)
    out = _compared(d32, want, CAPSTONE_TOLERANCE)
    if "cause" in out:
        return out
    if out["nan"]:
        unwritten = numpy.argwhere(numpy.isnan(d32))
        out.update(cause="unwritten", first_unwritten=tuple(int(i) for i in unwritten[0]),
                   from_row=int(unwritten[:, 0].min()), from_column=int(unwritten[:, 1].min()))
        return out
    M, N = d.shape
    rows = bias[numpy.minimum(numpy.arange(M), N - 1)][:, None]
    k = a.shape[1]
    block = (k - 1) // 16 * 16              # the last k-block's first k (past K the copy engine reads zeros)
    last_block = a[:, block:].astype(numpy.float32) @ b[:, block:].astype(numpy.float32).T
    last_tile = a[:, (k - 1) // 64 * 64:].astype(numpy.float32) @ b[:, (k - 1) // 64 * 64:].astype(numpy.float32).T
    candidates = (("no bias", numpy.maximum(product, 0)), ("no relu", product + bias),
                  ("relu first", numpy.maximum(product, 0) + bias),
                  ("last k-block", numpy.maximum(last_block + bias, 0)),
                  ("last k-tile", numpy.maximum(last_tile + bias, 0)))
    if M <= N:
        candidates += (("per row", numpy.maximum(product + rows, 0)),)
    for cause, candidate in candidates:
        if numpy.isclose(d32, candidate, **CAPSTONE_TOLERANCE).mean() > 0.99:
            out["cause"] = cause
            return out
    out["cause"] = "one k-block" if _one_k_block(a, b, bias, d32) else "product"
    return out


def _warp_roles(block) -> dict:
    """Which warps of a finished CTA issued its TMA loads, its tcgen05 MMAs and its TMEM loads, from what the
    simulator keeps per warp (cutekit/sim/arch/sm90.py counts a warp's TMA copies, sm100.py its MMAs and loads)."""
    hopper, blackwell = block.__dict__.get("hopper"), block.__dict__.get("blackwell")
    return {"block": tuple(int(i) for i in block.block_idx),
            "tma": sorted(w for w, warp in (hopper.warps.items() if hopper else ()) if warp.tma),
            "mma": sorted(w for w, warp in (blackwell.warps.items() if blackwell else ()) if warp.issued),
            "ld": sorted({w for w, _ in (blackwell.loads if blackwell else ())})}


def capstone_on_simulator(host, case: dict) -> dict:
    """Harness (the forked sandbox, the simulator as `cutlass`): the learner's host on one problem, and the warp
    roles of each CTA, recorded when the CTA ends."""
    import time

    from cutlass.cute.runtime import from_dlpack

    from ..sim.machine import scheduler
    a, b, bias, d = _capstone_data(case)
    roles: list = []
    hook = ("blackwell", lambda block: roles.append(_warp_roles(block)))
    scheduler.BLOCK_END_CHECKS.append(hook)
    started = time.perf_counter()
    try:
        host(*[from_dlpack(x, assumed_align=16) for x in (a, b, bias, d)])
    except Exception as error:  # noqa: BLE001 - the kernel's failure is the learner's message
        return {"error": f"{type(error).__name__}: {str(error).strip()}", "seconds": time.perf_counter() - started}
    finally:
        scheduler.BLOCK_END_CHECKS.remove(hook)
    return {"error": "", "seconds": time.perf_counter() - started, "roles": roles,
            **capstone_diagnosis(a, b, bias, d)}


def _ask_capstone(answer, case):
    """The learner's kernel on one problem; the second is skipped once the first failed."""
    from .kernels import simulate_until_one_fails
    return simulate_until_one_fails(answer, capstone_on_simulator, case, _CAPSTONE_FAILED)


def _capstone_where(case) -> str:
    k_tiles = -(-case["K"] // 64)
    return f"M={case['M']}, N={case['N']}, K={case['K']} ({k_tiles} k-tile{'s' if k_tiles > 1 else ''} of 64)"


def _capstone_runs(outcome) -> list:
    value = outcome.value or {}
    return [(_capstone_where(outcome.case), value["seconds"])] if "seconds" in value else []


# what a simulator message says -> what to change (the cause and the place, not the code)
CAPSTONE_ERRORS = (
    ("waited on the wrong phase", "a wait on a stage's full barrier returned before that k-tile's copies landed: "
     "wait for the phase those copies complete (a stage's first fill completes its phase 0, its second phase 1, "
     "...)"),
    ("stage reused", "a TMA copy refilled a stage whose MMAs had not finished reading it: before refilling, wait on "
     "the stage's empty barrier for the commit of the MMAs of the k-tile that used it one lap earlier"),
    ("read before the MMA's commit completed", "the epilogue read TMEM before the MMAs that write it were done: a "
     "commit after the last k-tile's MMAs, and a wait on that barrier before the first TMEM load"),
    ("nothing has written", "TMEM starts with whatever it held: the tile's very first MMA overwrites it (the MMA's "
     "ACCUMULATE field false), every later one adds"),
    ("outside its quarter", "a warp may read only its own quarter of TMEM's lanes (warp w: lanes 32 (w % 4) "
     "onward): each thread's slice of the TMEM copy comes from its own index in the CTA"),
    ("tcgen05.commit", "tcgen05.commit is issued by one lane: CuTeDSL does not elect one for it"),
    ("expected none", "each k-tile's full barrier must be told, once and by one lane, every byte its copies "
     "deliver (A's tile and B's tile)"),
    ("out-of-bounds access to global tensor bias", "bias holds N values, one per column of D; the last tile-column "
     "reaches past column N, where no bias exists"),
    ("out-of-bounds", "D's last tile-row and tile-column are partial (M and N are not multiples of the tile): a "
     "store from registers must leave out the rows and columns past D's edge"),
    ("never freed", "the TMEM columns a CTA allocates must be freed (by the warp that allocated them) before it "
     "exits, after every warp has read them"),
    ("not allocated", "the accumulator spans as many TMEM columns as the tile has columns of D: allocate at least "
     "that many (a power of two, at least 32)"),
    ("was never fenced", "the barriers' initialization must be fenced (mbarrier_init_fence) and made visible to "
     "every thread by a barrier before the first wait, arrival or copy"),
    ("never go on", "a wait that never returns (a deadlock): every stage is released by a commit after its "
     "k-tile's MMAs, the accumulator barrier by the last commit after the loop, each full barrier receives the "
     "bytes announced, and every wait names the phase its event completes"),
    ("launch grid=", "a grid with no CTA along a mode: count the tiles of D rounding up, the partial tile at the "
     "ragged edge included"),
)
CAPSTONE_REMEDIES = SIMULATOR_REMEDIES + (
    (re.compile(r"\s*Guard the access with an `if` on the tensor's shape \(e\.g\. `[^`]*`\) or fix the index"), ""),
)


def _capstone_hint(value: dict, case: dict) -> str:
    cause, (m, n) = value.get("cause"), value["first"]
    head = (f"{value['wrong']} of {case['M'] * case['N']} entries of D differ from relu(A B^T + bias), the first "
            f"at (m, n) = ({m}, {n}): yours {value['got']:.3f}, expected {value['want']:.3f}. ")
    if cause == "all nan":
        return head + ("every entry of D is NaN: nothing reached D, or what was stored was NaN (TMEM or registers "
                       "read before anything wrote them; the simulator starts both at NaN)")
    if cause == "unwritten":
        um, un = value["first_unwritten"]
        return head + (f"{value['nan']} entries were never written, the first at ({um}, {un}), none before row "
                       f"{value['from_row']} or column {value['from_column']}: every tile of D needs a CTA and a "
                       f"store, the partial tiles at the ragged edge too (count tiles rounding up; store each entry "
                       f"inside D)")
    if cause == "last k-block":
        return head + ("D holds only the last k-block's product (+ bias, clamped): every MMA overwrote the "
                       "accumulator; its ACCUMULATE field is false only for the tile's very first k-block")
    if cause == "one k-block":
        return head + ("D holds the product of a single 16-wide k-block, or of none (bias alone: the last k-block "
                       "the MMAs multiply lies in the zeros past K), + bias, clamped: every MMA overwrote the "
                       "accumulator instead of adding to it; its ACCUMULATE field is false only for the tile's very "
                       "first k-block")
    if cause == "last k-tile":
        return head + ("D holds only the last k-tile's product (+ bias, clamped): the accumulator was overwritten "
                       "at the start of every k-tile; ACCUMULATE is false only for the tile's very first k-block")
    if cause == "no bias":
        return head + "D is relu(A B^T): the bias was never added before the store"
    if cause == "no relu":
        return head + "D is A B^T + bias, negative values included: the clamp at 0 is missing"
    if cause == "relu first":
        return head + "D is relu(A B^T) + bias: the clamp at 0 came before the bias; the bias goes in first"
    if cause == "per row":
        return head + ("the bias you added changes down the rows of a column: bias holds one value per column n of "
                       "D, the same for every row")
    return head + ("the differences are not the bias's or the clamp's: the product A B^T itself is wrong there "
                   "(every k-tile loaded into its stage and multiplied once, each tile at its own rows and columns)")


def _capstone_criterion(shape: int):
    from .kernels import capstone_problem_criterion
    return capstone_problem_criterion(shape, _capstone_where, CAPSTONE_ERRORS, CAPSTONE_REMEDIES, _capstone_hint)


def capstone_roles(roles: list) -> Verdict:
    """The warp specialisation, from the roles each CTA's warps played on the simulator: one warp issues every
    TMA load, another every tcgen05.mma, and four warps of their own (one per quarter of TMEM's lanes) every
    tcgen05.ld."""
    for cta in roles:
        tma, mma, ld = cta["tma"], cta["mma"], cta["ld"]
        where = f"CTA {cta['block'][:2]}: "
        if len(tma) != 1:
            return failed(where + (f"warps {tma} issue TMA loads: one warp, the producer, issues every copy of A and B"
                                   if tma else "no warp issued a TMA load: A's and B's tiles come into the stages by "
                                   "TMA, from the producer warp"))
        if len(mma) != 1:
            return failed(where + f"warps {mma} issue tcgen05 MMAs: one warp, the MMA warp, issues every MMA of the "
                                  f"tile")
        if tma == mma:
            return failed(where + f"warp {tma[0]} issues both the TMA loads and the MMAs: the producer warp only "
                                  f"loads and the MMA warp only multiplies, so that the next k-tiles' copies are in "
                                  f"flight while the MMAs run")
        busy = sorted(set(ld) & set(tma + mma))
        if busy:
            return failed(where + f"warp {busy[0]} reads TMEM in the epilogue and also issues "
                                  f"{'the MMAs' if busy[0] in mma else 'the TMA loads'}: the epilogue is four "
                                  f"warps of their own, apart from the producer and the MMA warp")
        if len(ld) != 4 or sorted(w % 4 for w in ld) != [0, 1, 2, 3]:
            return failed(where + f"warps {ld} read TMEM in the epilogue: four warps, one per quarter of TMEM's "
                                  f"128 lanes (warp w reaches lanes 32 (w % 4) onward), read the accumulator")
    return passed()


def _capstone_roles_criterion(context) -> Verdict:
    outcome = next((o for o in context.outcomes if o.case.get("_shape") == 0), None)
    if outcome is None:
        return passed()
    value = outcome.value or {}
    if outcome.error or value.get("error") or "roles" not in value:
        return failed("not judged: the kernel did not run to its end on the first problem (the criterion above "
                      "says why)")
    verdict = capstone_roles(value["roles"])
    if verdict.passed:
        return Verdict(True, f"warps {value['roles'][0]['tma']} load, {value['roles'][0]['mma']} multiply, "
                             f"{value['roles'][0]['ld']} run the epilogue")
    return verdict


CAPSTONE_FAKES = (FakeTensor("Float16", 2, 8), FakeTensor("Float16", 2, 8), FakeTensor("Float32", 1, 8),
                  FakeTensor("Float16", 2, 8))
# opcode prefix, at least, what it shows
CAPSTONE_PTX = (("cp.async.bulk.tensor", 1, "TMA loads of A and B (cp.async.bulk.tensor)"),
                ("mbarrier.try_wait", 1, "mbarrier waits"),
                ("tcgen05.alloc", 1, "a TMEM allocation (tcgen05.alloc)"),
                ("tcgen05.mma", 1, "tcgen05 MMAs"),
                ("tcgen05.commit", 1, "tcgen05.commit to an mbarrier"),
                ("tcgen05.ld", 1, "TMEM loads (tcgen05.ld)"))


def capstone_ptx(report) -> Verdict:
    """The PTX of the learner's whole kernel, compiled for sm_100a."""
    if not report.ok:
        return _compile_failure(report, "kernel")
    common = _common_ptx(report)
    if common:
        return common
    for opcode, least, what in CAPSTONE_PTX:
        if report.count(opcode) < least:
            return failed(f"the compiled kernel has no {opcode}: {what} belong in this chapter's Blackwell kernel")
    if report.count("tcgen05.dealloc") != report.count("tcgen05.alloc"):
        return failed(f"the compiled kernel has {report.count('tcgen05.alloc')} tcgen05.alloc and "
                      f"{report.count('tcgen05.dealloc')} tcgen05.dealloc: the columns a CTA allocates must be "
                      f"freed before it exits")
    if not _waits_ld(report.ptx):
        return failed(f"the compiled kernel has no tcgen05.wait::ld before its tcgen05.dealloc: {WAIT_LD_REASON}")
    unwaited = _loads_never_waited(report.ptx)
    if unwaited:
        return failed(f"the compiled kernel's last {unwaited} tcgen05.ld have no tcgen05.wait::ld after them before "
                      f"the tcgen05.dealloc: a wait orders only the loads issued before it, and {WAIT_LD_REASON}")
    unelected = _unelected_commits(report.ptx)
    if unelected:
        return failed(f"{unelected} tcgen05.commit have no elect.sync before them: every lane that executes it "
                      f"commits, and each barrier counts one arrival")
    return passed()


def _capstone_ptx_criterion(context) -> Verdict:
    try:
        source = kernel_module_source(context.answer)
    except (OSError, TypeError) as error:
        return failed(f"the kernel's source cannot be read ({error}); define it in a notebook cell or a .py file")
    with tempfile.TemporaryDirectory(prefix="cutekit-ch09-") as folder:
        path = Path(folder) / "learner_capstone.py"
        path.write_text(source)
        report = compile_to_ptx(str(path), unwrap(context.answer).__name__, CAPSTONE_FAKES, arch=ARCH)
    return capstone_ptx(report)


CAPSTONE_GPU_CASE = {"M": 4096, "N": 4096, "K": 4096}


def gpu_capstone(host, case) -> dict:
    """Harness (an sm_100 GPU, real CuTeDSL): the learner's kernel on a 4096^3 fp16 GEMM with an fp32 bias,
    compared with torch.relu(torch.addmm(bias, A, B^T)) in fp32, then timed next to that torch expression."""
    return gpu_gemm_bias_relu(host, case, bias_scale=4)


def _capstone_gpu(context) -> Verdict:
    from .kernels import on_gpu
    reply = on_gpu(context.answer, f"{__name__}:gpu_capstone", [CAPSTONE_GPU_CASE])
    if not reply.ok:
        return failed(f"on the GPU: {reply.error[:600]}")
    value, error = reply.values[0]
    where = "a 4096^3 fp16 GEMM + bias + relu on the GPU"
    if error:
        return failed(f"{where}: {error[:500]}")
    if value["wrong"]:
        return failed(f"{where}: {value['wrong']} entries differ from torch.relu(torch.addmm(bias, A, B^T)), the "
                      f"first at {value['first']} (on a GPU an ordering mistake gives wrong values that change from "
                      f"run to run)")
    flops = 2 * 4096 ** 3
    return Verdict(True, f"{where}: {value['ms']:.3f} ms ({flops / value['ms'] / 1e9:.0f} TFLOP/s), "
                         f"torch.relu(torch.addmm(...)) {value['torch_ms']:.3f} ms")


CAPSTONE = Exercise(
    id="ch09.capstone",
    statement="Write gemm_bias_relu(mA, mB, bias, mD) and its warp-specialised kernel for sm_100: D (M, N) fp16 = "
              "relu(A (M, K) @ B (N, K)^T + bias (N,) fp32), one bias value per column. A CTA of six warps per "
              "tile of D: a producer warp issues the TMA loads into a ring of stages, an MMA warp issues the "
              "tcgen05 MMAs accumulating in TMEM and the commits that release the stages and signal the "
              "accumulator, and four epilogue warps of their own read TMEM with tcgen05.ld and apply the bias and "
              "the clamp; M, N and K ragged (N and K multiples of 8).",
    example="M=100, N=200, K=40: D[m, n] = max(sum_k A[m, k] B[n, k] + bias[n], 0)",
    rule=("Each warp has one role: one warp issues every TMA load, another every tcgen05 MMA and commit, four others "
          "(one per quarter of TMEM's lanes) every TMEM load.\n"
          "The producer refills a stage only after the commit of the MMAs that read it, the MMA warp waits for a "
          "k-tile's full barrier before its MMAs, the tile's first MMA overwrites TMEM and every later one adds, and "
          "a last commit tells the epilogue warps the accumulator is ready.\n"
          "In the epilogue a warp reads only its own quarter of TMEM's lanes (with the 32x32b shape a thread reads "
          "a row), its loads are waited for (tcgen05.wait::ld) before the TMEM is freed, and each value gets the bias "
          "of its own column of D before the clamp at 0.\n"
          "TMA clips loads at a tensor's edge (the missing rows read as zero), a store from registers does not: "
          "entries past D's edge, and bias values past N, are never touched; the TMEM columns are freed before "
          "the CTA exits."),
    cases=_capstone_cases,
    ask=_ask_capstone,
    runs=_capstone_runs,
    timeout=240.0,
    criteria=(
        Criterion("ragged M and N over two tile-columns of 128, one short k-tile: D = relu(A B^T + bias)",
                  "reference", 3, _capstone_criterion(0)),
        Criterion("two tile-rows, 7 k-tiles round the ring of stages: every wait, commit and load in order",
                  "reference", 2, _capstone_criterion(1)),
        Criterion("warp-specialised, as the simulator saw each CTA: one warp issues every TMA load, another every "
                  "tcgen05.mma, four others every tcgen05.ld", "reference", 1, _capstone_roles_criterion),
        Criterion("compiled by real CuTeDSL for sm_100a: TMA loads, mbarrier waits, tcgen05 alloc/mma/commit/ld/"
                  "dealloc, a wait::ld after the last ld; no wgmma, no mma.sync", "cutedsl-cpu", 1,
                  _capstone_ptx_criterion),
        Criterion("on an sm_100 GPU: a 4096^3 GEMM + bias + relu equals torch, timed against it", "gpu", 1,
                  _capstone_gpu, needs="sm_100"),
    ),
)


KERNEL_EXERCISES = [MMA_WARP_LOOP, TMEM_EPILOGUE, CAPSTONE]
