"""JupyterHub for a CuTe by Hand workshop on one GPU server (JupyterHub 5 or 6; tested with 6.1.1).

    sudo CUTEKIT_COURSE_ROOT=/srv/cute-by-hand-student CUTEKIT_LEARNERS_PER_GPU=2 \
         /srv/cute-by-hand-student/.venv/bin/jupyterhub -f /srv/cute-by-hand/deploy/jupyterhub_config.py

Every learner logs in, gets a JupyterLab with their own copy of the course (the student bundle's branch, made
by `make student-branch`, pulled by nbgitpuller into their home, so later course updates merge in without
touching their answers) and the course kernel
`cute-by-hand`, and one GPU of this server through CUDA_VISIBLE_DEVICES (round-robin, at most
CUTEKIT_LEARNERS_PER_GPU learners per GPU). On a server without GPUs learners get the CPU tiers.
Idle servers are stopped by jupyterhub-idle-culler. Everything an instructor may change is an environment
variable read below; deploy/README.md explains each.
"""
import os
import sys
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from course_kernel import course_kernel_problem, kernel_names  # noqa: E402
from gpu_assign import gpu_ids, gpu_note, learners_per_gpu, pick_gpu  # noqa: E402
from course_kernel import answers_beside  # noqa: E402
from pull_link import DEFAULT_BRANCH, FIRST_NOTEBOOK, branch_problem, folder_of  # noqa: E402

c = get_config()  # noqa: F821 (JupyterHub provides it)
env = os.environ.get

# ---- where the course lives on this server ----------------------------------------------------------------
COURSE_ROOT = Path(env("CUTEKIT_COURSE_ROOT", str(HERE.parent)))          # a checkout, set up with `make setup`
COURSE_PYTHON = env("CUTEKIT_COURSE_PYTHON", str(COURSE_ROOT / ".venv" / "bin" / "python"))
# What nbgitpuller clones into each home (a URL, or a repository on this server). A file:// URL, not a plain
# path: git then clones only the branch (a plain path copies every branch, main and its answers included).
COURSE_REPO = env("CUTEKIT_COURSE_REPO", COURSE_ROOT.resolve().as_uri())
# The student bundle's branch (`make student-branch`): the course without its answers. A branch that holds
# solutions/ or INSTRUCTOR.md is refused here, before anyone logs in.
COURSE_BRANCH = env("CUTEKIT_COURSE_BRANCH", DEFAULT_BRANCH)
_problem = branch_problem(COURSE_REPO, COURSE_BRANCH)
if _problem:
    raise SystemExit(f"jupyterhub_config.py: {_problem} (CUTEKIT_COURSE_REPO, CUTEKIT_COURSE_BRANCH)")

# ---- the hub: address, log-in, who may come ---------------------------------------------------------------
c.JupyterHub.bind_url = env("CUTEKIT_HUB_URL", "http://:8000")
# Swap the authenticator with one variable: "pam" (this server's accounts), "shared-password" (one workshop
# password, CUTEKIT_HUB_PASSWORD), "nativeauthenticator.NativeAuthenticator", "oauthenticator.GitHubOAuthenticator",
# ..., "dummy" (any password: rehearsals only). Each comes with the spawner that works with it (below).
AUTHENTICATOR = env("CUTEKIT_HUB_AUTHENTICATOR", "pam")
c.JupyterHub.authenticator_class = AUTHENTICATOR
# Log-in names that are this server's accounts: PAM's. Every other authenticator logs in names of its own.
OS_ACCOUNTS = AUTHENTICATOR in ("pam", "jupyterhub.auth.PAMAuthenticator")
if AUTHENTICATOR in ("shared-password", "jupyterhub.authenticators.shared.SharedPasswordAuthenticator"):
    _given = env("CUTEKIT_HUB_PASSWORD", "")
    if len(_given) < 8:
        raise SystemExit("jupyterhub_config.py: the shared-password log-in needs the workshop password in "
                         f"CUTEKIT_HUB_PASSWORD (8 characters or more{f', not {len(_given)}' if _given else ''})")
    c.SharedPasswordAuthenticator.user_password = env("CUTEKIT_HUB_PASSWORD")
    # admins (CUTEKIT_HUB_ADMINS) log in with their own password, 32 characters or more (`openssl rand -hex 16`)
    if env("CUTEKIT_HUB_ADMIN_PASSWORD"):
        c.SharedPasswordAuthenticator.admin_password = env("CUTEKIT_HUB_ADMIN_PASSWORD")
