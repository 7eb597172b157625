"""`cute.nvgpu.OperandMajorMode`: which mode of an MMA operand is contiguous in memory (K, or M/N)."""
from enum import Enum


class OperandMajorMode(Enum):
    MN = 0
    K = 1

    def __str__(self):
        return f"OperandMajorMode.{self.name}"
