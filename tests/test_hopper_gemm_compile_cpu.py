"""CPU tier for the Hopper GEMM: it compiles for sm_90a without a GPU (fake tensors), and its PTX holds the
Hopper instructions the kernel was written around (TMA loads and stores, mbarriers, wgmma 64x256x16,
setmaxnreg, stmatrix), with no Ampere mma.sync and nothing spilled to local memory.

CuTeDSL reads the target from CUTE_DSL_ARCH once per process, and the other CPU tests compile for sm_80,
so the kernel is compiled in a child process, with every warning an error (`python -W error`)."""
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.cutedsl
pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")

ROOT = Path(__file__).parents[1]

COMPILE = """
import json, sys
sys.path.insert(0, {root!r})
from benchmarks.kernels import hopper_gemm
print(json.dumps(hopper_gemm.compile_for_cpu(**json.loads(sys.argv[1])).__ptx__))
"""


def compiled_ptx(**knobs):
    environment = dict(os.environ, CUTE_DSL_ARCH="sm_90a")
    done = subprocess.run([sys.executable, "-W", "error", "-c", COMPILE.format(root=str(ROOT)), json.dumps(knobs)],
                          capture_output=True, text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def opcodes(ptx):
    return Counter(re.findall(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.:]*)", ptx, flags=re.MULTILINE))


@pytest.fixture(scope="module")
def ptx():
    return compiled_ptx()


def test_the_main_loop_is_four_wgmmas_of_64x256x16_per_k_tile(ptx):
    ops = opcodes(ptx)
    # BK = 64 is four k-steps of 16, each one 64 x 256 x 16 wgmma per consumer warpgroup
    assert ops["wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"] == 4
    assert ops["wgmma.fence.sync.aligned"] >= 1 and ops["wgmma.commit_group.sync.aligned"] >= 1
    assert ops["wgmma.wait_group.sync.aligned"] >= 2            # wait_group(1) in the loop, wait_group(0) after
    assert not any(op.startswith(("mma.sync", "ldmatrix")) for op in ops), "Ampere instructions in the Hopper kernel"


def test_operands_arrive_by_tma_on_mbarriers_and_c_leaves_by_tma(ptx):
    ops = opcodes(ptx)
    assert any(op.startswith("cp.async.bulk.tensor.2d.shared") for op in ops)           # loads of A and B
    assert any(op.startswith("cp.async.bulk.tensor.2d.global.shared") for op in ops)    # the store of C
    assert ops["mbarrier.init.shared.b64"] == 2 * 4                                     # full + empty, 4 stages
    assert "mbarrier.arrive.expect_tx.shared.b64" in ops and "mbarrier.try_wait.parity.shared.b64" in ops
    assert "fence.proxy.async.shared::cta" in ptx                   # stmatrix's writes visible to the TMA store
    assert "cp.async.bulk.wait_group.read" in ops
    assert not any(op.startswith(("ld.global", "st.global", "cp.async.cg", "cp.async.ca")) for op in ops)


def test_the_epilogue_writes_c_with_stmatrix(ptx):
    # 64 x 256 fp32 accumulators per warpgroup = 128 per thread = 16 stmatrix.x4 of 8 fp16 each
    assert opcodes(ptx)["stmatrix.sync.aligned.m8n8.x4.shared.b16"] == 16


def test_registers_move_from_the_producer_to_the_consumers(ptx):
    assert re.search(r"\.reqntid 384, 1, 1", ptx)
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+40;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)
    assert not any(op.startswith(("ld.local", "st.local")) for op in opcodes(ptx))


def test_a_128_wide_tile_uses_64x128x16_wgmmas_and_three_stages():
    ops = opcodes(compiled_ptx(BN=128, STAGES=3))
    assert ops["wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"] == 4
    assert ops["mbarrier.init.shared.b64"] == 2 * 3


def test_a_cluster_of_two_multicasts_b_and_releases_stages_in_both_ctas():
    ptx = compiled_ptx(CLUSTER_M=2)
    ops = opcodes(ptx)
    assert any("multicast::cluster" in op for op in ops)                      # B: one load, two CTAs
    assert any(op.startswith("cp.async.bulk.tensor.2d.shared::cta") for op in ops)   # A: this CTA's own
    assert "mbarrier.arrive.shared::cluster.b64" in ops and "mapa.shared::cluster.u32" in ops
    assert "barrier.cluster.wait" in ops                 # after the barriers' init, and before leaving
    assert ops["wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"] == 4
    assert not any(op.startswith(("ld.local", "st.local")) for op in ops)


def test_settings_are_restored_and_unknown_ones_named():
    from benchmarks.kernels import hopper_gemm
    with hopper_gemm.configured(STAGES=3):
        assert hopper_gemm.STAGES == 3
    assert hopper_gemm.STAGES == 4
    with pytest.raises(ValueError, match="BLOCK_N"):
        with hopper_gemm.configured(BLOCK_N=64):
            pass


def test_shape_rules_are_stated_in_the_errors():
    from benchmarks.kernels import hopper_gemm
    with pytest.raises(ValueError, match="multiples of 8"):
        hopper_gemm.check_shapes(128, 128, 100)
    with pytest.raises(ValueError, match="multiples of 8"):
        hopper_gemm.check_shapes(128, 12, 64)
    hopper_gemm.check_shapes(1, 8, 8)
    hopper_gemm.check_shapes(1000, 1000, 1000)
    with hopper_gemm.configured(CLUSTER_M=4), pytest.raises(ValueError, match="CLUSTER_M must be 1 or 2"):
        hopper_gemm.check_settings()
