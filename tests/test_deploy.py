"""What deploy/ promises an instructor, piece by piece: GPUs handed out round-robin within a per-GPU limit
(and a full room refused in words that say so), the nbgitpuller link `make pull-link` prints (of the student
branch; a branch holding the answers refused), the course-kernel check a hub runs before spawning, Zero to
JupyterHub values with the parts a workshop needs, and `cutekit report --homes` over a hub's home folders
(tried, not attempted, unreadable)."""
from __future__ import annotations

import copy
import importlib.util
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from cutekit.__main__ import main
from cutekit.checks.progress import append_line, class_report

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"deploy_{name}", DEPLOY / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gpu_assign, pull_link, course_kernel = load("gpu_assign"), load("pull_link"), load("course_kernel")
sys.path.insert(0, str(ROOT / "scripts"))
import student_branch  # noqa: E402


@pytest.fixture(scope="module")
def course_repo(tmp_path_factory) -> Path:
    """A small course repository: main holds solutions/ and INSTRUCTOR.md, the branch `student` (made as
    `make student-branch` makes it) only the course."""
    repo = tmp_path_factory.mktemp("repo")
    for name, text in {"solutions/01_layouts.py": "answer\n", "INSTRUCTOR.md": "guide\n",
                       "course/00_start_here.ipynb": "{}\n"}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q", "-b", "main"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "course"], check=True)
    bundle = tmp_path_factory.mktemp("bundle")
    (bundle / "course").mkdir()
    (bundle / "course" / "00_start_here.ipynb").write_text("{}\n")
    student_branch.commit_folder(repo, bundle, "student", "student bundle")
    return repo


# ---- GPUs ------------------------------------------------------------------------------------------------

def seat_room(names, gpus, per_gpu):
    holders = {}
    for name in names:
        holders[name] = gpu_assign.pick_gpu(holders, name, gpus, per_gpu)
    return holders


def test_learners_get_the_gpus_round_robin():
    room = seat_room(["a", "b", "c", "d"], ["0", "1", "2", "3"], per_gpu=1)
    assert room == {"a": "0", "b": "1", "c": "2", "d": "3"}


def test_several_learners_share_a_gpu_up_to_the_limit_spread_evenly():
    room = seat_room(["a", "b", "c", "d", "e"], ["0", "1"], per_gpu=3)
    assert room == {"a": "0", "b": "1", "c": "0", "d": "1", "e": "0"}


def test_a_learner_who_comes_back_keeps_their_gpu_and_a_freed_seat_is_reused():
    holders = {"a": "0", "b": "1"}
    assert gpu_assign.pick_gpu(holders, "b", ["0", "1"], per_gpu=1) == "1"
    del holders["a"]                                              # a's server stopped (or was culled)
    assert gpu_assign.pick_gpu(holders, "c", ["0", "1"], per_gpu=1) == "0"


def test_a_room_larger_than_gpus_times_limit_is_refused_with_the_numbers():
    holders = seat_room(["a", "b", "c", "d"], ["0", "1"], per_gpu=2)
    with pytest.raises(gpu_assign.RoomFull) as refused:
        gpu_assign.pick_gpu(holders, "e", ["0", "1"], per_gpu=2)
    words = str(refused.value)
    assert "2 GPUs x 2 learners per GPU = 4 seats, all taken" in words and "'e'" in words
    assert "CUTEKIT_LEARNERS_PER_GPU" in words


@pytest.mark.parametrize("per_gpu", [0, -1])
def test_a_limit_below_one_learner_per_gpu_is_an_error(per_gpu):
    with pytest.raises(ValueError, match="1 or more"):
        gpu_assign.pick_gpu({}, "a", ["0"], per_gpu)


def test_the_server_gpus_and_limit_come_from_the_environment():
    assert gpu_assign.gpu_ids({"CUTEKIT_GPUS": "0, 2,3"}) == ["0", "2", "3"]
    assert gpu_assign.gpu_ids({"CUTEKIT_GPUS": ""}) == []                     # a CPU-only server
    assert gpu_assign.learners_per_gpu({}) == 1
    assert gpu_assign.learners_per_gpu({"CUTEKIT_LEARNERS_PER_GPU": "4"}) == 4
    with pytest.raises(ValueError, match="whole number"):
        gpu_assign.learners_per_gpu({"CUTEKIT_LEARNERS_PER_GPU": "two"})


