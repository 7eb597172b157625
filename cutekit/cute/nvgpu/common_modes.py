"""`cute.nvgpu.OperandMajorMode`: which mode of an MMA operand is contiguous in memory (K, or M/N); and
`tcgen05.CtaGroup` (kept here because the sm_100 TMA ops take it too): one CTA or a pair of CTAs."""
from enum import Enum


class OperandMajorMode(Enum):
    MN = 0
    K = 1

    def __str__(self):
        return f"OperandMajorMode.{self.name}"


class CtaGroup(Enum):
    """`tcgen05.CtaGroup`: an sm_100 MMA or TMA load for one CTA (ONE) or for the pair of CTAs that share
    an MMA (TWO, `.cta_group::2`)."""
    ONE = 1
    TWO = 2

    def __str__(self):
        return f"CtaGroup.{self.name}"
