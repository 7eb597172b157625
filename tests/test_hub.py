"""The course on a real JupyterHub, on loopback: the deploy config (deploy/jupyterhub_config.py) loaded as
an instructor would, with the shared-password log-in (CUTEKIT_HUB_AUTHENTICATOR=shared-password,
CUTEKIT_HUB_PASSWORD) and the spawner the config pairs with it (learner_accounts.py: a home per learner under
CUTEKIT_HUB_HOMES; here every server runs as the user running the test, CUTEKIT_HUB_ACCOUNT, where a workshop
hub makes an account per learner), and no proxy process: a recording proxy notes where each learner's server
listens and the test talks to that server directly.

Three learners log in through the hub's REST API (a token for their user name and the workshop password; a
wrong password is refused), start their servers, and in each one's course kernel: ada answers a chapter 01
exercise right, bob wrong, cy not at all. ada's kernel imports cutekit from the course pulled into her home,
bob's (nothing pulled) from the environment. Each check also sends the learner's progress file to the hub's
progress service (progress_service.py): `python -m cutekit report --hub` with the instructor's token, after
ada's server is stopped as the culler stops it, and `python -m cutekit report --homes` over the hub's home
folders must both show exactly that. A fourth learner, over the GPU server's seat limit, is refused with words
that say so.
"""
from __future__ import annotations

import contextlib
import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
import requests

from cutekit.checks import exercise

websocket = pytest.importorskip("websocket", reason="websocket-client drives the learners' kernels")

ROOT = Path(__file__).resolve().parents[1]
LEARNERS = ("ada", "bob", "cy")
PASSWORD = "the-workshop-password"
ADMIN_PASSWORD = "an-instructors-password-of-32-characters"
EXERCISE = "ch01.layout_from_grid"
REFERENCE_POINTS = sum(criterion.points for criterion in exercise(EXERCISE).criteria if criterion.tier == "reference")

RIGHT = """
from cutekit import cute
def layout_for(M, N, B):
    return cute.make_layout((M, N, B), stride=(N, 1, M * N))
"""
WRONG = """
from cutekit import cute
def layout_for(M, N, B):
    return cute.make_layout((M, N, B), stride=(1, M, M * N))     # column-major: the mistake chapter 01 warns about
"""
CHECK = """
import os
from cutekit.checks import check
from cutekit.checks.progress import progress_path
result = check("%s", layout_for)
import cutekit
print("RESULT", result.earned, result.possible, os.environ.get("CUDA_VISIBLE_DEVICES"), progress_path(), cutekit.__file__)
from cutekit.backend import hub_note
print("DOCTOR", hub_note())                           # the line `python -m cutekit doctor` adds on a hub
""" % EXERCISE