def test_the_doctor_line_says_whose_gpu_it_is():
    assert gpu_assign.gpu_note("1", ["0", "1"], 1) == "the hub gave you GPU 1 of 2 (yours alone)"
    assert "shared by up to 3 learners" in gpu_assign.gpu_note("0", ["0"], 3)


def test_doctor_names_the_gpu_the_hub_gave_and_says_nothing_off_a_hub(monkeypatch):
    from cutekit import backend
    monkeypatch.setenv("CUTEKIT_HUB_GPU", "the hub gave you GPU 1 of 2 (yours alone)")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    tiers = (backend.Tier("reference", True, "ok"), backend.Tier("cutedsl-cpu", True, "ok"),
             backend.Tier("gpu", True, "A100"))
    assert "JupyterHub: the hub gave you GPU 1 of 2 (yours alone) (CUDA_VISIBLE_DEVICES=1)" in str(
        backend.DoctorReport(tiers))
    monkeypatch.delenv("CUTEKIT_HUB_GPU")
    assert "JupyterHub" not in str(backend.DoctorReport(tiers))


# ---- nbgitpuller link --------------------------------------------------------------------------------------

def test_the_pull_link_clones_the_course_and_opens_its_first_notebook():
    link = pull_link.pull_link("https://hub.example.org/", "https://github.com/org/cute-by-hand.git", "workshop")
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://hub.example.org/hub/user-redirect/git-pull"
    assert parse_qs(parts.query) == {"repo": ["https://github.com/org/cute-by-hand.git"], "branch": ["workshop"],
                                     "targetpath": ["cute-by-hand"],
                                     "urlpath": ["lab/tree/cute-by-hand/course/00_start_here.ipynb"]}


@pytest.mark.parametrize("hub,repo,words", [
    ("hub.example.org", "https://github.com/org/cute-by-hand", "HUB must be the hub's address"),
    ("https://hub.example.org", "", "REPO must name"),
])
def test_a_bad_pull_link_request_says_what_is_wrong(hub, repo, words):
    with pytest.raises(ValueError, match=words):
        pull_link.pull_link(hub, repo)


