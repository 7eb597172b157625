"""sm_80 (Ampere) in a simulated kernel: cp.async copies that land when their group is waited for, ldmatrix (a
warp's exchange of 8x8 matrices), and mma.sync (an MMA atom computed for the whole warp at once).

A room of the architecture floor: it adds to the operations floor (ops/device.py) what `cute.copy` and
`cute.gemm` do with sm_80's atoms, and gives the face the `cute.arch` functions it adds (CUTE_ARCH). sm_90's room
(sm90.py) builds on it (stmatrix is ldmatrix's exchange the other way).
"""
from __future__ import annotations

import functools

import numpy

from ...cute.atom import CopyAtom, MmaAtom
from ...cute.inttuple import CuteError, is_int, is_tuple, product
from ...cute.layout import Layout, size
from ...cute.nvgpu.cpasync import CopyG2SOp
from ...cute.nvgpu.warp import LdMatrix8x8x16bOp
from ..machine import collectives, threads
from ..memory.tensors import SimTensor, check_alignment, check_bounds, read, write
from ..ops import device
from ..ops.device import _store_3d, _values_per_atom


# --------------------------------------------------------------------------------------------- cp.async

def _copy_async(src, dst, destination, values, per_atom):
    """cp.async: the destination is written when the group completes (cp_async_wait_group), not now."""
    thread = threads.require_thread("a cp.async copy")
    if dst.storage.space != "smem" or src.storage.space != "gmem":
        raise CuteError("cp.async (CopyG2SOp) copies global memory to shared memory; got "
                        f"{src.storage.describe()} -> {dst.storage.describe()}")
    write(dst.storage, destination, dst, vector=per_atom)      # races and banks are judged at issue
    dst.storage.in_flight[destination] += 1
    storage = dst.storage

    def finish():
        storage.in_flight[destination] -= 1
        storage.array[destination] = values
    thread.async_pending.append(finish)


def cp_async_commit_group():
    threads.commit_async(threads.require_thread("cp_async_commit_group()"))


def cp_async_wait_group(n):
    if not is_int(n) or n < 0:
        raise CuteError(f"cp_async_wait_group(n): n must be a non-negative int, got {n!r}")
    threads.complete_async(threads.require_thread("cp_async_wait_group()"), keep=n)


# --------------------------------------------------------------------------------------------- ldmatrix

@functools.lru_cache(maxsize=64)
def _tv_table(layout: Layout, threads: int, values: int) -> numpy.ndarray:
    return numpy.array([[layout((t, v)) for v in range(values)] for t in range(threads)], dtype=numpy.int64)


def _ldmatrix(atom: CopyAtom, src: SimTensor, dst: SimTensor):
    """ldmatrix: the 32 lanes exchange data: each lane's source values land in the registers that the
    atom's destination layout assigns them (computed for the whole warp at once)."""
    thread = threads.require_thread("ldmatrix")
    source = src.addresses()
    check_bounds(src, source)
    first = src.layout.shape[0] if is_tuple(src.layout.shape) else src.layout.shape
    # CuTeDSL wants the source aligned to what one step of the first mode reads (16 bytes for one instruction)
    check_alignment(src, source, product(first[0] if is_tuple(first) and len(first) == 2 else first),
                    "cute.copy source (ldmatrix)")
    read(src.storage, source, src, vector=_values_per_atom(atom))
    payload = (src.storage.array[source].copy(), dst, thread)
    key = ("ldmatrix", atom.layout_src_tv, atom.layout_dst_tv)
    collectives.warp_collective(key, functools.partial(resolve_exchange, atom), payload,
                            what="ldmatrix (cute.copy)", instruction="ldmatrix")


