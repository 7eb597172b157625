"""Chapter 08 answers: the right one per exercise (CORRECT) and the mistakes learners make (MISTAKES rows
`(exercise_id, mistake, wrong_answer, cause)`, `cause` a regular expression the hint must match)."""
from cutekit import cute
from cutekit.cute.nvgpu import warpgroup
from cutekit.sim.mbarriers import (arrive, arrive_expect_tx, commit_group, fence, mma, tma_load, wait, wait_group,
                                   wgmma)

Kind = warpgroup.SmemLayoutAtomKind


# ---- ch08.smem_layout ---------------------------------------------------------------------------------------------

def _kind(major, contiguous_bytes):
    for row, name in ((128, "SW128"), (64, "SW64"), (32, "SW32")):
        if contiguous_bytes % row == 0:
            return getattr(Kind, f"{major}_{name}")
    return getattr(Kind, f"{major}_INTER")


def smem_layout(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_always_128(mn, k, dtype, major, stages):
    atom = warpgroup.make_smem_layout_atom(getattr(Kind, f"{major}_SW128"), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_swizzle_from_elements(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * 2), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_swizzle_from_other_mode(mn, k, dtype, major, stages):
    other = mn if major == "K" else k
    atom = warpgroup.make_smem_layout_atom(_kind(major, other * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_major_swapped(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind("MN" if major == "K" else "K", contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_order_swapped(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(1, 0, 2) if major == "K" else (0, 1, 2))


def smem_always_order_0_1(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k, stages), order=(0, 1, 2))


def smem_smallest_swizzle(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    kind = getattr(Kind, f"{major}_SW32") if contiguous * dtype.width // 8 % 32 == 0 else getattr(Kind, f"{major}_INTER")
    return cute.tile_to_shape(warpgroup.make_smem_layout_atom(kind, dtype), (mn, k, stages),
                              order=(0, 1, 2) if major == "K" else (1, 0, 2))


def smem_without_stages(mn, k, dtype, major, stages):
    contiguous = k if major == "K" else mn
    atom = warpgroup.make_smem_layout_atom(_kind(major, contiguous * dtype.width // 8), dtype)
    return cute.tile_to_shape(atom, (mn, k), order=(0, 1) if major == "K" else (1, 0))


# ---- ch08.tma_plan ----------------------------------------------------------------------------------------------

def tma_plan(bm, bn, bk, cluster_m, dtype):
    return {"A": (bm, bk), "B": (bn // cluster_m, bk), "expect_tx": (bm + bn) * bk * dtype.width // 8}


def tma_whole_b_per_cta(bm, bn, bk, cluster_m, dtype):
    return {"A": (bm, bk), "B": (bn, bk), "expect_tx": (bm + bn) * bk * dtype.width // 8}


def tma_expects_own_share_only(bm, bn, bk, cluster_m, dtype):
    return {"A": (bm, bk), "B": (bn // cluster_m, bk), "expect_tx": (bm + bn // cluster_m) * bk * dtype.width // 8}


def tma_expects_elements(bm, bn, bk, cluster_m, dtype):
    return {"A": (bm, bk), "B": (bn // cluster_m, bk), "expect_tx": (bm + bn) * bk}


def tma_two_bytes_hard_coded(bm, bn, bk, cluster_m, dtype):
    return {"A": (bm, bk), "B": (bn // cluster_m, bk), "expect_tx": (bm + bn) * bk * 2}


def tma_divides_a_not_b(bm, bn, bk, cluster_m, dtype):
    return {"A": (bm // cluster_m, bk), "B": (bn, bk), "expect_tx": (bm + bn) * bk * dtype.width // 8}


def tma_boxes_k_first(bm, bn, bk, cluster_m, dtype):
    return {"A": (bk, bm), "B": (bk, bn // cluster_m), "expect_tx": (bm + bn) * bk * dtype.width // 8}


def tma_expects_a_only(bm, bn, bk, cluster_m, dtype):
    return {"A": (bm, bk), "B": (bn // cluster_m, bk), "expect_tx": bm * bk * dtype.width // 8}


# ---- ch08.stage_count ---------------------------------------------------------------------------------------------

def stages_that_fit(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 2 * 8          # A and B tiles, a full and an empty mbarrier
    epilogue = 0 if reuse else bm * bn * c_dtype.width // 8
    return (227 * 1024 - epilogue) // stage


def stages_kib_as_1000(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 16
    return (227 * 1000 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_228_kib(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 16
    return (228 * 1024 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_without_b(bm, bn, bk, dtype, c_dtype, reuse):
    stage = bm * bk * dtype.width // 8 + 16
    return (227 * 1024 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_without_barriers(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8
    return (227 * 1024 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_width_as_bytes(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width + 16
    return (227 * 1024 - (0 if reuse else bm * bn * c_dtype.width // 8)) // stage


def stages_epilogue_always_counted(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 16
    return (227 * 1024 - bm * bn * c_dtype.width // 8) // stage


def stages_epilogue_never_counted(bm, bn, bk, dtype, c_dtype, reuse):
    stage = (bm + bn) * bk * dtype.width // 8 + 16
    return 227 * 1024 // stage


# ---- ch08.mbarrier_phases ---------------------------------------------------------------------------------------

def _phases(k_tiles, stages, nbytes, producer_first_parity=1, consumer_first_parity=0, flip="lap",
            producer_waits=True, consumer_releases=True, release_before_mma=False, expect=True, wrap=True):
    producer, consumer = [], []
    stage, phase_p, phase_c = 0, producer_first_parity, consumer_first_parity
    for k_tile in range(k_tiles):
        if producer_waits:
            producer.append(wait("empty", stage, phase_p))
        producer.append(arrive_expect_tx("full", stage, nbytes) if expect else arrive("full", stage))
        producer.append(tma_load(stage, k_tile))
        consumer.append(wait("full", stage, phase_c))
        if release_before_mma:
            consumer += [arrive("empty", stage), mma(stage, k_tile)]
        else:
            consumer.append(mma(stage, k_tile))
            if consumer_releases:
                consumer.append(arrive("empty", stage))
        stage += 1
        if flip == "every k-tile":
            phase_p, phase_c = phase_p ^ 1, phase_c ^ 1
        if stage == stages and wrap:
            stage = 0
            if flip == "lap":
                phase_p, phase_c = phase_p ^ 1, phase_c ^ 1
    return producer, consumer


def pipeline_steps(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes)


def phases_producer_starts_at_parity_0(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, producer_first_parity=0)


def phases_consumer_starts_at_parity_1(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, consumer_first_parity=1)


def phases_never_flipped(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, flip="never")


def phases_flipped_every_k_tile(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, flip="every k-tile")


def phases_producer_never_waits(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, producer_waits=False)


def phases_consumer_never_releases(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, consumer_releases=False)


def phases_release_before_mma(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, release_before_mma=True)


def phases_plain_arrive_without_bytes(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, expect=False)


def phases_stage_never_wraps(k_tiles, stages, nbytes):
    return _phases(k_tiles, stages, nbytes, wrap=False)


# ---- ch08.wgmma_main_loop -----------------------------------------------------------------------------------------

def _loop(k_tiles, stages, depth, fenced=True, release="back", commit=True, wait_in_loop=None, final_wait=True,
          wait_before_mma=False):
    steps, stage, phase, held = [], 0, 0, []
    waited = depth if wait_in_loop is None else wait_in_loop
    for k_tile in range(k_tiles):
        steps.append(wait("full", stage, phase))
        if fenced:
            steps.append(fence())
        if wait_before_mma:
            steps += [wait_group(waited), wgmma(stage, k_tile)] + ([commit_group()] if commit else [])
        else:
            steps.append(wgmma(stage, k_tile))
            if commit:
                steps.append(commit_group())
            steps.append(wait_group(waited))
        held.append(stage)
        if release == "current":
            steps.append(arrive("empty", held.pop(0)))
        elif release == "back" and len(held) > depth:
            steps.append(arrive("empty", held.pop(0)))
        stage += 1
        if stage == stages:
            stage, phase = 0, phase ^ 1
    return steps + ([wait_group(0)] if final_wait else [])


def consumer_loop(k_tiles, stages, depth):
    return _loop(k_tiles, stages, depth)


def loop_without_fence(k_tiles, stages, depth):
    return _loop(k_tiles, stages, depth, fenced=False)


def loop_releases_the_current_stage(k_tiles, stages, depth):
    return _loop(k_tiles, stages, depth, release="current")


def loop_without_commit_group(k_tiles, stages, depth):
    return _loop(k_tiles, stages, depth, commit=False)


def loop_waits_for_every_group(k_tiles, stages, depth):
    """safe, but wait_group(0) in the loop: no wgmma overlaps the next wait"""
    return _loop(k_tiles, stages, depth, wait_in_loop=0)


def loop_without_final_wait(k_tiles, stages, depth):
    return _loop(k_tiles, stages, depth, final_wait=False)


def loop_never_releases(k_tiles, stages, depth):
    return _loop(k_tiles, stages, depth, release="never")


def loop_waits_before_the_wgmma(k_tiles, stages, depth):
    return _loop(k_tiles, stages, depth, wait_before_mma=True)


CORRECT = {
    "ch08.smem_layout": smem_layout,
    "ch08.tma_plan": tma_plan,
    "ch08.stage_count": stages_that_fit,
    "ch08.mbarrier_phases": pipeline_steps,
    "ch08.wgmma_main_loop": consumer_loop,
}

MISTAKES = [
    ("ch08.smem_layout", "always the 128 byte swizzle", smem_always_128, r"largest swizzle|always use the 128-byte"),
    ("ch08.smem_layout", "swizzle from the element count", smem_swizzle_from_elements, r"number of elements"),
    ("ch08.smem_layout", "swizzle from the other mode", smem_swizzle_from_other_mode, r"other mode's extent"),
    ("ch08.smem_layout", "k atom for an mn major tile", smem_major_swapped, r"-major, but the tile is"),
    ("ch08.smem_layout", "tiling order swapped", smem_order_swapped, r"wrong order"),
    ("ch08.smem_layout", "order 0 1 for both majors", smem_always_order_0_1, r"wrong order"),
    ("ch08.smem_layout", "always the 32 byte swizzle", smem_smallest_swizzle, r"32-byte swizzle where"),
    ("ch08.smem_layout", "no stage mode", smem_without_stages, r"no stage mode"),
    ("ch08.tma_plan", "whole b tile per cta", tma_whole_b_per_cta, r"each CTA loads 1/2 of B"),
    ("ch08.tma_plan", "expects only its own share of b", tma_expects_own_share_only, r"all of B arrives"),
    ("ch08.tma_plan", "expect tx in elements", tma_expects_elements, r"bytes, not elements"),
    ("ch08.tma_plan", "two bytes per element hard coded", tma_two_bytes_hard_coded, r"hard-coded as 2 bytes"),
    ("ch08.tma_plan", "a divided instead of b", tma_divides_a_not_b, r"divide B's box, not A's"),
    ("ch08.tma_plan", "boxes written k first", tma_boxes_k_first, r"follow the tensors' modes"),
    ("ch08.tma_plan", "expects only a's bytes", tma_expects_a_only, r"only A's bytes"),
    ("ch08.stage_count", "a kib of 1000 bytes", stages_kib_as_1000, r"KiB is 1024 bytes"),
    ("ch08.stage_count", "228 kib", stages_228_kib, r"228 KiB is the SM's"),
    ("ch08.stage_count", "b tile forgotten", stages_without_b, r"counted only A's"),
    ("ch08.stage_count", "mbarriers forgotten", stages_without_barriers, r"8-byte mbarriers"),
    ("ch08.stage_count", "width taken as bytes", stages_width_as_bytes, r"width is in bits"),
    ("ch08.stage_count", "epilogue counted despite reuse", stages_epilogue_always_counted, r"costs no extra"),
    ("ch08.stage_count", "epilogue forgotten without reuse", stages_epilogue_never_counted, r"needs its own"),
    ("ch08.mbarrier_phases", "producer starts at parity 0", phases_producer_starts_at_parity_0,
     r"deadlock.*wrong phase|wrong phase"),
    ("ch08.mbarrier_phases", "consumer starts at parity 1", phases_consumer_starts_at_parity_1, r"wrong phase"),
    ("ch08.mbarrier_phases", "parity never flipped", phases_never_flipped, r"wrong phase"),
    ("ch08.mbarrier_phases", "parity flipped every k tile", phases_flipped_every_k_tile, r"wrong phase"),
    ("ch08.mbarrier_phases", "producer never waits on empty", phases_producer_never_waits,
     r"stage reused before its consumer released it"),
    ("ch08.mbarrier_phases", "consumer never releases", phases_consumer_never_releases,
     r"deadlock.*arrive that never comes"),
    ("ch08.mbarrier_phases", "released before the mma", phases_release_before_mma,
     r"stage reused before its consumer released it.*before it has read"),
    ("ch08.mbarrier_phases", "plain arrive without bytes", phases_plain_arrive_without_bytes,
     r"read before landed|plain arrive"),
    ("ch08.mbarrier_phases", "stage index never wraps", phases_stage_never_wraps, r"does not exist.*wraps"),
    ("ch08.wgmma_main_loop", "no fence", loop_without_fence, r"without a warpgroup.fence"),
    ("ch08.wgmma_main_loop", "releases the current stage", loop_releases_the_current_stage,
     r"released while a wgmma still reads it"),
    ("ch08.wgmma_main_loop", "no commit group", loop_without_commit_group,
     r"still reads it.*commit_group|counts only groups closed with commit_group"),
    ("ch08.wgmma_main_loop", "wait group 0 in the loop", loop_waits_for_every_group, r"tensor cores idle"),
    ("ch08.wgmma_main_loop", "no wait group 0 at the end", loop_without_final_wait, r"still running when the loop ends"),
    ("ch08.wgmma_main_loop", "stages never released", loop_never_releases, r"deadlock.*released once"),
    ("ch08.wgmma_main_loop", "wait group before the wgmma", loop_waits_before_the_wgmma,
     r"released while a wgmma still reads it"),
]
