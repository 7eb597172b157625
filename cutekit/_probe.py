"""Probes run by cutekit.backend in a subprocess (CuTeDSL compiles only functions whose source file it can read).

Each prints one line `CUTEKIT-PROBE {json}` and returns.
"""
import json
import sys


def cpu():
    facts = {}
    try:
        import cutlass, cutlass.cute as cute
    except Exception as e:
        print("CUTEKIT-PROBE " + json.dumps({"ok": False, "why": "import cutlass failed: %s: %s" % (type(e).__name__, e)})); return
    facts["version"] = getattr(cutlass, "__version__", "?")
    seen = []
    @cute.jit
    def traced():
        seen.append(str(cute.make_layout((4, 8), stride=(8, 1))))
    try:
        traced()
    except Exception as e:
        print("CUTEKIT-PROBE " + json.dumps({"ok": False, "why": "tracing a layout failed: %s: %s" % (type(e).__name__, e), **facts})); return
    print("CUTEKIT-PROBE " + json.dumps({"ok": seen == ["(4,8):(8,1)"], "why": "traced %r" % seen, **facts}))


def gpu():
    try:
        import torch
    except Exception as e:
        print("CUTEKIT-PROBE " + json.dumps({"ok": False, "why": "torch does not import: %s" % e})); return
    if not torch.cuda.is_available():
        print("CUTEKIT-PROBE " + json.dumps({"ok": False, "why": "torch sees no CUDA device (torch %s%s)" % (torch.__version__, "" if torch.version.cuda else ", a CPU-only build")})); return
    cc = torch.cuda.get_device_capability()
    name = torch.cuda.get_device_name()
    facts = {"device": name, "capability": "%d.%d" % cc}
    if cc < (8, 0):
        print("CUTEKIT-PROBE " + json.dumps({"ok": False, "why": "%s is sm_%d%d; CuTeDSL kernels here need sm_80 (Ampere) or newer" % (name, cc[0], cc[1]), **facts})); return
    try:
        import cutlass, cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack
        @cute.kernel
        def k(x: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            x[tidx] = x[tidx] + cutlass.Float32(1.0)
        @cute.jit
        def launch(x: cute.Tensor):
            k(x).launch(grid=(1, 1, 1), block=(32, 1, 1))
        t = torch.zeros(32, device="cuda")
        launch(from_dlpack(t))
        torch.cuda.synchronize()
        ok = bool((t == 1).all())
        print("CUTEKIT-PROBE " + json.dumps({"ok": ok, "why": "tiny kernel %s" % ("ran" if ok else "gave wrong values"), **facts}))
    except Exception as e:
        print("CUTEKIT-PROBE " + json.dumps({"ok": False, "why": "a tiny CuTeDSL kernel failed: %s: %s" % (type(e).__name__, str(e)[:300]), **facts}))


if __name__ == "__main__":
    {"cpu": cpu, "gpu": gpu}[sys.argv[1]]()
