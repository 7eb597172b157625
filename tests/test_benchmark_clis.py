"""The GPU benchmark scripts refuse bad arguments with a message naming the argument, before touching a GPU;
sass_report's loop finder reads a disassembly correctly (no GPU needed for either)."""
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))


def refusal(capsys, module, argv):
    with pytest.raises(SystemExit) as stop:
        importlib.import_module(f"benchmarks.{module}").main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("module,argv,named", [
    ("bench", ["--only", "gemm,nope"], "'nope'"),
    ("bench", ["--repeats", "0"], "--repeats"),
    ("sweep_gemm_tensorcore", ["--size", "100"], "--size must be a positive multiple of 64"),
    ("compare_nvidia_examples", ["--examples", "/nowhere"], "lacks tensorop_gemm.py"),
    ("compare_nvidia_examples", ["--examples", str(ROOT), "--rounds", "0"], "--rounds"),
    ("compare_nvidia_examples", ["--examples", str(ROOT), "--hopper-only"], "lacks dense_gemm.py"),
    ("sweep_hopper_gemm", ["--size", "100"], "--size must be a positive multiple of 8"),
    ("sweep_hopper_gemm", ["--repeats", "0"], "--repeats must be at least 1"),
    ("sass_report", ["--arch", "hopper"], "--arch must look like sm_90"),
    ("blackwell_gemm_bench", ["--size", "1000"], "--size must be a positive multiple of 128"),
    ("blackwell_gemm_bench", ["--rounds", "0"], "--repeats and --rounds must be at least 1"),
    ("blackwell_gemm_bench", ["--repeats", "-3"], "--repeats and --rounds must be at least 1"),
    ("sass_report", ["--config", "fastest"], "invalid choice: 'fastest'"),
])
def test_a_bad_argument_is_named(capsys, module, argv, named):
    assert named in refusal(capsys, module, argv)


@pytest.mark.parametrize("found,here", [
    (None, "this machine has no CUDA GPU"),
    (("NVIDIA H100 80GB HBM3", (9, 0)), "this NVIDIA H100 80GB HBM3 is sm_90"),
    (("NVIDIA GeForce RTX 5090", (12, 0)), "this NVIDIA GeForce RTX 5090 is sm_120"),
    (("NVIDIA A100-SXM4-80GB", (8, 0)), "this NVIDIA A100-SXM4-80GB is sm_80"),
])
def test_the_blackwell_benchmark_says_in_one_line_what_it_needs_and_exits_0(capsys, monkeypatch, found, here):
    from benchmarks import blackwell_gemm_bench
    monkeypatch.setattr(blackwell_gemm_bench, "device", lambda: found)
    assert blackwell_gemm_bench.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "needs an sm_100a GPU (B200, GB200" in lines[0] and lines[0].endswith(here), lines


def test_the_blackwell_benchmark_runs_on_b200_and_b300_only():
    from benchmarks.blackwell_gemm_bench import why_not_here
    assert why_not_here(("NVIDIA B200", (10, 0))) == why_not_here(("NVIDIA B300", (10, 3))) == ""
    assert why_not_here(("NVIDIA Jetson Thor", (11, 0))) and why_not_here(("NVIDIA GB10", (12, 1)))


def test_compare_checks_the_size_after_finding_the_examples(capsys, tmp_path):
    for name in ("tensorop_gemm.py", "sgemm.py", "elementwise_add.py"):
        (tmp_path / name).write_text("")
    assert "--size must be a positive multiple of 128" in refusal(
        capsys, "compare_nvidia_examples", ["--examples", str(tmp_path), "--size", "1000"])


SASS = """
        /*0100*/                   MOV R1, c[0x0][0x28] ;
        /*0110*/                   HMMA.16816.F32 R4, R8, R12, R4 ;
        /*0120*/                   LDSM.16.M88.4 R8, [R2] ;
        /*0130*/                   HMMA.16816.F32 R16, R8, R14, R16 ;
        /*0140*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0150*/               @P0 BRA 0x110 ;
        /*0160*/                   STG.E.128 [R20.64], R4 ;
        /*0170*/                   EXIT ;
        /*0180*/                   BRA 0x180;
"""


def test_the_loop_is_the_body_of_the_backward_branch():
    from benchmarks.sass_report import loop_mix
    count, opcodes = loop_mix(SASS)
    assert count == 5                      # 0x110 .. 0x150; the self-branch at 0x180 is one instruction
    assert opcodes["HMMA"] == 2 and opcodes["LDSM"] == 1 and opcodes["BAR"] == 1 and opcodes["BRA"] == 1
    assert "STG" not in opcodes and "MOV" not in opcodes


def test_a_missing_tool_is_named(monkeypatch):
    from benchmarks import sass_report
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CUOBJDUMP", raising=False)
    with pytest.raises(SystemExit, match="`cuobjdump` not found"):
        sass_report.tool("cuobjdump")