c.Authenticator.admin_users = {name for name in env("CUTEKIT_HUB_ADMINS", "").split(",") if name}
learners_file = env("CUTEKIT_HUB_LEARNERS")            # one user name a line; without it, anyone who logs in
if learners_file:
    c.Authenticator.allowed_users = {line.strip() for line in Path(learners_file).read_text().splitlines()
                                     if line.strip() and not line.startswith("#")}
else:
    c.Authenticator.allow_all = True
c.JupyterHub.cookie_secret_file = env("CUTEKIT_HUB_STATE", "/srv/jupyterhub") + "/jupyterhub_cookie_secret"
c.JupyterHub.db_url = "sqlite:///" + env("CUTEKIT_HUB_STATE", "/srv/jupyterhub") + "/jupyterhub.sqlite"

# ---- learners' servers: the course's environment, JupyterLab, the course pulled in ------------------------
# "localprocess" (PAM's): each learner's server is a process under their own account (the log-in names are
# this server's accounts). "accounts" (every other authenticator's): the same, under an account the hub makes
# for each learner at the first start, `jupyter-NAME`, home CUTEKIT_HUB_HOMES/NAME (learner_accounts.py);
# CUTEKIT_HUB_ACCOUNT=NAME runs every learner under that one existing account instead, homes still apart.
# "systemdspawner.SystemdSpawner" (pip install jupyterhub-systemdspawner): each server in a systemd unit, with
# the memory and CPU limits below (`c.SystemdSpawner.dynamic_users = True` for names that are not accounts).
SPAWNERS = {"accounts": "learner_accounts.LearnerAccountSpawner"}
SPAWNER = SPAWNERS.get(env("CUTEKIT_HUB_SPAWNER", ""), env("CUTEKIT_HUB_SPAWNER", ""))
SPAWNER = SPAWNER or ("localprocess" if OS_ACCOUNTS else SPAWNERS["accounts"])
if not OS_ACCOUNTS and SPAWNER in ("localprocess", "jupyterhub.spawner.LocalProcessSpawner"):
    raise SystemExit(
        f"jupyterhub_config.py: {AUTHENTICATOR!r} logs in names that are not accounts of this server, and the "
        "local-process spawner runs each server as the account of that name (getpwnam fails at the first start): "
        "leave CUTEKIT_HUB_SPAWNER unset (or 'accounts': the hub makes an account per learner), or use PAM")
c.JupyterHub.spawner_class = SPAWNER
c.LearnerAccountSpawner.homes = env("CUTEKIT_HUB_HOMES", "/home/learners")
c.LearnerAccountSpawner.shared_account = env("CUTEKIT_HUB_ACCOUNT", "")
c.Spawner.cmd = [str(Path(COURSE_PYTHON).parent / "jupyterhub-singleuser")]
COURSE_FOLDER = folder_of(COURSE_REPO)                      # ~/<folder>: each learner's copy of the course
c.Spawner.default_url = "/git-pull?" + urlencode({
    "repo": COURSE_REPO, "branch": COURSE_BRANCH, "targetpath": COURSE_FOLDER,
    "urlpath": f"lab/tree/{COURSE_FOLDER}/{FIRST_NOTEBOOK}"})
# Opening a notebook makes JupyterLab write the kernel's language_info into it, and autosave then writes the
# file: nbgitpuller would count it as the learner's change. The hook drops that metadata on save, so a notebook
# saved without an edit is written as it was pulled (cutekit/notebook_files.py).
SAVE_HOOK = "--ContentsManager.pre_save_hook=cutekit.notebook_files.pre_save"
c.Spawner.args = [SAVE_HOOK]
c.Spawner.mem_limit = env("CUTEKIT_HUB_MEM_LIMIT", "8G")       # enforced by SystemdSpawner
c.Spawner.cpu_limit = float(env("CUTEKIT_HUB_CPU_LIMIT", "2"))  # enforced by SystemdSpawner
c.Spawner.http_timeout = 120                                     # first start imports torch: give it time
c.Spawner.start_timeout = 180

