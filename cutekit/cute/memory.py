"""What CuTeDSL keeps in `cutlass.memory` for tensor memory on the host side: the number of TMEM columns to
allocate (`get_num_tmem_alloc_cols`, which CuTeDSL 4.8.1 moved here from `cutlass.utils.blackwell_helpers`,
where the old name still works but warns that it is deprecated)."""
from math import ceil, log2

from .nvgpu.tcgen05 import find_tmem_tensor_col_offset

MAX_COLUMNS = {"sm_100": 512, "sm_103": 512}      # 128 lanes x 512 columns of 32 bits per SM
MIN_COLUMNS = 32


def get_num_tmem_alloc_cols(tmem_tensors, rounding=True, *, arch="sm_100"):
    """TMEM columns to allocate for `tmem_tensors` (one or a list): the columns each spans, summed, rounded up
    to a power of two of at least 32 (tcgen05.alloc's rule); more than 512 is refused (ValueError)."""
    if arch not in MAX_COLUMNS:
        raise ValueError(f"get_num_tmem_alloc_cols: cutekit knows the TMEM of {sorted(MAX_COLUMNS)}, not {arch!r}")
    tensors = tmem_tensors if isinstance(tmem_tensors, (list, tuple)) else [tmem_tensors]
    total = sum(find_tmem_tensor_col_offset(t) for t in tensors)
    if rounding:
        total = max(1 << ceil(log2(total)), MIN_COLUMNS)
    if total > MAX_COLUMNS[arch] or total < MIN_COLUMNS:
        raise ValueError(f"TMEM allocation columns {total} exceeds the maximum capacity of {MAX_COLUMNS[arch]} or "
                         f"less than {MIN_COLUMNS}")
    return total
