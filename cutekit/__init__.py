"""CuTe by Hand's helper package.

Rooms, each with one job (arrows point one way: widgets -> render -> cute; checks -> sim -> cute):
  cutekit.cute     pure-Python reference of CuTeDSL's layout algebra (mirrors cutlass.cute)
  cutekit.render   matplotlib pictures of layouts, TV layouts, divides, copies, MMAs, ldmatrix, swizzles (Figures)
  cutekit.widgets  ipywidgets explorers around cutekit.render (sliders and fields; errors shown in the widget)
  cutekit.checks   graded exercises: check(exercise_id, answer), tiers, hints, progress
  cutekit.sim      a CPU simulator that runs CuTeDSL kernels unchanged (chosen by cutekit.use("sim"))
  cutekit.backend  which tiers this machine offers (reference, CuTeDSL on the CPU, GPU)
"""
__version__ = "0.1.0"

from .backend import doctor  # noqa: E402  (stdlib-only; probes CuTeDSL in subprocesses)
from .use import use, using  # noqa: E402
