"""Chapters 05 and 07 show the latest measured numbers when they cannot measure: the rows come from
benchmarks/RESULTS.md, with the device they were measured on."""
import pytest

from cutekit.results import latest_table


def test_the_row_sums_come_with_their_device_and_ratio_to_torch():
    table = latest_table("sum rows")
    assert table.startswith("Device: NVIDIA H100")
    lines = table.splitlines()
    assert lines[2].split()[:3] == ["kernel", "shape", "dtype"] and "ratio" in lines[2]
    rows = [line for line in lines[4:] if line]
    assert len(rows) == 9 and all(line.startswith("sum rows") for line in rows)
    assert all(0.5 < float(line.split()[-1]) < 2 for line in rows)


def test_several_kernels_at_once_keep_the_tables_order():
    rows = latest_table("SGEMM", "GEMM").splitlines()[4:]
    assert [row.split()[0] for row in rows] == ["GEMM", "GEMM", "SGEMM"]


def test_a_kernel_that_was_never_measured_is_named_in_the_error():
    with pytest.raises(ValueError, match="'nope'"):
        latest_table("nope")
    with pytest.raises(ValueError, match="name at least one kernel"):
        latest_table()


def test_a_missing_results_file_says_where_it_comes_from(tmp_path):
    with pytest.raises(FileNotFoundError, match="student bundle"):
        latest_table("sum rows", path=tmp_path / "RESULTS.md")
