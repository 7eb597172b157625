"""CuTeDSL, imported once: a server that forks a child per compile or trace job.

A check's CuTeDSL job used to start a Python process that imported CuTeDSL (about a second) before doing a fifth
of a second's work. Here one server process per setting (the CuTeDSL environment it was started with, the
Python, the folder and cutekit's source) imports `cutlass` once and listens on a Unix socket; each job is a fork
of it, so a job still runs alone (the learner's module loaded afresh, a crash or a hang its own) and is killed
alone when its time is up. The server leaves when nothing asked for IDLE seconds, or when its socket is gone.
Its socket, lock and log live in the user's own folder of the temporary folder (cutekit-cutedsl-UID, mode 700);
where that folder is not the user's alone, or the socket's address would be too long, jobs get processes of
their own.

Only where a fork is safe and useful: Linux, with CUTE_DSL_ARCH set (a compile for a named architecture, no GPU
touched; a job that runs on the GPU gets its own process, as CUDA is not inherited through a fork).
CUTEKIT_CUTEDSL_SERVER=off switches it off (each job then starts its own process).

The server is started by `served` (`serve(SOCKET)` in a process of its own), never by hand.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IDLE = float(os.environ.get("CUTEKIT_CUTEDSL_SERVER_IDLE", "120"))
START_SECONDS = 60          # for the server to import CuTeDSL and listen
SWITCH = "CUTEKIT_CUTEDSL_SERVER"


def _send(connection, value):
    data = pickle.dumps(value)
    connection.sendall(struct.pack("!I", len(data)) + data)


def _receive(connection):
    head = _exactly(connection, 4)
    return pickle.loads(_exactly(connection, struct.unpack("!I", head)[0]))


def _exactly(connection, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = connection.recv(size - len(data))
        if not more:
            raise ConnectionError("the CuTeDSL server closed the connection")
        data += more
    return data


# ---- the client ---------------------------------------------------------------------------------------------

def usable(env: dict) -> bool:
    """Whether a job in environment `env` goes through a server."""
    return (sys.platform.startswith("linux") and hasattr(socket, "AF_UNIX") and bool(env.get("CUTE_DSL_ARCH"))
            and os.environ.get(SWITCH, "on") != "off")


def _source_stamp() -> str:
    """cutekit's source as of now (the newest .py file's time and the count): a server started before an edit
    is not asked again."""
    root = Path(__file__).resolve().parents[1]
    newest, count = 0.0, 0
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime)
                count += 1
    return f"{newest}:{count}"


def _address(env: dict) -> Path:
    # what CuTeDSL reads at import (the server always keeps PTX, into a folder of its own) and where modules are
    # found; the rest of the environment (cutekit's grading settings) is each job's own
    setting = sorted((key, value) for key, value in env.items()
                     if (key.startswith("CUTE_DSL_") and key not in ("CUTE_DSL_DUMP_DIR", "CUTE_DSL_KEEP"))
                     or key in ("PYTHONPATH", "CUDA_VISIBLE_DEVICES", "CUTEKIT_REAL_CUTLASS"))
    key = repr((sys.executable, os.getcwd(), setting, _source_stamp()))
    digest = hashlib.sha1(key.encode()).hexdigest()[:16]
    return _folder() / f"{digest}.sock"


def _folder() -> Path:
    """This user's folder for the servers' sockets, locks and logs: the temporary folder's
    cutekit-cutedsl-UID, made with no access for anyone else (nothing there can be planted by another user)."""
    return Path(tempfile.gettempdir()) / f"cutekit-cutedsl-{os.getuid()}"


def _private(folder: Path) -> bool:
    """`folder` made if missing; whether it is a real folder of this user's that no one else can enter."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def _connect(address: Path):
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(address))
        return connection
    except OSError:
        connection.close()
        return None


