"""Handing out a GPU server's GPUs to learners, one rule in one place.

Each learner gets one GPU through `CUDA_VISIBLE_DEVICES`. With `per_gpu=1` every learner has a GPU of their
own; with `per_gpu=3`, up to three learners share each GPU (the course's kernels are small: a shared A100
still runs every chapter). Learners are spread round-robin: a new learner goes to the least-loaded GPU, the
lowest-numbered one on a tie, so four learners on four GPUs get 0, 1, 2, 3, and the fifth shares GPU 0.
A learner who already holds a GPU keeps it. A room larger than GPUs x per_gpu is refused with words that
say how many seats there are and what to change.

Used by `jupyterhub_config.py` (a pre-spawn hook); plain data in, plain data out, no JupyterHub import.
"""
from __future__ import annotations

import os
import shutil
import subprocess


class RoomFull(RuntimeError):
    """Every GPU already has its limit of learners."""


def pick_gpu(holders: dict, learner: str, gpus: list, per_gpu: int) -> str:
    """The GPU (an id from `gpus`, as `CUDA_VISIBLE_DEVICES` spells it) for `learner`, given `holders`
    (learner -> GPU id) of the learners running now.

    >>> pick_gpu({"ada": "0"}, "bob", ["0", "1"], per_gpu=2)
    '1'
    """
    if per_gpu < 1:
        raise ValueError(f"per_gpu must be 1 or more learners per GPU, got {per_gpu}")
    if not gpus:
        raise ValueError("no GPUs to hand out: on a machine without GPUs, leave CUDA_VISIBLE_DEVICES unset")
    if learner in holders and holders[learner] in gpus:
        return holders[learner]
    load = {gpu: 0 for gpu in gpus}
    for holder, gpu in holders.items():
        if holder != learner and gpu in load:
            load[gpu] += 1
    gpu = min(gpus, key=lambda gpu: load[gpu])     # min keeps the first of equals: round-robin order
    if load[gpu] >= per_gpu:
        seats = len(gpus) * per_gpu
        raise RoomFull(
            f"this GPU server is full: {len(gpus)} GPU{'s' if len(gpus) > 1 else ''} x {per_gpu} learner"
            f"{'s' if per_gpu > 1 else ''} per GPU = {seats} seats, all taken, so {learner!r} cannot start. "
            f"Raise the limit (CUTEKIT_LEARNERS_PER_GPU, now {per_gpu}), stop idle servers "
            f"(the idle culler does this after its timeout), or add a GPU server.")
    return gpu


def gpu_ids(environ=os.environ) -> list:
    """The GPUs this server hands out: `CUTEKIT_GPUS` ("0,1,2,3") if set, else those `nvidia-smi -L`
    lists, else none (a CPU-only server: learners get the reference and cutedsl-cpu tiers)."""
    named = environ.get("CUTEKIT_GPUS")
    if named is not None:
        return [gpu.strip() for gpu in named.split(",") if gpu.strip()]
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [str(number) for number, line in enumerate(out.splitlines()) if line.startswith("GPU ")]


def learners_per_gpu(environ=os.environ) -> int:
    """`CUTEKIT_LEARNERS_PER_GPU` (default 1), checked."""
    value = environ.get("CUTEKIT_LEARNERS_PER_GPU", "1")
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"CUTEKIT_LEARNERS_PER_GPU must be a whole number of learners, got {value!r}") from None
    if number < 1:
        raise ValueError(f"CUTEKIT_LEARNERS_PER_GPU must be 1 or more, got {number}")
    return number


def gpu_note(gpu: str, gpus: list, per_gpu: int) -> str:
    """What a learner's `python -m cutekit doctor` says about the GPU the hub gave them."""
    shared = "yours alone" if per_gpu == 1 else f"shared by up to {per_gpu} learners"
    return f"the hub gave you GPU {gpu} of {len(gpus)} ({shared})"
