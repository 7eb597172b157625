"""make test runs course/ and solutions/ notebooks in one pytest run; each kernel gets its folder's environment."""
import os
from pathlib import Path

import pytest

from tests import notebook_env


def test_a_course_notebook_starts_with_cutedsl_hidden_and_not_strict(monkeypatch):
    monkeypatch.setattr(notebook_env, "BEFORE", {"PYTHONPATH": "/elsewhere", "CUTEKIT_STRICT": "1", "HOME": "/h"})
    env = notebook_env.environment(Path("course/01_layouts.ipynb"))
    assert env["PYTHONPATH"].split(os.pathsep) == [notebook_env.HIDDEN, "/elsewhere"]
    assert (Path(notebook_env.HIDDEN) / "sitecustomize.py").exists()
    assert "CUTEKIT_STRICT" not in env and env["HOME"] == "/h"


def test_a_solution_notebook_starts_strict_with_cutedsl_in_reach(monkeypatch):
    monkeypatch.setattr(notebook_env, "BEFORE", {"HOME": "/h"})
    env = notebook_env.environment(Path("solutions/01_layouts.ipynb"))
    assert env == {"HOME": "/h", "CUTEKIT_STRICT": "1"}


def test_a_notebook_elsewhere_is_refused():
    with pytest.raises(pytest.UsageError, match="course/ and solutions/"):
        notebook_env.environment(Path("build/site/01_layouts.ipynb"))