def _started(address: Path, env: dict):
    """A connection to the server at `address`, started first if none answers (one starter at a time)."""
    import fcntl                 # Unix only, as is the server
    connection = _connect(address)
    if connection is not None:
        return connection
    with open(f"{address}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        connection = _connect(address)
        if connection is not None:
            return connection
        log = open(f"{address}.log", "w")
        server = subprocess.Popen([sys.executable, "-c", "import sys; from cutekit.checks._forkserver import serve; "
                                   "serve(sys.argv[1])", str(address)], env=env,
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and server.poll() is None:
            connection = _connect(address)
            if connection is not None:
                return connection
            time.sleep(0.05)
        if server.poll() is None:
            server.kill()
        return None


def served(job_path: Path, reply_path: Path, env: dict, timeout: float):
    """Run the job at `job_path` in a fork of the server for `env`; its reply is written to `reply_path`.
    Returns (finished, output): finished False when the time ran out (the job was killed), output the tail of what
    the job printed. None when no server could be reached (the caller starts a process of its own)."""
    address = _address(env)
    if len(os.fsencode(address)) > 100 or not _private(address.parent):   # a long TMPDIR: past what a socket's
        return None                                                          # address holds
    try:
        connection = _started(address, env)
    except OSError:
        return None
    if connection is None:
        return None
    output = reply_path.with_name("output.txt")
    with connection:
        try:
            connection.settimeout(START_SECONDS)
            _send(connection, {"job": str(job_path), "reply": str(reply_path), "output": str(output),
                               "env": env, "cwd": os.getcwd()})
            child = _receive(connection)
        except (OSError, ConnectionError, EOFError, pickle.UnpicklingError):
            return None
        connection.settimeout(timeout)
        try:
            _receive(connection)
            finished = True
        except socket.timeout:
            with _ignored():
                os.killpg(child, signal.SIGKILL)
            finished = False
        except (OSError, ConnectionError, EOFError):
            finished = True         # the server went away; the reply file says whether the job answered
    text = output.read_text(errors="replace") if output.exists() else ""
    return finished, text


class _ignored:
    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        return kind is not None and issubclass(kind, OSError)


# ---- the server ---------------------------------------------------------------------------------------------

def _run_child(request, listener, connection):
    """In the fork: the job, alone in its process group, its output to the job's file."""
    listener.close()
    os.setsid()
    _send(connection, os.getpid())
    output = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path[0] = request["cwd"]
    from cutekit.checks import _worker
    status = 0
    try:
        _worker.main(request["job"], request["reply"])
    except BaseException:       # noqa: BLE001 - said in the output; the reply file is then missing
        import traceback
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    with _ignored():
        _send(connection, status)
    os._exit(status)


def serve(address: str):
    # CuTeDSL reads its settings once, at import: the files a compile keeps go to the server's own folder (a
    # job's PTX comes back from the compiled function, not from a file)
    dump = tempfile.mkdtemp(prefix="cutekit-cutedsl-dump-")
    os.environ["CUTE_DSL_DUMP_DIR"] = dump
    os.environ["CUTE_DSL_KEEP"] = "ptx"
    import importlib
    for module in ("cutlass", "cutlass.cute", "cutekit.checks._worker"):    # once, before any fork: the point
        importlib.import_module(module)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))     # leave through `finally`, tidying up
    if os.path.exists(address):
        os.unlink(address)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(16)
    listener.settimeout(1.0)
    identity = os.stat(address).st_ino
    children, last = set(), time.monotonic()
    try:
        while True:
            for pid in list(children):
                with _ignored():
                    if os.waitpid(pid, os.WNOHANG)[0] == pid:
                        children.discard(pid)
            if children:
                last = time.monotonic()
            gone = not os.path.exists(address) or os.stat(address).st_ino != identity
            if gone or time.monotonic() - last > IDLE:
                break
            try:
                connection, _ = listener.accept()
            except socket.timeout:
                continue
            last = time.monotonic()
            with connection:
                connection.settimeout(10)
                try:
                    request = _receive(connection)
                except (OSError, ConnectionError, EOFError, pickle.UnpicklingError):
                    continue
                pid = os.fork()
                if pid == 0:
                    _run_child(request, listener, connection)
                children.add(pid)
    finally:
        listener.close()
        with _ignored():
            if os.stat(address).st_ino == identity:      # not a newer server's
                for path in (address, f"{address}.lock", f"{address}.log"):
                    os.unlink(path)
        import shutil
        shutil.rmtree(dump, ignore_errors=True)


