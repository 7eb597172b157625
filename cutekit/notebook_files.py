"""Keep a course notebook's file unchanged when a learner only opens it.

When JupyterLab starts a notebook's kernel it writes the kernel's `language_info` (Python's exact version
among it) into the notebook's metadata; that marks the notebook changed, and autosave writes it. On a hub the
course is a git clone that nbgitpuller updates, and a notebook written that way counts as the learner's own
change. The course's notebooks carry no `language_info` (Jupyter fills it in again at every kernel start), so
the Jupyter server drops it on every save: a notebook opened, run or not, and saved without an edit is written
byte for byte as it was. The hub sets this hook on the learners' servers (deploy/jupyterhub_config.py):

    jupyterhub-singleuser --ContentsManager.pre_save_hook=cutekit.notebook_files.pre_save
"""
from __future__ import annotations

DROPPED = ("language_info",)          # notebook metadata Jupyter writes again whenever a kernel starts


def pre_save(model: dict, path: str = "", contents_manager=None, **kwargs) -> None:
    """A Jupyter server `ContentsManager.pre_save_hook`: drop DROPPED from a notebook's metadata."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    metadata = model["content"].get("metadata")
    if isinstance(metadata, dict):
        for key in DROPPED:
            metadata.pop(key, None)


__all__ = ["pre_save"]
