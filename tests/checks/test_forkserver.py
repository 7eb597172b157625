"""CuTeDSL jobs (a check's trace or compile) run in forks of one server that imported CuTeDSL once: each job still
runs alone, a hang is killed at its time limit, a crash is reported with what it printed, and the answers are the
ones a process of its own gives."""
import os
import time
from pathlib import Path

import pytest

from cutekit.checks import _forkserver
from cutekit.checks.cutedsl import FakeTensor, compile_to_ptx, run_in_cutedsl

pytest.importorskip("cutlass", reason="nvidia-cutlass-dsl is not installed")
pytestmark = pytest.mark.skipif(not _forkserver.usable({"CUTE_DSL_ARCH": "sm_80"}),
                                reason="the CuTeDSL server runs on Linux only (and not with CUTEKIT_CUTEDSL_SERVER=off)")

JOBS = '''
import os, time

def parent():
    return os.getppid()

def hang():
    time.sleep(600)

def crash():
    os.write(2, b"the job printed this before it ended\\n")
    os._exit(3)

def layout(cute, shape, stride):
    return cute.make_layout(shape, stride=stride)
'''

KERNEL = '''
import cutlass
import cutlass.cute as cute

@cute.kernel
def add_one(x: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    x[t] = x[t] + 1.0

@cute.jit
def host(x: cute.Tensor):
    add_one(x).launch(grid=[1, 1, 1], block=[32, 1, 1])
'''


@pytest.fixture
def jobs(tmp_path):
    path = tmp_path / "server_jobs.py"
    path.write_text(JOBS)
    return str(path)


def test_jobs_are_forks_of_one_server_not_of_this_process(jobs):
    first = run_in_cutedsl(jobs, "parent", [()])
    second = run_in_cutedsl(jobs, "parent", [()])
    assert first.ok and second.ok, (first.error, second.error)
    assert first.values[0][0] == second.values[0][0] != str(os.getpid())


def test_a_trace_gives_what_a_process_of_its_own_gives(jobs, monkeypatch):
    calls = [((4, (2, 3)), (1, (8, 4))), ((4, 2), (0, 1)), ((3,), (2, 1))]
    served = run_in_cutedsl(jobs, "layout", calls, with_cute=True)
    monkeypatch.setenv(_forkserver.SWITCH, "off")
    alone = run_in_cutedsl(jobs, "layout", calls, with_cute=True)
    assert served.values == alone.values
    assert served.values[0] == ("(4,(2,3)):(1,(8,4))", "") and served.values[2][0] is None


def test_a_compile_gives_the_ptx_a_process_of_its_own_gives(tmp_path, monkeypatch):
    path = tmp_path / "server_kernel.py"
    path.write_text(KERNEL)
    served = compile_to_ptx(str(path), "host", (FakeTensor("Float32", 1),))
    monkeypatch.setenv(_forkserver.SWITCH, "off")
    alone = compile_to_ptx(str(path), "host", (FakeTensor("Float32", 1),))
    assert served.ok and alone.ok, (served.error, alone.error)
    assert served.counts == alone.counts and served.count("ld.global") >= 1


def test_a_job_that_hangs_is_killed_at_its_limit_and_the_next_job_is_served(jobs):
    started = time.monotonic()
    reply = run_in_cutedsl(jobs, "hang", [()], timeout=2)
    assert not reply.ok and reply.error == "CuTeDSL did not finish within 2 s"
    assert time.monotonic() - started < 10
    assert run_in_cutedsl(jobs, "parent", [()]).ok


def test_a_job_that_ends_the_process_says_so_with_what_it_printed(jobs):
    reply = run_in_cutedsl(jobs, "crash", [()])
    assert not reply.ok
    assert reply.error.startswith("the CuTeDSL process ended without an answer")
    assert "the job printed this before it ended" in reply.error
    assert run_in_cutedsl(jobs, "parent", [()]).ok


def test_the_server_leaves_when_its_socket_is_gone(jobs):
    server = int(run_in_cutedsl(jobs, "parent", [()]).values[0][0])
    _forkserver._address({**os.environ, "CUTE_DSL_ARCH": os.environ.get("CUTE_DSL_ARCH", "sm_80"),
                          "CUTEKIT_REAL_CUTLASS": "1"}).unlink()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(server):
        time.sleep(0.2)
    assert not _alive(server)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_only_a_named_architecture_on_linux_goes_through_a_server(monkeypatch):
    assert not _forkserver.usable({})                           # the GPU it finds: CUDA is not forked
    monkeypatch.setenv(_forkserver.SWITCH, "off")
    assert not _forkserver.usable({"CUTE_DSL_ARCH": "sm_80"})


def test_a_temporary_folder_too_long_for_a_socket_means_a_process_of_its_own(jobs, monkeypatch, tmp_path):
    long = tmp_path / ("x" * 90)
    long.mkdir()
    monkeypatch.setenv("TMPDIR", str(long))
    monkeypatch.setattr("tempfile.tempdir", None)
    reply = run_in_cutedsl(jobs, "parent", [()])
    assert reply.ok and reply.values[0][0] == str(os.getpid())       # a child of this process, not of a server
    assert not list(long.glob("cutekit-cutedsl-*"))


@pytest.fixture
def short_tmp(monkeypatch):
    """A temporary folder with a path short enough for a socket's address below it."""
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix="ck", dir="/tmp")
    monkeypatch.setenv("TMPDIR", folder)
    monkeypatch.setattr("tempfile.tempdir", None)
    yield Path(folder)
    for sock in Path(folder).glob("*/*.sock"):
        sock.unlink()                       # its server leaves
    shutil.rmtree(folder, ignore_errors=True)


def test_the_sockets_live_in_a_folder_no_one_else_can_enter(jobs, short_tmp):
    assert run_in_cutedsl(jobs, "parent", [()]).ok
    folder = short_tmp / f"cutekit-cutedsl-{os.getuid()}"
    assert folder.is_dir() and folder.stat().st_mode & 0o777 == 0o700 and list(folder.glob("*.sock"))


def test_a_folder_others_can_enter_is_not_used(jobs, short_tmp):
    folder = short_tmp / f"cutekit-cutedsl-{os.getuid()}"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    reply = run_in_cutedsl(jobs, "parent", [()])
    assert reply.ok and reply.values[0][0] == str(os.getpid())       # a process of its own
    assert not list(folder.iterdir())