HUB_CONFIG = '''
import os, json
from jupyterhub.proxy import Proxy

c = get_config()
load_subconfig({deploy_config!r})            # the instructor's config, as shipped

class RecordingProxy(Proxy):
    """No proxy process: remember the routes (the test reads where each server listens)."""
    should_start = False
    routes = {{}}

    def _save(self):
        with open({routes_file!r}, "w") as out:
            json.dump(self.routes, out)

    async def add_route(self, routespec, target, data):
        self.routes[routespec] = {{"routespec": routespec, "target": target, "data": data}}
        self._save()

    async def delete_route(self, routespec):
        self.routes.pop(routespec, None)
        self._save()

    async def get_all_routes(self):
        return dict(self.routes)

c.JupyterHub.proxy_class = RecordingProxy
c.JupyterHub.bind_url = "http://127.0.0.1:{public_port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.Spawner.environment = {{"CUTEKIT_TIERS": "reference"}}   # the CPU reference tier: seconds, not minutes
if os.geteuid() == 0:
    c.Spawner.args = list(c.Spawner.args) + ["--allow-root"]
'''


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Hub:
    """A JupyterHub process and the calls the test makes to its REST API."""

    def __init__(self, base: Path, gpus: str, per_gpu: int, learners):
        self.base, self.homes = base, base / "homes"
        self.homes.mkdir()
        self.port, self.progress_port = free_port(), free_port()
        self.progress = f"http://127.0.0.1:{self.progress_port}/services/cutekit-progress/"
        self.api = f"http://127.0.0.1:{self.port}/hub/api"
        self.routes_file = base / "routes.json"
        config = base / "test_hub_config.py"
        config.write_text(HUB_CONFIG.format(
            deploy_config=str(ROOT / "deploy" / "jupyterhub_config.py"), routes_file=str(self.routes_file),
            public_port=free_port(), hub_port=self.port))
        (base / "learners.txt").write_text("\n".join(learners) + "\n")
        env = {key: value for key, value in os.environ.items() if not key.startswith(("CUTEKIT_", "JUPYTER"))}
        # the learners' servers are started through the REST API, not the pull link: the course repository is
        # one the hub does not look into (tests/test_workshop.py pulls the student branch as the hub would)
        env.update(CUTEKIT_HUB_STATE=str(base), CUTEKIT_COURSE_PYTHON=sys.executable,
                   CUTEKIT_COURSE_REPO="https://example.invalid/ORG/cute-by-hand",
                   CUTEKIT_GPUS=gpus, CUTEKIT_LEARNERS_PER_GPU=str(per_gpu),
                   CUTEKIT_HUB_AUTHENTICATOR="shared-password", CUTEKIT_HUB_PASSWORD=PASSWORD,
                   CUTEKIT_HUB_LEARNERS=str(base / "learners.txt"), CUTEKIT_HUB_HOMES=str(self.homes),
                   CUTEKIT_HUB_ACCOUNT=getpass.getuser(), CUTEKIT_HUB_PROGRESS_PORT=str(self.progress_port),
                   CUTEKIT_HUB_ADMINS="teacher", CUTEKIT_HUB_ADMIN_PASSWORD=ADMIN_PASSWORD)
        self.log = open(base / "hub.log", "w")
        self.process = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=base,
                                        env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.wait_for(lambda: requests.get(f"{self.api}/", timeout=2).ok, "the hub to answer", 60)

    def log_text(self) -> str:
        self.log.flush()
        return (self.base / "hub.log").read_text()[-4000:]

    def wait_for(self, ready, what: str, seconds: float):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the hub exited while waiting for {what}:\n{self.log_text()}")
            try:
                value = ready()
                if value:
                    return value
            except (requests.ConnectionError, requests.Timeout):
                pass
            time.sleep(0.3)
        raise AssertionError(f"timed out after {seconds} s waiting for {what}:\n{self.log_text()}")

    def log_in(self, name: str, password: str = "") -> str:
        """A learner's API token, asked for with their user name and password (the hub's REST API)."""
        answer = requests.post(f"{self.api}/users/{name}/tokens", timeout=30,
                               json={"auth": {"username": name, "password": password or PASSWORD}, "note": "test"})
        assert answer.status_code == 201, answer.text
        return answer.json()["token"]

    def start_server(self, name: str, token: str) -> requests.Response:
        return requests.post(f"{self.api}/users/{name}/server", headers={"Authorization": f"token {token}"},
                             timeout=60)

    def server_url(self, name: str, token: str) -> str:
        """Where the learner's ready server listens (from the recorded route)."""
        def ready():
            model = requests.get(f"{self.api}/users/{name}", headers={"Authorization": f"token {token}"},
                                 timeout=10).json()
            return model.get("servers", {}).get("", {}).get("ready")
        self.wait_for(ready, f"{name}'s server", 120)
        routes = json.loads(self.routes_file.read_text())
        route = next(route for spec, route in routes.items() if spec.endswith(f"/user/{name}/"))
        return f"{route['target']}/user/{name}"

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)       # the hub stops its learners' servers on the way out
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.log.close()
        # the learners' servers and the hub's services run in sessions of their own, and some outlive a hub
        # stopped this way: each carries this hub's API address in its environment
        for pid in self.left_behind():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def left_behind(self) -> list:
        mark = f"JUPYTERHUB_API_URL={self.api}".encode()
        found = []
        for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
            try:
                if entry.isdigit() and mark in open(f"/proc/{entry}/environ", "rb").read().split(b"\0"):
                    found.append(int(entry))
            except OSError:
                continue
        return found