def test_make_pull_link_prints_the_link_of_the_student_branch_and_needs_a_hub():
    made = subprocess.run(["make", "-s", "pull-link", "HUB=https://hub.example.org",
                           "REPO=https://github.com/org/cute-by-hand"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == pull_link.pull_link("https://hub.example.org", "https://github.com/org/cute-by-hand")
    assert parse_qs(urlsplit(made.stdout.strip()).query)["branch"] == ["student"]
    missing = subprocess.run(["make", "-s", "pull-link", "HUB=", "REPO=https://github.com/org/cute-by-hand"],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "HUB=" in missing.stderr


def test_a_pull_link_to_a_branch_that_holds_the_answers_is_refused(course_repo, capsys):
    args = ["--hub", "https://hub.example.org", "--repo", "https://github.com/org/cute-by-hand",
            "--checkout", str(course_repo)]
    assert pull_link.main(args + ["--branch", "main"]) == 2
    refused = capsys.readouterr()
    assert refused.out == "" and "holds solutions and INSTRUCTOR.md" in refused.err and "make student-branch" in refused.err
    assert pull_link.main(args) == 0
    given = capsys.readouterr()
    assert "branch=student" in given.out and given.err == ""
    assert pull_link.main(args + ["--branch", "workshop"]) == 0         # not published here: said, link given
    noted = capsys.readouterr()
    assert "no branch 'workshop'" in noted.err and "git push origin workshop" in noted.err and noted.out


def test_only_a_repository_on_this_machine_is_looked_at(course_repo):
    assert pull_link.local_repository(course_repo.as_uri()) == course_repo
    assert pull_link.local_repository(str(course_repo)) == course_repo
    for remote in ("https://github.com/org/cute-by-hand", "git@github.com:org/cute-by-hand.git"):
        assert pull_link.local_repository(remote) is None and pull_link.branch_problem(remote, "main") is None


# ---- the course kernel -------------------------------------------------------------------------------------

def test_a_hub_whose_servers_lack_the_course_kernel_is_told_how_to_register_it():
    problem = course_kernel.course_kernel_problem({"python3"}, "/opt/env/bin/python")
    assert "lack the course kernel 'cute-by-hand'" in problem and "only python3" in problem
    assert "/opt/env/bin/python -m ipykernel install --sys-prefix --name cute-by-hand" in problem
    assert course_kernel.course_kernel_problem({"python3", "cute-by-hand"}, "/opt/env/bin/python") is None


def test_the_kernel_list_is_read_from_the_course_python_and_a_wrong_path_is_named(tmp_path):
    assert "python3" in course_kernel.kernel_names(sys.executable)
    with pytest.raises(RuntimeError, match="CUTEKIT_COURSE_PYTHON"):
        course_kernel.kernel_names(str(tmp_path / "no-such-python"))


def hub_config(monkeypatch, tmp_path, **environment):
    """deploy/jupyterhub_config.py loaded as JupyterHub loads it, with `environment` set; (config, namespace)."""
    from traitlets.config import Config
    monkeypatch.setenv("CUTEKIT_HUB_STATE", str(tmp_path))
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    config = Config()
    namespace = {"get_config": lambda: config, "__file__": str(DEPLOY / "jupyterhub_config.py")}
    exec(compile((DEPLOY / "jupyterhub_config.py").read_text(), "jupyterhub_config.py", "exec"), namespace)
    return config, namespace


def test_the_hub_config_loads_and_wires_the_hooks_culler_and_spawner(monkeypatch, tmp_path, course_repo):
    config, namespace = hub_config(monkeypatch, tmp_path, CUTEKIT_GPUS="0,1", CUTEKIT_LEARNERS_PER_GPU="2",
                                   CUTEKIT_COURSE_ROOT=str(course_repo))
    assert config.JupyterHub.authenticator_class == "pam"
    assert config.JupyterHub.spawner_class == "localprocess"
    assert config.Spawner.cmd[0].endswith("jupyterhub-singleuser")
    assert any("jupyterhub_idle_culler" in " ".join(service["command"]) for service in config.JupyterHub.services)
    assert namespace["GPUS"] == ["0", "1"] and namespace["PER_GPU"] == 2
    # every learner's first page pulls the student branch, through a file:// URL (git then clones that branch
    # alone; a plain path would copy main, answers included, into each home's .git)
    assert config.Spawner.default_url.startswith("/git-pull?")
    pull = parse_qs(urlsplit(config.Spawner.default_url).query)
    assert pull["repo"] == [course_repo.as_uri()] and pull["branch"] == ["student"]
    assert config.Spawner.args == [SAVE_HOOK]


SAVE_HOOK = "--ContentsManager.pre_save_hook=cutekit.notebook_files.pre_save"
ACCOUNTS = "learner_accounts.LearnerAccountSpawner"


@pytest.mark.parametrize("authenticator, spawner", [
    ("pam", "localprocess"),                                   # the names are this server's accounts
    ("shared-password", ACCOUNTS),                             # names of its own: an account made per learner
    ("dummy", ACCOUNTS),
    ("nativeauthenticator.NativeAuthenticator", ACCOUNTS),
    ("oauthenticator.GitHubOAuthenticator", ACCOUNTS),
])
def test_every_documented_authenticator_gets_a_spawner_that_runs_its_names(monkeypatch, tmp_path, course_repo,
                                                                         authenticator, spawner):
    config, _ = hub_config(monkeypatch, tmp_path, CUTEKIT_COURSE_ROOT=str(course_repo),
                           CUTEKIT_HUB_AUTHENTICATOR=authenticator, CUTEKIT_HUB_PASSWORD="eight-chars")
    assert config.JupyterHub.authenticator_class == authenticator and config.JupyterHub.spawner_class == spawner
    documented = (DEPLOY / "README.md").read_text()
    assert f"`{authenticator}`" in documented or authenticator.split(".")[-1] in documented


def test_the_documented_pairs_are_the_ones_the_config_makes():
    table = (DEPLOY / "README.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| `CUTEKIT_HUB_SPAWNER`"))
    assert "PAM" in row and "`accounts`" in row and "jupyter-NAME" in row


def test_a_log_in_whose_names_are_not_accounts_is_refused_the_local_process_spawner(monkeypatch, tmp_path,
                                                                                   course_repo):
    """The rehearsal's failure (getpwnam(): name not found: 'learner01' at the first start) is said at the
    hub's start instead, with what to do."""
    with pytest.raises(SystemExit, match="not accounts of this server.*leave CUTEKIT_HUB_SPAWNER unset"):
        hub_config(monkeypatch, tmp_path, CUTEKIT_COURSE_ROOT=str(course_repo), CUTEKIT_HUB_PASSWORD="eight-chars",
                   CUTEKIT_HUB_AUTHENTICATOR="shared-password", CUTEKIT_HUB_SPAWNER="localprocess")


@pytest.mark.parametrize("password, words", [(None, "needs the workshop password in CUTEKIT_HUB_PASSWORD"),
                                             ("short", "8 characters or more, not 5")])
def test_the_shared_password_comes_from_a_variable_and_is_long_enough(monkeypatch, tmp_path, course_repo,
                                                                       password, words):
    monkeypatch.delenv("CUTEKIT_HUB_PASSWORD", raising=False)
    extra = {"CUTEKIT_HUB_PASSWORD": password} if password else {}
    with pytest.raises(SystemExit, match=words):
        hub_config(monkeypatch, tmp_path, CUTEKIT_COURSE_ROOT=str(course_repo),
                   CUTEKIT_HUB_AUTHENTICATOR="shared-password", **extra)
    config, _ = hub_config(monkeypatch, tmp_path, CUTEKIT_COURSE_ROOT=str(course_repo),
                           CUTEKIT_HUB_AUTHENTICATOR="shared-password", CUTEKIT_HUB_PASSWORD="eight-chars")
    assert config.SharedPasswordAuthenticator.user_password == "eight-chars"


learner_accounts = load("learner_accounts")


def test_a_learners_account_and_home_are_named_safely(tmp_path):
    assert learner_accounts.account_name("jupyter-", "learner01") == "jupyter-learner01"
    assert learner_accounts.account_name("jupyter-", "root") == "jupyter-root"          # never an existing account
    long = learner_accounts.account_name("jupyter-", "a" * 40)
    assert long.startswith("jupyter-u-") and len(long) <= 32
    assert learner_accounts.home_folder("/home/learners", "ada") == "/home/learners/ada"
    for bad in ("..", "a/b", ".hidden"):
        with pytest.raises(ValueError, match="cannot name a home folder"):
            learner_accounts.home_folder("/home/learners", bad)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("useradd"), reason="adding an account needs root")
def test_the_hub_makes_a_learners_account_with_a_private_home(tmp_path):
    """What the spawner does at a learner's first start (as root, as the hub runs): useradd, home mode 700."""
    import pwd
    account = f"ck{os.getpid() % 100000}-test"
    home = str(tmp_path / "learners" / "ada")
    try:
        entry = learner_accounts.ensure_account(account, home, "ada")
        assert pwd.getpwnam(account).pw_dir == home and entry.pw_uid != 0
        assert os.stat(home).st_uid == entry.pw_uid and os.stat(home).st_mode & 0o777 == 0o700
        assert learner_accounts.ensure_account(account, home, "ada").pw_uid == entry.pw_uid     # made once
    finally:
        subprocess.run(["userdel", account], capture_output=True)
    with pytest.raises(RuntimeError, match="does not exist on this server"):
        learner_accounts.ensure_account(account, home, "ada", create=False)


def test_the_save_hook_drops_the_kernels_language_info_and_nothing_else():
    from traitlets.utils.importstring import import_item
    hook = import_item(SAVE_HOOK.partition("=")[2])
    notebook = {"type": "notebook", "content": {"metadata": {"kernelspec": {"name": "cute-by-hand"},
                                                             "language_info": {"version": "3.11.2"}}, "cells": []}}
    hook(model=notebook, path="course/01_layouts.ipynb", contents_manager=None)
    assert notebook["content"] == {"metadata": {"kernelspec": {"name": "cute-by-hand"}}, "cells": []}
    text = {"type": "file", "content": "language_info", "format": "text"}
    hook(model=dict(text), path="notes.txt")
    assert text == {"type": "file", "content": "language_info", "format": "text"}


@pytest.mark.parametrize("environment, words", [
    ({"CUTEKIT_COURSE_BRANCH": "main"}, "branch 'main' of .* holds solutions and INSTRUCTOR.md"),
    ({"CUTEKIT_COURSE_BRANCH": "workshop"}, "no branch 'workshop': publish the student bundle .*make student-branch"),
])
def test_a_hub_that_would_serve_the_answers_or_no_course_does_not_start(monkeypatch, tmp_path, course_repo,
                                                                       environment, words):
    with pytest.raises(SystemExit, match=words):
        hub_config(monkeypatch, tmp_path, CUTEKIT_COURSE_ROOT=str(course_repo), **environment)


def test_the_hub_warns_when_learners_kernels_import_cutekit_beside_the_answers(tmp_path):
    warning = course_kernel.answers_beside(sys.executable)        # this checkout: solutions/ beside cutekit/
    assert warning and "holds solutions/" in warning and "--branch student" in warning
    elsewhere = tmp_path / "student" / "cutekit"
    elsewhere.mkdir(parents=True)
    (elsewhere / "__init__.py").write_text("")
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={elsewhere.parent} exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    assert course_kernel.answers_beside(str(python)) is None


# ---- Zero to JupyterHub values -----------------------------------------------------------------------------

VALUES = yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())
CHART = ROOT / "tests" / "fixtures" / "z2jh-4.2.0"          # chart 4.2.0's schema and defaults (its README)
CHART_HUB_JUPYTERHUB = "5.3.0"                              # its Chart.yaml appVersion
SAMPLE = {"HUB_HOST": "hub.example.org", "HUB_EMAIL": "teacher@example.org", "WORKSHOP_PASSWORD": "eight-chars",
          "INSTRUCTOR_PASSWORD": "0123456789abcdef0123456789abcdef"}