def resolve_exchange(atom: CopyAtom, payloads: dict) -> dict:
    """ldmatrix or stmatrix for a warp: `payloads` is {lane: (its source values, its destination, its thread)};
    each lane's source values land where the atom's destination layout puts them (a shared-memory
    destination is written with its race and proxy bookkeeping, for the lane that owns it)."""
    src_values = size(atom.layout_src_tv, mode=[1])
    dst_values = size(atom.layout_dst_tv, mode=[1])
    src_table = _tv_table(atom.layout_src_tv, 32, src_values)
    dst_table = _tv_table(atom.layout_dst_tv, 32, dst_values)
    some = next(iter(payloads.values()))[0]
    instances = some.size // src_values
    exchanged = numpy.zeros((instances, int(max(src_table.max(), dst_table.max())) + 1), some.dtype)
    for lane in sorted(payloads, reverse=True):          # the lowest lane supplying an element wins
        values = payloads[lane][0].reshape(instances, src_values)
        exchanged[:, src_table[lane]] = values
    for lane, (_, dst, owner) in payloads.items():
        addresses = dst.addresses()
        check_bounds(dst, addresses)
        values = exchanged[:, dst_table[lane]].reshape(-1)
        if dst.storage.space == "smem":
            write(dst.storage, addresses, dst, thread=owner, values=values)
        dst.storage.array[addresses] = values
    return {}


# --------------------------------------------------------------------------------------------- mma.sync

def _resolve_mma(mma: MmaAtom, payloads: dict) -> dict:
    """mma.sync for a warp: rebuild A (M x K), B (N x K), C (M x N) of every atom from the lanes' fragments
    through the atom's TV layouts, multiply in fp32, and hand each lane its part of D."""
    m_, n_, k_ = mma.shape_mnk
    table_a = _tv_table(mma.tv_layout_A, 32, size(mma.tv_layout_A, mode=[1]))
    table_b = _tv_table(mma.tv_layout_B, 32, size(mma.tv_layout_B, mode=[1]))
    table_c = _tv_table(mma.tv_layout_C, 32, size(mma.tv_layout_C, mode=[1]))
    some_a, some_b, some_c, _ = next(iter(payloads.values()))
    _, tiles_m, tiles_k = some_a.shape
    _, tiles_n, _ = some_b.shape
    a_full = numpy.zeros((tiles_m, tiles_k, m_ * k_), numpy.float32)
    b_full = numpy.zeros((tiles_n, tiles_k, n_ * k_), numpy.float32)
    c_full = numpy.zeros((tiles_m, tiles_n, m_ * n_), numpy.float32)
    for lane, (av, bv, cv, _) in payloads.items():
        a_full[:, :, table_a[lane]] = av.transpose(1, 2, 0)
        b_full[:, :, table_b[lane]] = bv.transpose(1, 2, 0)
        c_full[:, :, table_c[lane]] = cv.transpose(1, 2, 0)
    # column-major (m, k) -> index m + M * k
    a_mat = a_full.reshape(tiles_m, tiles_k, k_, m_).transpose(0, 1, 3, 2)     # (TM, TK, M, K)
    b_mat = b_full.reshape(tiles_n, tiles_k, k_, n_).transpose(0, 1, 3, 2)     # (TN, TK, N, K)
    d_mat = c_full.reshape(tiles_m, tiles_n, n_, m_).transpose(0, 1, 3, 2).copy()  # (TM, TN, M, N)
    d_mat += numpy.einsum("akmx,bknx->abmn", a_mat, b_mat)
    d_flat = d_mat.transpose(0, 1, 3, 2).reshape(tiles_m, tiles_n, m_ * n_)
    for lane, (_, _, _, d) in payloads.items():
        _store_3d(d, d_flat[:, :, table_c[lane]].transpose(2, 0, 1).astype(d.storage.array.dtype))
    return {}


# --------------------------------------------------------------------------------------------- the room

# the names the face (dsl.py) adds to cute.arch
CUTE_ARCH = {"cp_async_commit_group": cp_async_commit_group, "cp_async_wait_group": cp_async_wait_group}


def _add(table: list, entry):
    if entry not in table:
        table.append(entry)


_add(device.CHECKED_COPIES, (LdMatrix8x8x16bOp, _ldmatrix))
_add(device.LATER_COPIES, (CopyG2SOp, _copy_async))
device.WARP_MMA[0] = _resolve_mma
