"""Hide CuTeDSL from every Python process started with this folder on PYTHONPATH, so the course runs as it
does for a learner on a Mac (nvidia-cutlass-dsl has no macOS wheels): `import cutlass` fails and
`importlib.util.find_spec("cutlass")` is None, in the notebook kernel and in every subprocess the checks
start (they inherit PYTHONPATH). nvidia-cutlass-dsl's .pth file puts the folder holding `cutlass` on
sys.path at start-up; this takes it off again. cutekit's simulator still works: `cutekit.use("sim")` puts
its own `cutlass` modules in sys.modules, which are never looked up on sys.path."""
import sys

MARK = "dsl_packages"        # nvidia_cutlass_dsl/dsl_packages holds cutlass, cutlass_dsl and _mlir

sys.path[:] = [p for p in sys.path if not p.rstrip("/\\").endswith(MARK)]
for name in [n for n in sys.modules if n.split(".")[0] in ("cutlass", "cutlass_dsl", "_mlir")]:
    del sys.modules[name]