# ---- the GPUs: one each, or a few learners per GPU --------------------------------------------------------
GPUS = gpu_ids()
PER_GPU = learners_per_gpu()
holders = {}                         # learner -> GPU id, for the servers running now
_kernel_checked = []


def pulled_course(spawner) -> str | None:
    """The learner's pulled copy of the course (`~/<folder>`, where the landing page's pull puts it), or None
    when the learner's home cannot be told here."""
    home = getattr(spawner, "home_dir", "") or os.path.expanduser(f"~{spawner.user.name}")
    return None if home.startswith("~") else str(Path(home) / COURSE_FOLDER)


def course_first(spawner) -> str | None:
    """PYTHONPATH for the learner's server and kernels: their pulled course first, so a grader fixed during
    the workshop arrives with the pull that brings the notebooks; the environment's cutekit (installed with
    the course) is the fallback while the folder is not there yet."""
    pulled = pulled_course(spawner)
    if pulled is None:
        return None
    kept = os.environ.get("PYTHONPATH", "") if "PYTHONPATH" in spawner.env_keep else ""
    return os.pathsep.join([pulled] + [part for part in kept.split(os.pathsep) if part])


def before_spawn(spawner):
    """Refuse to start a server that would lack the course kernel; give the learner a GPU; put the learner's
    pulled course first on the kernels' path."""
    if not _kernel_checked:          # once per hub: the environment does not change under a running hub
        problem = course_kernel_problem(kernel_names(COURSE_PYTHON), COURSE_PYTHON)
        if problem:
            spawner.log.error(problem)
            raise RuntimeError(problem)
        beside = answers_beside(COURSE_PYTHON)      # a rehearsal may run from the full checkout: say so once
        if beside:
            spawner.log.warning(beside)
        _kernel_checked.append(True)
    name = spawner.user.name
    extra = {"CUTEKIT_LEARNER": name, "CUTEKIT_PROGRESS_URL": PROGRESS_URL}
    path = course_first(spawner)
    if path:
        extra["PYTHONPATH"] = path
    if GPUS:
        gpu = pick_gpu(holders, name, GPUS, PER_GPU)      # RoomFull says how many seats and what to change
        holders[name] = gpu
        extra.update(CUDA_VISIBLE_DEVICES=gpu, CUTEKIT_HUB_GPU=gpu_note(gpu, GPUS, PER_GPU))
    else:
        extra["CUTEKIT_HUB_GPU"] = "this hub has no GPUs: the CPU tiers grade every exercise"
    spawner.environment = {**spawner.environment, **extra}    # a new dict: the configured one is shared


def after_stop(spawner):
    holders.pop(spawner.user.name, None)


c.Spawner.pre_spawn_hook = before_spawn
c.Spawner.post_stop_hook = after_stop

# ---- stop idle servers (their GPU seat comes free); a lunch break is not idle enough -----------------------
IDLE_SECONDS = env("CUTEKIT_HUB_IDLE_SECONDS", "9000")
c.JupyterHub.load_roles = [{
    "name": "jupyterhub-idle-culler-role",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["jupyterhub-idle-culler"],
}, {
    "name": "cutekit-progress-role",              # the progress service lists the hub's users for the report
    "scopes": ["list:users", "read:users"],
    "services": ["cutekit-progress"],
}]
# ---- the room's progress, kept by the hub (progress_service.py): every check sends the learner's file here,
# `python -m cutekit report --hub URL` reads it, culled learners included ------------------------------------
PROGRESS_SERVICE = f"http://127.0.0.1:{env('CUTEKIT_HUB_PROGRESS_PORT', '10101')}"
PROGRESS_URL = PROGRESS_SERVICE + "/services/cutekit-progress/"
c.JupyterHub.services = [{
    "name": "jupyterhub-idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={IDLE_SECONDS}"],
}, {
    "name": "cutekit-progress",
    "url": PROGRESS_SERVICE,
    "command": [sys.executable, str(HERE / "progress_service.py")],
    "environment": {"CUTEKIT_PROGRESS_DATA": env("CUTEKIT_HUB_STATE", "/srv/jupyterhub") + "/cutekit-progress"},
}]
