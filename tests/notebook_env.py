"""make test's one notebook run, `pytest -p tests.notebook_env course solutions`: each notebook's kernel starts
with its folder's environment, so both kinds share two workers (no run waits on the other's slowest notebook).

  course/     as a learner on a Mac meets them: CuTeDSL hidden (tests/without_cutedsl first on PYTHONPATH, in the
              kernel and every process it starts), unsolved exercises saying "not yet";
  solutions/  strict (CUTEKIT_STRICT=1): every model answer earns every point of every tier this machine has.

nbval starts a notebook's kernel when the notebook's first cell is set up, from this process's environment."""
import os
from pathlib import Path

import pytest

HIDDEN = str(Path(__file__).resolve().parent / "without_cutedsl")
BEFORE = dict(os.environ)


def environment(notebook: Path) -> dict:
    """The environment `notebook`'s kernel starts with."""
    env = {key: value for key, value in BEFORE.items() if key != "CUTEKIT_STRICT"}
    folder = notebook.parent.name
    if folder == "course":
        env["PYTHONPATH"] = os.pathsep.join([HIDDEN] + [p for p in [BEFORE.get("PYTHONPATH")] if p])
    elif folder == "solutions":
        env["CUTEKIT_STRICT"] = "1"
    else:
        raise pytest.UsageError(f"tests.notebook_env runs course/ and solutions/ notebooks, not {notebook}")
    return env


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    path = Path(str(item.fspath))
    if path.suffix == ".ipynb":
        os.environ.clear()
        os.environ.update(environment(path))
