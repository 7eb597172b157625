"""Checks under test never write to the real ~/.cutekit: each test gets its own progress file."""
import pytest


@pytest.fixture(autouse=True)
def private_progress_file(tmp_path, monkeypatch):
    path = tmp_path / "progress.jsonl"
    monkeypatch.setenv("CUTEKIT_PROGRESS", str(path))
    monkeypatch.delenv("CUTEKIT_STRICT", raising=False)
    monkeypatch.delenv("CUTEKIT_SEED", raising=False)
    monkeypatch.delenv("CUTEKIT_TIERS", raising=False)
    return path
