"""Learners' servers under accounts of this server, for log-ins whose names are not accounts here.

JupyterHub's local-process spawner runs each server as the OS account named like the hub user: right with PAM,
where the names are this server's accounts, and a failure at the first start (`getpwnam(): name not found:
'learner01'`) with every other authenticator: a shared password, NativeAuthenticator, OAuth, the dummy one.
`LearnerAccountSpawner` is the local-process spawner with the account made for the learner: at the first
start it creates `jupyter-NAME` (no password, no log-in of its own) with the home `HOMES/NAME` (mode 700),
and runs the server as that account, in that home. `jupyterhub_config.py` chooses it for every
authenticator but PAM. The prefix keeps a hub name from ever being an existing account (`root`, `admin`).

`shared_account` runs every learner's server as one existing unprivileged account instead, homes still one
per learner: for a machine where the hub may not add accounts (tests/test_hub.py runs it so, as the user
running the test).
"""
from __future__ import annotations

import hashlib
import os
import pwd
import re
import shutil
import subprocess

from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Unicode

ACCOUNT = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
FOLDER = re.compile(r"^[A-Za-z0-9_@+-][A-Za-z0-9._@+-]*$")


def account_name(prefix: str, learner: str) -> str:
    """`jupyter-learner01`; a name useradd would refuse (too long, other characters) becomes a short hash.

    >>> account_name("jupyter-", "learner01"), account_name("jupyter-", "ada.lovelace@example.org")
    ('jupyter-learner01', 'jupyter-u-0b6126cba6')
    """
    name = prefix + learner
    if ACCOUNT.match(name):
        return name
    return f"{prefix}u-{hashlib.sha1(learner.encode()).hexdigest()[:10]}"


def home_folder(homes: str, learner: str) -> str:
    """`HOMES/NAME`: the learner's home, named as `cutekit report --homes HOMES` names its row."""
    if not FOLDER.match(learner) or learner in (".", ".."):
        raise ValueError(f"the hub user name {learner!r} cannot name a home folder")
    return os.path.join(homes, learner)


def ensure_account(account: str, home: str, learner: str, create: bool = True) -> pwd.struct_passwd:
    """The account (made with useradd when `create` and missing) and its home (made, owned by it, mode 700)."""
    try:
        entry = pwd.getpwnam(account)
    except KeyError:
        if not create:
            raise RuntimeError(f"the account {account!r} for learners' servers does not exist on this server "
                               "(CUTEKIT_HUB_ACCOUNT): create it, or unset it to have one account made per learner")
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        made = subprocess.run([useradd, "--home-dir", home, "--shell", "/bin/bash", "--comment",
                               f"CuTe by Hand learner {learner}", "--user-group", account],
                              capture_output=True, text=True)
        if made.returncode != 0:
            raise RuntimeError(f"could not create the account {account!r} for {learner!r} (the hub must run as "
                               f"root to add accounts): {made.stderr.strip() or made.returncode}")
        entry = pwd.getpwnam(account)
    if entry.pw_uid == 0 and create:
        raise RuntimeError(f"refusing to run {learner!r}'s server as root")
    os.makedirs(home, mode=0o700, exist_ok=True)
    if os.geteuid() == 0:
        os.chown(home, entry.pw_uid, entry.pw_gid)
    return entry


class LearnerAccountSpawner(LocalProcessSpawner):
    """LocalProcessSpawner under an account made for the learner (`jupyter-NAME`), home `homes/NAME`."""

    homes = Unicode("/home/learners", config=True,
                    help="the folder of learners' homes (what `cutekit report --homes` reads)")
    account_prefix = Unicode("jupyter-", config=True, help="accounts are this prefix and the hub user name")
    shared_account = Unicode("", config=True,
                             help="run every learner's server as this existing account (homes still apart)")

    @property
    def account(self) -> str:
        return self.shared_account or account_name(self.account_prefix, self.user.name)

    @property
    def home_dir(self) -> str:
        return home_folder(self.homes, self.user.name)

    def make_preexec_fn(self, name):
        become = set_user_setuid(self.account, chdir=False)
        home = self.home_dir

        def preexec():
            become()
            os.chdir(home)
        return preexec

    def user_env(self, env):
        entry = pwd.getpwnam(self.account)
        env["USER"] = entry.pw_name
        env["HOME"] = self.home_dir
        if entry.pw_shell:
            env["SHELL"] = entry.pw_shell
        return env

    async def start(self):
        ensure_account(self.account, self.home_dir, self.user.name, create=not self.shared_account)
        return await super().start()