def helm_command() -> list[str]:
    """The `helm upgrade --install` command deploy/README.md gives, continuation lines joined, the shell
    variables it uses replaced by sample values."""
    text = (DEPLOY / "README.md").read_text()
    start = text.index("helm upgrade --install cute")
    command = text[start:text.index("```", start)].replace("\\\n", " ")
    for name, value in SAMPLE.items():
        command = command.replace(f"${name}", value)
    return shlex.split(command)


def set_value(values: dict, path: str, value):
    """Helm's `--set a.b[0]=v`: maps and list items made as needed."""
    keys = [int(part) if part.isdigit() else part for part in re.split(r"\.|\[(\d+)\]\.?", path) if part]
    here = values
    for key, following in zip(keys, keys[1:]):
        if isinstance(key, int):
            while len(here) <= key:
                here.append({} if isinstance(following, str) else [])
            here = here[key]
        else:
            if not isinstance(here.get(key), (dict, list)) or (isinstance(following, int) != isinstance(here[key], list)):
                here[key] = [] if isinstance(following, int) else {}
            here = here[key]
    last = keys[-1]
    if isinstance(last, int):
        while len(here) <= last:
            here.append(None)
    here[last] = value


def installed_values() -> dict:
    """values.yaml with the documented command's --set-string/--set-file flags applied, as Helm applies them."""
    values, command = copy.deepcopy(VALUES), helm_command()
    assert command[:3] == ["helm", "upgrade", "--install"] and "deploy/helm/values.yaml" in command
    for flag, argument in zip(command, command[1:]):
        if flag in ("--set-string", "--set-file"):
            path, _, value = argument.partition("=")
            set_value(values, path, (ROOT / value).read_text() if flag == "--set-file" else value)
        assert flag != "--set", "a plain --set would turn a password of digits into a number: use --set-string"
    return values


