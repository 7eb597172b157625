"""The architecture floor: one room per architecture, each adding what that GPU generation brings.

sm80.py (Ampere): cp.async, ldmatrix, mma.sync. sm90.py (Hopper): TMA, stmatrix, wgmma, mbarrier bookkeeping
of asynchronous copies and MMAs, elect_one, clusters of one. sm100.py (Blackwell): tensor memory, tcgen05 MMAs
issued by one thread for the CTA, tcgen05.commit, TMEM loads and stores, the TMEM allocator. A room builds on the floors below (machine, memory,
operations) and on the rooms before it; it registers what `cute.copy` and `cute.gemm` do with its atoms in the
operations floor's tables (ops/device.py) when it is imported, and lists the `cute.arch` names it adds
(CUTE_ARCH) for the face. A new architecture is a new room here, added to ROOMS.
"""
from . import sm80, sm90, sm100

ROOMS = (sm80, sm90, sm100)
