"""Chapter 07's roofline: GEMM measurements placed by arithmetic intensity under the device's ceilings."""
import pytest

from benchmarks import roofline
from benchmarks.bench import Row


def rows():
    return [Row("gemm tensorcore TN (mma.sync)", f"{n}x{n}x{n}", "float16", 2 * n ** 3 / 4e11, 2 * n ** 3 / 7e11,
                2 * n ** 3, "TFLOP/s") for n in (2048, 4096, 8192)] + \
           [Row("sgemm SIMT (FFMA, tf32 off)", "8192x8192x8192", "float32", 22.3, 20.6, 2 * 8192 ** 3, "TFLOP/s")]


def test_a_square_gemm_does_n_over_3_flops_per_element_moved():
    assert roofline.gemm_intensity("8192x8192x8192", "float16") == pytest.approx(8192 / 3)
    assert roofline.gemm_intensity("8192x8192x8192", "float32") == pytest.approx(8192 / 6)


def test_the_h100_picture_has_both_ceilings_and_a_point_per_measurement():
    axes = roofline.figure(rows(), "NVIDIA H100 80GB HBM3").axes[0]
    notes = [text.get_text() for text in axes.texts]
    assert notes == ["fp16 tensor cores: 989.4 TFLOP/s", "fp32 CUDA cores: 66.9 TFLOP/s"]
    measured = [line for line in axes.lines if line.get_marker() in ("o", "x")]
    assert sum(len(line.get_xdata()) for line in measured) == 2 * 4     # ours and torch's, per row
    tensor_core = next(line for line in measured if line.get_label().startswith("gemm tensorcore"))
    assert list(tensor_core.get_ydata()) == pytest.approx([400.0] * 3)
    assert axes.get_xscale() == axes.get_yscale() == "log" and "H100" in axes.get_title()


def test_an_unknown_device_gets_its_points_and_says_it_has_no_ceilings():
    axes = roofline.figure(rows(), "Some GPU").axes[0]
    assert not axes.texts and "no ceilings known" in axes.get_title()


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="not like 4096x4096x4096"):
        roofline.gemm_intensity("8192^3", "float16")
    with pytest.raises(ValueError, match="no GEMM rows"):
        roofline.figure([], "NVIDIA H100")