def merge(defaults: dict, ours: dict) -> dict:
    """Helm's merge: maps are updated key by key, everything else replaced."""
    out = copy.deepcopy(defaults)
    for key, value in ours.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def schema_errors(values: dict) -> list[str]:
    import jsonschema
    schema = yaml.safe_load((CHART / "values.schema.yaml").read_text())
    merged = merge(yaml.safe_load((CHART / "chart-values.yaml").read_text()), values)
    return [f"{'.'.join(map(str, error.path))}: {error.message}"
            for error in jsonschema.Draft7Validator(schema).iter_errors(merged)]


def test_the_installed_values_pass_the_charts_own_schema():
    """What `helm lint` checks of values, without helm: the chart's defaults, our values and the install
    command's flags merged, validated against chart 4.2.0's values.schema.yaml."""
    assert schema_errors(installed_values()) == []


def test_the_schema_check_finds_a_misspelt_key_and_a_wrong_type():
    wrong = copy.deepcopy(VALUES)
    wrong["singleuser"]["storage"]["capasity"] = "5Gi"
    wrong["cull"]["timeout"] = "2.5 hours"
    errors = schema_errors(wrong)
    assert any("capasity" in error for error in errors) and any(error.startswith("cull.timeout") for error in errors)


def test_the_install_command_sets_the_host_the_contact_and_both_passwords_from_variables():
    installed = installed_values()
    https = installed["proxy"]["https"]
    assert https["enabled"] is True and https["type"] == "letsencrypt"
    assert https["hosts"] == [SAMPLE["HUB_HOST"]] and https["letsencrypt"]["contactEmail"] == SAMPLE["HUB_EMAIL"]
    passwords = installed["hub"]["config"]["SharedPasswordAuthenticator"]
    assert passwords == {"user_password": SAMPLE["WORKSHOP_PASSWORD"], "admin_password": SAMPLE["INSTRUCTOR_PASSWORD"]}
    assert VALUES["hub"]["config"]["SharedPasswordAuthenticator"] == {}, "no password is written in the values"


