"""The simulator against real CuTeDSL 4.8.1 and the PTX ISA on generated kernels (tests/sim/differential.py):
a small fixed sample here (one CuTeDSL process for all of it); `make differential` runs 2,000. Below it, the
disagreements the differential test found, each cut down to a kernel of tests/sim/found_kernels.py, run on the
simulator alone against what the PTX ISA computes."""
import importlib

import numpy
import pytest

import cutekit
from cutekit.sim import DeadlockError, KernelError
from tests.sim import differential

# seed, cases: about 3 s of CuTeDSL (its import 2 s, a compile 0.25 s). Seed 82's first 10 kernels hold every
# statement of the grammar, blocks of 32, 48 and 64 threads, both refusals, and defined and undefined programs.
SAMPLE = (82, 10)


@pytest.mark.cutedsl
def test_a_sample_of_generated_kernels_agrees_with_cutedsl_and_the_ptx_isa():
    pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
    bad, counts = differential.run(differential.make_cases(SAMPLE[1], SAMPLE[0]))
    assert counts["cutedsl_refuses"] >= 2 and counts["undefined"] >= 3 and counts["defined"] >= 5, counts
    assert not bad, differential.report(bad, counts)


def test_a_disagreement_is_reported():
    """The judge is not vacuous: a wrong output, a missing refusal, a wrong refusal, a run of what CuTeDSL refuses
    and a refusal at another line are each reported."""
    case = differential.make_case(0, 0)
    accepted = {"ok": True, "collectives": 0, "ptx": True}
    expected = {"out": [1] * case.threads}
    assert differential.judge(case, accepted, {"out": [2] * case.threads}, expected)[1]
    assert differential.judge(case, accepted, {"out": [1] * case.threads}, {"undefined": "x", "lines": [12]})[1]
    assert differential.judge(case, accepted, {"error": "DeadlockError", "line": 12, "text": ""}, expected)[1]
    assert not differential.judge(case, accepted, {"out": [1] * case.threads}, expected)[1]
    refused = next(c for c in differential.make_cases(SAMPLE[1], SAMPLE[0]) if c.refusals)
    line, code = refused.refusals[0]
    verdict = {"ok": False, "code": code, "line": line}
    assert differential.judge(refused, verdict, {"out": [0] * refused.threads}, {})[1]
    assert differential.judge(refused, verdict, {"error": "ConstexprError", "line": line + 1,
                                                 "text": f"error[{code}]"}, {})[1]
    assert not differential.judge(refused, verdict, {"error": "ConstexprError", "line": line,
                                                     "text": f"error[{code}]"}, {})[1]


def test_shfl_source_lanes_follow_the_ptx_isa():
    """The oracle's source lane (PTX ISA, shfl.sync): CUDA's __shfl_up_sync / __shfl_down_sync / __shfl_xor_sync
    with a width of 8 (c = 0x1800 for up, 0x181f for the others) stay inside each group of 8 lanes."""
    source = differential.source_lane
    assert [source("up", lane, 1, 0x1800) for lane in range(8, 12)] == [8, 8, 9, 10]
    assert [source("down", lane, 2, 0x181F) for lane in range(12, 16)] == [14, 15, 14, 15]
    assert [source("bfly", lane, 4, 0x181F) for lane in (0, 4, 9)] == [4, 0, 13]
    assert [source("idx", lane, 3, 0x181F) for lane in (0, 9, 31)] == [3, 11, 27]
    assert source("up", 5, 1, 31) == 5 and source("down", 31, 1, 31) == 31


# ------------------------------------------------------------------------------------------ found

@pytest.fixture(scope="module")
def found():
    with cutekit.using("sim", fresh=("tests.sim.found_kernels",)):
        yield importlib.import_module("tests.sim.found_kernels")


def _run(found, case, x=None, n=0):
    from cutlass.cute.runtime import from_dlpack
    found.CASE[0] = case
    x = numpy.arange(32, dtype=numpy.int32) - 9 if x is None else x
    out = numpy.zeros(32, numpy.int32)
    found.launch(from_dlpack(x), from_dlpack(out), n)
    return x, out


def _int32(values):
    return numpy.array(values, numpy.int64).astype(numpy.uint32).view(numpy.int32).tolist()


def test_int32_arithmetic_wraps_as_in_a_register(found):
    x, out = _run(found, "int32_wraps")
    v = int(x[31]) ^ -2 ** 31
    assert out.tolist() == x[:31].tolist() + _int32([v + v])


