"""The memory floor: storage, tensors and values of the simulated GPU.

lanes.py: values that differ between the threads of a vectorized launch; printing.py: how tensors and values
print; numbers.py: DSL numbers (`cutlass.Int32(5)` in host code); tensors.py: storage, tensors, every access
checked (bounds, races, bank requests); vector.py: a large launch run as NumPy vectors over those tensors;
structs.py: shared memory (the block's allocations, SmemAllocator, `cute.struct`, pointers).
"""