def test_only_the_named_seats_log_in_and_no_deprecated_admin_access():
    config = VALUES["hub"]["config"]
    assert config["JupyterHub"]["authenticator_class"] == "shared-password"
    allowed = config["Authenticator"]["allowed_users"]
    assert len(allowed) == 30 == len(set(allowed)) and config["Authenticator"].get("allow_all") is not True
    assert config["Authenticator"]["admin_users"] == ["instructor"]
    assert "admin_access" not in yaml.safe_dump(VALUES)


def test_two_profiles_cpu_for_sm80_and_gpu_with_one_gpu_and_no_forced_arch():
    single = VALUES["singleuser"]
    cpu, gpu = single["profileList"]
    assert cpu["default"] is True and cpu["kubespawner_override"]["environment"] == {"CUTE_DSL_ARCH": "sm_80"}
    assert "image" not in cpu["kubespawner_override"]              # singleuser.image: the CPU build of torch
    override = gpu["kubespawner_override"]
    assert override["image"] == f"{single['image']['name']}:{single['image']['tag']}-gpu"   # what `make image` pushes
    assert override["extra_resource_limits"] == override["extra_resource_guarantees"] == {"nvidia.com/gpu": "1"}
    assert override["node_selector"] == {"nvidia.com/gpu.present": "true"}
    assert "CUTE_DSL_ARCH" not in yaml.safe_dump(override) and "CUTE_DSL_ARCH" not in single["extraEnv"]
    # a profile's list replaces the chart's: the user-pod tolerations stay, the GPU taint is added
    chart = yaml.safe_load((CHART / "chart-values.yaml").read_text())
    for toleration in chart["scheduling"]["userPods"]["tolerations"]:
        assert toleration in override["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in override["tolerations"]
    for absent in ("extraResource", "nodeSelector", "extraTolerations"):     # not forced on the CPU profile
        assert absent not in single
    assert single["memory"]["limit"] and single["cpu"]["limit"]


def test_make_image_builds_the_cpu_image_and_the_gpu_image_the_profiles_name():
    made = subprocess.run(["make", "-n", "image", "IMAGE=reg.example.org/cute-by-hand:2026-06",
                           "REPO=https://github.com/ORG/cute-by-hand"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60).stdout
    builds = [line for line in made.splitlines() if line.startswith("jupyter-repo2docker")]
    assert len(builds) == 2 and all("--ref student" in line for line in builds)
    assert "--image-name reg.example.org/cute-by-hand:2026-06 " in builds[0]
    assert "--image-name reg.example.org/cute-by-hand:2026-06-gpu" in builds[1] and "--appendix" in made
    assert 'pip install --no-cache-dir --index-url https://pypi.org/simple "torch==2.13.0"' in made
    assert "docker push reg.example.org/cute-by-hand:2026-06-gpu" in made


def test_the_images_jupyterhub_is_the_major_version_of_the_charts_hub():
    from packaging.requirements import Requirement
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    hub = next(Requirement(line.split("#")[0]) for line in pip if line.startswith("jupyterhub"))
    assert hub.specifier.contains(CHART_HUB_JUPYTERHUB) and not hub.specifier.contains("6.0.0")
    assert not hub.specifier.contains("5.2.0"), "5.3 brings the shared-password authenticator the values use"


def test_a_cluster_learners_server_saves_notebooks_through_the_hook():
    assert VALUES["hub"]["config"]["KubeSpawner"]["args"] == [SAVE_HOOK]


def test_progress_files_live_on_the_learners_volume():
    single = VALUES["singleuser"]
    assert single["storage"]["type"] == "dynamic"
    home = single["storage"]["homeMountPath"]
    assert single["extraEnv"]["CUTEKIT_PROGRESS"].startswith(home + "/")


def test_idle_servers_are_culled_after_a_lunch_break_not_during_it():
    assert VALUES["cull"]["enabled"] is True and VALUES["cull"]["timeout"] >= 2.5 * 3600


def post_start(home: Path, repo: str) -> subprocess.CompletedProcess:
    """The values' postStart hook, run as Kubernetes runs it (its command, the pod's environment)."""
    command = VALUES["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"]
    env = {**os.environ, **VALUES["singleuser"]["extraEnv"], "HOME": str(home), "CUTEKIT_COURSE_REPO": repo,
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}   # the image's PATH
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_a_failed_pull_at_start_leaves_a_note_and_the_server_starts(tmp_path, course_repo):
    """Kubernetes kills a container whose postStart hook fails: the hook succeeds anyway and says why."""
    home = tmp_path / "home"
    home.mkdir()
    failed = post_start(home, (tmp_path / "no-such-repository").as_uri())
    assert failed.returncode == 0, failed.stderr
    note = (home / "COURSE-NOT-UPDATED.txt").read_text()
    assert "could not be updated" in note and "your work is untouched" in note and "no-such-repository" in note
    pulled = post_start(home, course_repo.as_uri())
    assert pulled.returncode == 0, pulled.stderr
    assert VALUES["singleuser"]["extraEnv"]["CUTEKIT_COURSE_BRANCH"] == pull_link.DEFAULT_BRANCH == "student"
    assert (home / "cute-by-hand" / "course" / "00_start_here.ipynb").is_file()
    assert not (home / "cute-by-hand" / "solutions").exists() and not (home / "COURSE-NOT-UPDATED.txt").exists()


# ---- the room's table from a hub's home folders ------------------------------------------------------------

def progress_in(home: Path, earned: list, learner: str | None = None):
    path = home / ".cutekit" / "progress.jsonl"
    for points in earned:
        append_line(path, {"learner": learner or home.name, "exercise": "ch01.layout_from_grid", "earned": points,
                           "possible": 4, "tiers": ["reference"], "time": "2025-01-01T00:00:00"})
    return path


def test_the_report_over_home_folders_lists_every_learner_tried_or_not(tmp_path, capsys):
    homes = tmp_path / "home"
    progress_in(homes / "ada", [1, 3])
    progress_in(homes / "bob", [1])
    (homes / "cy").mkdir()                                     # logged in, never checked an exercise
    (homes / "lost+found").mkdir()
    report = class_report(homes=[homes])
    assert [(row.learner, row.scores.get("ch01.layout_from_grid"), row.status) for row in report.rows] == [
        ("ada", 3, ""), ("bob", 1, ""), ("cy", None, "not attempted")]
    assert main(["report", "--homes", str(homes)]) == 0
    cy_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("cy "))
    assert cy_line.endswith("not attempted")


def test_on_a_hub_the_row_is_named_for_the_home_not_the_shared_os_user(tmp_path):
    homes = tmp_path / "home"
    progress_in(homes / "ada", [2], learner="jovyan")           # every z2jh learner's OS user is jovyan
    assert [row.learner for row in class_report(homes=[homes]).rows] == ["ada"]


def test_a_learners_name_is_the_hub_user_when_the_hub_started_the_kernel(monkeypatch):
    from cutekit.checks.progress import learner_name
    monkeypatch.delenv("CUTEKIT_LEARNER", raising=False)
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    assert learner_name() == "ada"


def test_an_unreadable_progress_file_is_a_row_and_a_problem_that_says_why(tmp_path):
    homes = tmp_path / "home"
    (homes / "ada" / ".cutekit" / "progress.jsonl").mkdir(parents=True)   # a folder where the file should be
    locked = progress_in(homes / "bob", [2])
    os.chmod(locked, 0)
    try:
        report = class_report(homes=[homes])
    finally:
        os.chmod(locked, 0o644)
    rows = {row.learner: row for row in report.rows}
    assert rows["ada"].status == "unreadable"
    assert any("ada/.cutekit/progress.jsonl: cannot be read" in problem for problem in report.problems)
    if os.geteuid() != 0:                                                   # root reads any file
        assert rows["bob"].status == "unreadable"
        assert any("homes are private" in problem and "sudo" in problem for problem in report.problems)
    assert main(["report", "--homes", str(homes)]) == 1


def test_the_report_needs_somewhere_to_look_and_a_folder_of_homes(tmp_path, capsys):
    assert main(["report"]) == 2
    assert "--homes" in capsys.readouterr().err
    report = class_report(homes=[tmp_path / "nowhere"])
    assert report.problems == (f"{tmp_path / 'nowhere'}: not a folder of learners' homes",)


# ---- the hub's copies of the room's progress (progress_service.py) ------------------------------------------

def test_a_check_whose_send_to_the_hub_fails_is_saved_here_with_a_note(monkeypatch, tmp_path):
    from cutekit.checks.progress import send_to_hub
    path = progress_in(tmp_path / "ada", [2])
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "a-token")
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    monkeypatch.delenv("CUTEKIT_PROGRESS_URL", raising=False)
    assert send_to_hub(path) is None                                    # no hub service: nothing to send
    with socket.socket() as probe:                                      # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("CUTEKIT_PROGRESS_URL", f"http://127.0.0.1:{port}/services/cutekit-progress/")
    note = send_to_hub(path)
    assert note.startswith("progress saved here, not sent to the hub") and "/learners/ada" in note
    assert "the next check sends it again" in note