def test_a_reduction_over_groups_of_one_is_no_collective(found):
    x, out = _run(found, "group_of_one_in_a_divergent_loop")
    v = x.astype(numpy.int64)
    for lane in range(32):
        for _ in range(lane % 3):
            v[lane] += 3
    assert out.tolist() == [int(v.sum())] * 32


def test_a_loop_counters_name_counts_an_unrolled_loop_after_a_loop_on_the_gpu(found):
    x, out = _run(found, "counter_name_reused", n=3)
    assert out.tolist() == (x + 0 + 1 + 2 + 100).tolist()


@pytest.mark.parametrize("case, line, code", [
    ("range_constexpr_no_thread_reaches", "for i in cutlass.range_constexpr(n):", "ARG_NON_CONSTANT"),
    ("const_expr_after_a_divergent_reduction", "if cutlass.const_expr(lane < 4):", "PHASE_REQUIRES_CONSTANT"),
    ("range_constexpr_in_an_unrolled_loop", "for j in cutlass.range_constexpr(lane % 2 + 1):", "ARG_NON_CONSTANT"),
])
def test_what_cutedsl_refuses_to_compile_is_refused_before_any_thread_runs(found, case, line, code):
    with pytest.raises(KernelError) as caught:
        _run(found, case)
    error = caught.value
    assert type(error).__name__ == "ConstexprError" and error.line == line
    assert f"error[{code}]" in str(error) and "before any thread runs" in str(error)


def test_a_run_time_const_expr_in_a_branch_the_trace_skips_is_not_refused(found):
    x, out = _run(found, "run_time_const_expr_in_a_branch_the_trace_skips")
    assert out.tolist() == (x + 3).tolist()
    x, out = _run(found, "range_constexpr_in_an_unrolled_loop_of_none")
    assert out.tolist() == x.tolist()


@pytest.mark.parametrize("case, line, words", [
    ("warp_idx_and_a_vote_in_two_branches", "if cute.arch.vote_uni_sync(n == 3):",
     ["reached by lanes 16-31 of warp 0", "lanes 0-15 wait at cute.arch.warp_idx() at found_kernels.py:"]),
    ("shuffle_while_lane_31_waits_at_warp_idx", "v = v + cute.arch.shuffle_sync(v, 4)",
     ["reached by lanes 0-30 of warp 0", "lane 31 waits at cute.arch.warp_idx() at found_kernels.py:"]),
    ("undefined_read_after_a_hang_at_warp_idx", "v = v + cute.arch.warp_idx()",
     ["reached by lanes 0-7 of warp 0", "lanes 8-31 wait at cute.arch.warp_reduction_sum() at found_kernels.py:"]),
    ("warp_idx_at_two_lines", "v = v + cute.arch.warp_idx()",
     ["reached by lanes 0-15 of warp 0, which wait there for lane 16; it reaches cute.arch.warp_idx() at "
      "found_kernels.py:"]),
    ("even_lanes_wait_at_warp_idx", "v = v + cute.arch.warp_idx()",
     ["cute.arch.warp_idx() at found_kernels.py:", "reached by lanes 0,2,4,",
      "wait at cute.arch.warp_reduction_sum() at found_kernels.py:"]),
])
def test_a_lane_held_at_warp_idx_has_not_exited(found, case, line, words):
    """CuTeDSL's warp_idx() is a shfl.sync from lane 0: a lane that passed it is held there on a GPU until the
    whole warp comes, so another collective cannot count it as exited, and the hang is told at warp_idx()."""
    with pytest.raises(DeadlockError) as caught:
        _run(found, case)
    message = str(caught.value)
    assert caught.value.line == line, message
    for word in words:
        assert word in message, message


def test_a_lane_held_at_warp_idx_is_not_refused_at_a_later_mask(found):
    """On a GPU lanes 0-30 hang at one warp_idx() and lane 31 at the other: the hang is told, not the ballot
    after them that none of them reaches; where every lane passes warp_idx(), the ballot's mask is refused."""
    with pytest.raises(DeadlockError) as caught:
        _run(found, "mask_error_after_a_hang_at_warp_idx")
    assert caught.value.line == "v = v + cute.arch.warp_idx()", str(caught.value)
    assert "reached by lanes 0-30 of warp 0, which wait there for lane 31; it reaches cute.arch.warp_idx() at " \
           "found_kernels.py:" in str(caught.value)
    with pytest.raises(KernelError) as caught:
        _run(found, "mask_error_after_warp_idx")
    assert type(caught.value) is KernelError and caught.value.thread == (0, 0, 0), str(caught.value)
    assert "v = v ^ cute.arch.vote_ballot_sync(" in caught.value.line
    assert "lane 0 executes it with mask 0xffff0000, which does not name lane 0" in str(caught.value)
