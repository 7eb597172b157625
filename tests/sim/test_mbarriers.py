"""cutekit.sim.mbarriers, the pure-Python model of an mbarrier pipeline that grades chapter 08's exercises:
the PTX rules it models (a phase completes on its arrivals and its expected bytes; a wait names a parity and
returns once the phase of that parity has completed) and the mistakes it names."""
import pytest

from cutekit.sim.mbarriers import (MISTAKES, MBarrier, arrive, arrive_expect_tx, commit_group, fence, mma,
                                   run_pipeline, tma_load, wait, wait_group, wgmma)


def producer(k_tiles, stages, nbytes=1024):
    steps, stage, phase = [], 0, 1
    for k_tile in range(k_tiles):
        steps += [wait("empty", stage, phase), arrive_expect_tx("full", stage, nbytes), tma_load(stage, k_tile)]
        stage, phase = (0, phase ^ 1) if stage + 1 == stages else (stage + 1, phase)
    return steps


def consumer(k_tiles, stages, depth=1):
    steps, stage, phase, running = [fence()], 0, 0, []
    for k_tile in range(k_tiles):
        steps += [wait("full", stage, phase), wgmma(stage, k_tile), commit_group(), wait_group(depth)]
        running.append(stage)
        if len(running) > depth:
            steps.append(arrive("empty", running.pop(0)))
        stage, phase = (0, phase ^ 1) if stage + 1 == stages else (stage + 1, phase)
    return steps + [wait_group(0)]


def test_a_phase_completes_on_its_arrivals_and_its_bytes():
    barrier = MBarrier("full[0]", 2)
    assert barrier.passes(1) and not barrier.passes(0)          # fresh: phase 0 runs, "the phase before" is done
    barrier.arrive(expect_tx=100)
    barrier.complete_tx(100)
    assert barrier.phase == 0                                   # one arrival of two
    barrier.arrive()
    assert barrier.phase == 1 and barrier.passes(0) and not barrier.passes(1)
    barrier.arrive(expect_tx=8)
    barrier.arrive()
    assert barrier.phase == 1                                   # both arrived, 8 bytes still to land
    barrier.complete_tx(8)
    assert barrier.phase == 2 and barrier.passes(1)


@pytest.mark.parametrize("k_tiles,stages,depth", [(1, 2, 1), (7, 2, 1), (9, 4, 2), (3, 4, 0), (12, 3, 1), (5, 5, 2)])
def test_the_kernels_protocol_runs_for_any_depth_below_the_stage_count(k_tiles, stages, depth):
    assert run_pipeline(producer(k_tiles, stages), [consumer(k_tiles, stages, depth)], k_tiles, stages, 1024).ok


def test_two_consumers_each_release_every_stage_before_it_is_reused():
    def sync_consumer(k_tiles, stages):
        steps, stage, phase = [], 0, 0
        for k_tile in range(k_tiles):
            steps += [wait("full", stage, phase), mma(stage, k_tile), arrive("empty", stage)]
            stage, phase = (0, phase ^ 1) if stage + 1 == stages else (stage + 1, phase)
        return steps
    both = [sync_consumer(6, 2), sync_consumer(6, 2)]
    assert run_pipeline(producer(6, 2), both, 6, 2, 1024).ok
    one_forgets = [sync_consumer(6, 2), [step for step in sync_consumer(6, 2) if step[0] != "arrive"]]
    report = run_pipeline(producer(6, 2), one_forgets, 6, 2, 1024)
    assert report.mistake == "deadlock" and "consumer 1" in report.message


def test_each_mistake_is_named():
    k_tiles, stages = 5, 2
    cases = {
        "wrong phase": (producer(k_tiles, stages), [wait("full", 0, 1)] + consumer(k_tiles, stages)[2:]),
        "stage reused": ([s for s in producer(k_tiles, stages) if s[0] != "wait"], consumer(k_tiles, stages)),
        "released while read": (producer(k_tiles, stages),
                                [s if s[0] != "wait_group" or s[1] == 0 else wait_group(2) for s in consumer(k_tiles, stages)]),
        "read before landed": ([arrive("full", s[2]) if s[0] == "arrive_expect_tx" else s for s in producer(k_tiles, stages)],
                               consumer(k_tiles, stages)),
        "no fence": (producer(k_tiles, stages), consumer(k_tiles, stages)[1:]),
        "still running": (producer(k_tiles, stages), consumer(k_tiles, stages)[:-1]),
        "deadlock": (producer(k_tiles, stages), [s for s in consumer(k_tiles, stages) if s[0] != "arrive"]),
        "wrong k-tile": (producer(k_tiles, stages), [s if s[0] != "wgmma" else wgmma(s[1], 0) for s in consumer(k_tiles, stages)]),
    }
    for name, (produce, consume) in cases.items():
        report = run_pipeline(produce, [consume], k_tiles, stages, 1024)
        assert report.mistake == name, (name, str(report))
        assert str(report).startswith(MISTAKES[name])


def test_kernel_lines_reads_a_kernel_without_importing_it():
    from cutekit.source import kernel_lines
    text = kernel_lines("benchmarks.kernels.hopper_gemm", "def check_settings", "if CLUSTER_M not in (1, 2)")
    assert text.startswith("def check_settings():") and "SMEM_CAPACITY" in text
    with pytest.raises(ValueError, match="no line containing 'no such line'"):
        kernel_lines("benchmarks.kernels.hopper_gemm", "no such line", "x")