def test_the_report_from_a_hub_needs_its_address_and_an_admins_token(monkeypatch, capsys):
    from cutekit.checks.progress import hub_service_url
    assert hub_service_url("https://hub.example.org") == "https://hub.example.org/services/cutekit-progress/"
    monkeypatch.delenv("CUTEKIT_HUB_TOKEN", raising=False)
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    monkeypatch.delenv("CUTEKIT_PROGRESS_URL", raising=False)
    assert main(["report", "--hub"]) == 2 and "give the hub's address" in capsys.readouterr().err
    assert main(["report", "--hub", "hub.example.org"]) == 2 and "like https://" in capsys.readouterr().err
    assert main(["report", "--hub", "https://hub.example.org"]) == 2
    assert "CUTEKIT_HUB_TOKEN" in capsys.readouterr().err


def test_collected_progress_gives_every_hub_user_a_row(tmp_path):
    text = progress_in(tmp_path / "ada", [1, 3]).read_text()
    report = class_report(collected={"ada": text}, users=["ada", "cy"], collected_from="hub:")
    assert [(row.learner, row.scores.get("ch01.layout_from_grid"), row.status, row.source) for row in report.rows] \
        == [("ada", 3, "", "hub:ada"), ("cy", None, "not attempted", "hub:cy")]