def run_in_kernel(server: str, token: str, kernel: str, code: str, seconds: float = 120) -> str:
    """Run `code` in a new `kernel` of the learner's server (its REST API and kernel websocket); its output."""
    headers = {"Authorization": f"token {token}"}
    made = requests.post(f"{server}/api/kernels", json={"name": kernel}, headers=headers, timeout=60)
    assert made.status_code == 201, made.text
    kernel_id = made.json()["id"]
    channel = websocket.create_connection(f"{server.replace('http', 'ws', 1)}/api/kernels/{kernel_id}/channels",
                                          header=[f"Authorization: token {token}"], timeout=seconds)
    msg_id, output, finished = uuid.uuid4().hex, [], False
    channel.send(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "test", "session": uuid.uuid4().hex,
                   "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True}}))
    deadline = time.monotonic() + seconds
    while not finished and time.monotonic() < deadline:
        message = json.loads(channel.recv())
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "stream":
            output.append(content["text"])
        elif kind == "error":
            output.append("\n".join(content["traceback"]))
        finished = kind == "status" and content["execution_state"] == "idle"
    channel.close()
    requests.delete(f"{server}/api/kernels/{kernel_id}", headers=headers, timeout=30)
    assert finished, f"the kernel did not finish within {seconds} s: {''.join(output)}"
    return "".join(output)


def result_line(output: str) -> list:
    lines = [line.split() for line in output.splitlines() if line.startswith("RESULT ")]
    assert lines, f"the check printed no result:\n{output}"
    return lines[-1][1:]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_workshop_on_a_real_hub_reports_each_learner_as_they_left_it(tmp_path):
    hub = Hub(tmp_path, gpus="0", per_gpu=3, learners=LEARNERS + ("dan",))
    try:
        wrong = requests.post(f"{hub.api}/users/ada/tokens", timeout=30,
                              json={"auth": {"username": "ada", "password": "not-the-password"}})
        assert wrong.status_code == 403, wrong.text
        # ada's course was pulled already (as the landing page's pull does): her kernels import its cutekit
        pulled = hub.homes / "ada" / "cute-by-hand"
        shutil.copytree(ROOT / "cutekit", pulled / "cutekit", ignore=shutil.ignore_patterns("__pycache__"))
        tokens = {name: hub.log_in(name) for name in LEARNERS}
        for name in LEARNERS:
            assert hub.start_server(name, tokens[name]).status_code in (201, 202)
        servers = {name: hub.server_url(name, tokens[name]) for name in LEARNERS}

        specs = requests.get(f"{servers['ada']}/api/kernelspecs", timeout=30,
                             headers={"Authorization": f"token {tokens['ada']}"}).json()
        assert "cute-by-hand" in specs["kernelspecs"], "the learners' servers lack the course kernel"

        ada_output = run_in_kernel(servers["ada"], tokens["ada"], "cute-by-hand", RIGHT + CHECK)
        ada = result_line(ada_output)
        assert ("DOCTOR the hub gave you GPU 0 of 1 (shared by up to 3 learners) (CUDA_VISIBLE_DEVICES=0)"
                in ada_output.splitlines()), ada_output
        bob = result_line(run_in_kernel(servers["bob"], tokens["bob"], "cute-by-hand", WRONG + CHECK))
        earned = {"ada": int(ada[0]), "bob": int(bob[0])}
        assert earned["ada"] == REFERENCE_POINTS > earned["bob"]     # right: every point of the tier it ran on
        assert ada[2] == bob[2] == "0", "every learner shares the one GPU the server has (3 per GPU)"
        assert ada[3] == str(hub.homes / "ada" / ".cutekit" / "progress.jsonl")
        assert ada[4] == str(pulled / "cutekit" / "__init__.py")          # the pulled course first
        assert bob[4] == str(ROOT / "cutekit" / "__init__.py")            # nothing pulled: the environment's

        # A fourth learner on a one-GPU server with 3 learners per GPU: refused, and told why.
        dan = hub.log_in("dan")
        hub.start_server("dan", dan)
        refusal = hub.wait_for(lambda: "seats, all taken" in hub.log_text() and hub.log_text(),
                               "the hub to refuse a fourth learner", 30)
        assert "1 GPU x 3 learners per GPU = 3 seats, all taken, so 'dan' cannot start" in refusal

        # The hub's own copies (progress_service.py): sent by each check, read with an admin's token. A learner
        # may not write another's; ada's stays readable after her server is stopped, as the culler stops it.
        forged = requests.post(f"{hub.progress}learners/ada", data=b"{}", timeout=30,
                               headers={"Authorization": f"token {tokens['bob']}"})
        assert forged.status_code == 403, forged.text
        teacher = hub.log_in("teacher", ADMIN_PASSWORD)
        refused = requests.get(f"{hub.progress}learners", headers={"Authorization": f"token {tokens['ada']}"},
                               timeout=30)
        assert refused.status_code == 403 and "admin" in refused.text
        stopped = requests.delete(f"{hub.api}/users/ada/server", headers={"Authorization": f"token {teacher}"},
                                  timeout=60)
        assert stopped.status_code in (202, 204), stopped.text
        hub.wait_for(lambda: not requests.get(f"{hub.api}/users/ada", headers={"Authorization": f"token {teacher}"},
                                              timeout=10).json().get("servers"), "ada's server to stop", 60)
        env = {key: value for key, value in os.environ.items() if not key.startswith("CUTEKIT_")}
        from_hub = subprocess.run([sys.executable, "-m", "cutekit", "report", "--hub", hub.progress, "--csv",
                                   str(tmp_path / "hub.csv")], capture_output=True, text=True, timeout=120,
                                  env={**env, "CUTEKIT_HUB_TOKEN": teacher})
        assert from_hub.returncode == 0, from_hub.stdout + from_hub.stderr
        collected = {row[0]: row for row in (line.split(",") for line in (tmp_path / "hub.csv").read_text().splitlines())}
        column = collected["learner"].index(EXERCISE)
        assert collected["ada"][column] == str(earned["ada"]) and collected["bob"][column] == str(earned["bob"])
        assert collected["cy"][2] == collected["dan"][2] == "not attempted" and "teacher" not in collected

        report = subprocess.run([sys.executable, "-m", "cutekit", "report", "--homes", str(hub.homes),
                                 "--csv", str(tmp_path / "room.csv")], capture_output=True, text=True, timeout=120)
        rows = {line.split()[0]: line for line in report.stdout.splitlines()[2:] if line.strip()}
        assert "ada" in rows and "bob" in rows and "cy" in rows, report.stdout
        table = [line.split(",") for line in (tmp_path / "room.csv").read_text().splitlines()]
        column = table[0].index(EXERCISE)
        by_learner = {row[0]: row for row in table[1:]}
        assert by_learner["ada"][column] == str(earned["ada"]) and by_learner["ada"][2] == ""
        assert by_learner["bob"][column] == str(earned["bob"]) and by_learner["bob"][2] == ""
        assert by_learner["cy"][column] == "" and by_learner["cy"][2] == "not attempted"
        assert rows["cy"].rstrip().endswith("not attempted")
        assert report.returncode == 0, report.stdout + report.stderr
    finally:
        hub.stop()
    assert hub.process.returncode is not None
    assert not hub.left_behind()