def test_on_a_cluster_the_progress_service_runs_in_the_hub_pod_and_the_kernels_reach_it():
    """The pieces that must agree: the file the install command mounts and the command that runs it, the
    service's address, the hub Service's extra port, the network policies, and the kernels' address."""
    installed = installed_values()
    hub = installed["hub"]
    service = hub["services"]["cutekit-progress"]
    mounted = hub["extraFiles"]["cutekit-progress"]
    assert service["command"][-1] == mounted["mountPath"]
    assert mounted["stringData"] == (DEPLOY / "progress_service.py").read_text()
    port = urlsplit(service["url"]).port
    assert urlsplit(service["url"]).hostname == "hub" and service["environment"]["CUTEKIT_PROGRESS_LISTEN"] == "0.0.0.0"
    assert service["environment"]["CUTEKIT_PROGRESS_DATA"].startswith("/srv/jupyterhub/")     # the hub's volume
    assert {"port": port, "targetPort": port, "name": "progress"} in hub["service"]["extraPorts"]
    assert hub["loadRoles"]["cutekit-progress"] == {"scopes": ["list:users", "read:users"],
                                                    "services": ["cutekit-progress"]}
    kernels = installed["singleuser"]["extraEnv"]["CUTEKIT_PROGRESS_URL"]
    assert kernels == f"{service['url']}/services/cutekit-progress/"
    for rule in (installed["singleuser"]["networkPolicy"]["egress"][0], installed["proxy"]["chp"]["networkPolicy"]["egress"][0],
                 hub["networkPolicy"]["ingress"][0]):
        assert rule["ports"] == [{"port": port}]
    # the chart labels learners' and the proxy's pods so (chart-values.yaml), and the hub pod app/component
    chart = yaml.safe_load((CHART / "chart-values.yaml").read_text())
    assert chart["singleuser"]["extraLabels"]["hub.jupyter.org/network-access-hub"] == "true"

