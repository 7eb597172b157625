"""The operands CuTeDSL 4.8.1 accepts in `cute.copy` and `cute.gemm`, checked before the simulator moves a value.

Real CuTeDSL refuses ill-matched operands while it compiles a kernel: some in Python (the checks at the top
of `cute.copy` and `cute.gemm` in cutlass/cute/algorithm.py), some in its MLIR verifier ("'cute.copy' op
expects same size in rank 0 ..."), and some only by aborting the whole process inside the compiler: an
ldmatrix or cp.async copy whose destination is not grouped per instruction (an MMA fragment passed where
its retiled view belongs) ends in `LLVM ERROR: Failed to infer result type(s): "cute.crd2idx"`. The
simulator refuses the same operands, by the same rules, with a message that says what is wrong and what to
write instead. The rules were read off CuTeDSL by compiling accepted and refused pairs for sm_80 on the CPU;
tests/sim/test_copy_gemm_operands.py puts the same pairs to both.

cute.copy(atom, src, dst), in CuTeDSL's order (the "first mode" is one thread's values per copy step):
  1. the element types have the same width (a copy moves bits; it does not convert);
  2. src and dst have the same rank;
  3. the modes after the first hold the same number of copy steps (their sizes' product);
  4. if both first modes are pairs (values of one instruction, instructions), they make the same number of
     instructions (the pairs' second modes have one size); otherwise the first modes have one size;
  5. ldmatrix reads shared memory into registers, cp.async global memory into shared memory;
  6. ldmatrix and cp.async only: a pair as the source's first mode needs a pair as the destination's (the
     compiler walks both by the source's grouping), and a source first mode of rank 3 or more is refused;
  7. a universal copy of more bits than one element moves `n` elements at once: both tensors' first `n`
     elements must be consecutive in memory (stride 1), counted over the whole tensor.

cute.gemm(mma, d, a, b, c), fragments (V, M, K), (V, N, K), (V, M, N) or fewer modes:
  1. a and b have the same rank, c and d too; rank(a) 1: rank(c) at most 2, 2: 2 or 3, 3: 3;
  2. warp MMAs (mma.sync): a has rank 2 or 3 and d rank 3; A, B, C and D are registers; A and B have the
     MMA's input type and D its accumulator type; A's M and D's M, B's N and D's N, A's K and B's K agree;
  3. the universal FMA: A and C have the same element type.

Where CuTeDSL compiles operands that the instruction cannot use as they are (an MMA fragment or ldmatrix
destination holding fewer values than the instruction reads or writes, fragments whose M, N or K disagree
for the FMA) the simulator cannot run the instruction either, and says so in the same way.
"""
from __future__ import annotations

import ast
import linecache
import sys

from ...cute.inttuple import CuteError, fmt, is_tuple, product
from ...cute.layout import Layout, coalesce
from ...cute.nvgpu.common import CopyUniversalOp
from ...cute.nvgpu.cpasync import CopyG2SOp
from ...cute.nvgpu.warp import LdMatrix8x8x16bOp
from ..machine import threads
from ..machine.threads import KernelError


class OperandError(KernelError, CuteError):
    """cute.copy or cute.gemm was given operands that CuTeDSL refuses to compile."""


# --------------------------------------------------------------------------------------------- shapes

def _rank(shape) -> int:
    return len(shape) if is_tuple(shape) else 1


def _mode(shape, i):
    return shape[i] if is_tuple(shape) else shape


def _size(shape) -> int:
    return product(shape)


def _rest_size(shape) -> int:
    """The copy steps: the product of the modes after the first (1 for a one-mode tensor)."""
    return product(shape[1:]) if is_tuple(shape) else 1


def _is_pair(shape) -> bool:
    return is_tuple(shape) and len(shape) == 2


def contiguous_run(layout: Layout) -> int:
    """How many elements, from the first, sit at consecutive offsets (stride 1) in `layout`.

    >>> from cutekit.cute import make_layout
    >>> contiguous_run(make_layout(((2, 2), 2), stride=((1, 2), 8))), contiguous_run(make_layout((4, 2), stride=(2, 1)))
    (4, 1)
    """
    flat = coalesce(layout)
    shape, stride = (flat.shape[0], flat.stride[0]) if is_tuple(flat.shape) else (flat.shape, flat.stride)
    return shape if stride == 1 or shape == 1 else 1


# --------------------------------------------------------------------------------------------- the call

def _call_arguments(name: str) -> list:
    """The source text of each argument of the learner's `cute.<name>(...)` call being run (empty when the
    source cannot be read): a message can then name the learner's own tensors."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(threads._OWN_FILES):
        frame = frame.f_back
    if frame is None:
        return []
    try:
        positions = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        first, last, start, end = positions
        lines = [linecache.getline(frame.f_code.co_filename, n, frame.f_globals) for n in range(first, last + 1)]
        if not lines or start is None or end is None:
            return []
        lines[-1] = lines[-1][:end]
        lines[0] = lines[0][start:]
        call = ast.parse("".join(lines).strip(), mode="eval").body
    except (SyntaxError, ValueError, IndexError, TypeError, AttributeError):   # no co_positions before 3.11
        return []
    if not isinstance(call, ast.Call) or not (getattr(call.func, "attr", None) == name
                                              or getattr(call.func, "id", None) == name):
        return []
    return [ast.unparse(argument) for argument in call.args]


def _argument(texts: list, i: int, fallback: str) -> str:
    return texts[i] if i < len(texts) else fallback


def _split_slice(text: str) -> tuple:
    """`tCrA[None, None, k]` -> ("tCrA", "[None, None, k]"); anything else -> (text, "")."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text, ""
    if isinstance(node, ast.Subscript):
        base = ast.unparse(node.value)
        return base, ast.unparse(node)[len(base):]
    return text, ""


# --------------------------------------------------------------------------------------------- copy

_ACCEPTED_COPIES: set = set()


def _copy_kind(atom) -> str:
    if isinstance(atom.op, LdMatrix8x8x16bOp):
        return "ldmatrix"
    if isinstance(atom.op, CopyG2SOp):
        return "cp.async"
    return "universal"


def _atom_name(atom) -> str:
    op = atom.op
    if isinstance(op, LdMatrix8x8x16bOp):
        return f"ldmatrix x{op.num_matrices}{' (transposed)' if op.transpose else ''}"
    bits = atom.value_type.width * _values(atom.layout_src_tv)
    if isinstance(op, CopyG2SOp):
        return f"cp.async ({bits}-bit)"
    return f"universal copy ({bits}-bit)" if isinstance(op, CopyUniversalOp) else str(op).splitlines()[0]


def _values(tv: Layout) -> int:
    return _size(tv.shape[1]) if is_tuple(tv.shape) else 1


def check_copy(atom, src, dst):
    """Refuse (OperandError) what CuTeDSL refuses in `cute.copy(atom, src, dst)`; remembered per operand
    layouts, so the check costs a set lookup once a kernel's copy has passed it."""
    key = (atom.op, atom.value_type, atom.layout_src_tv, atom.layout_dst_tv, src.layout, dst.layout,
           src.element_type, dst.element_type, src.storage.space, dst.storage.space)
    if key in _ACCEPTED_COPIES:
        return
    problem = copy_problem(atom, src, dst)
    if problem is None:
        if len(_ACCEPTED_COPIES) > 65536:
            _ACCEPTED_COPIES.clear()
        _ACCEPTED_COPIES.add(key)
        return
    raise OperandError(problem(_call_arguments("copy")))


def copy_problem(atom, src, dst):
    """None when CuTeDSL compiles `cute.copy(atom, src, dst)`; else a function of the call's argument texts
    that writes the message."""
    kind, name = _copy_kind(atom), _atom_name(atom)
    s_shape, d_shape = src.layout.shape, dst.layout.shape
    s_type, d_type = src.element_type, dst.element_type

    def texts(arguments):
        return (_argument(arguments, 0, "the copy"), _argument(arguments, 1, "the source"),
                _argument(arguments, 2, "the destination"))

    # 1. element widths (CuTeDSL: TypeError in Python)
    if s_type is not None and d_type is not None and s_type.width != d_type.width:
        def message(arguments):
            copy_, source, destination = texts(arguments)
            return (f"cute.copy: the source {source} holds {s_type} ({s_type.width}-bit) values and the "
                    f"destination {destination} {d_type} ({d_type.width}-bit): a copy moves bits, it does not "
                    f"convert. Copy into registers of the source's type and convert those: "
                    f"`frag = cute.make_fragment_like({source})`, `cute.copy({copy_}, {source}, frag)`, then "
                    f"`{destination}.store(frag.load().to({d_type}))`. (CuTeDSL refuses it: \"`copy` currently "
                    f"only supports equal source and destination element type bit width\")")
        return message

    # 2. ranks (CuTeDSL: ValueError in Python)
    if _rank(s_shape) != _rank(d_shape):
        def message(arguments):
            copy_, source, destination = texts(arguments)
            return (f"cute.copy: the source {source} has {_rank(s_shape)} modes {fmt(s_shape)} but the "
                    f"destination {destination} has {_rank(d_shape)} {fmt(d_shape)}; both must have the same "
                    f"modes: (values per copy step, copy steps...). Partition both with the same thread slice "
                    f"of {copy_} (partition_S / partition_D, or retile for registers) and slice them the same "
                    f"way, e.g. `[None, None, k]` on both. (CuTeDSL refuses it: \"Expected source and "
                    f"destination tensors to have the same rank, but got {_rank(s_shape)} and {_rank(d_shape)}\")")
        return message

    # 3. copy steps: the modes after the first (CuTeDSL: ValueError in Python)
    if _rest_size(s_shape) != _rest_size(d_shape):
        def message(arguments):
            copy_, source, destination = texts(arguments)
            return (f"cute.copy: the modes after the first are the copy steps: the source {source} "
                    f"{fmt(s_shape)} has {_rest_size(s_shape)} and the destination {destination} {fmt(d_shape)} "
                    f"has {_rest_size(d_shape)}. Partition both with the same thread slice of {copy_} and "
                    f"slice them the same way, so every step has a source and a destination. (CuTeDSL refuses "
                    f"it: \"Expected source and destination tensors to have the same size in mode-1, but got "
                    f"{_rest_size(s_shape)} and {_rest_size(d_shape)}\")")
        return message

    # 4. the first mode: (values of one instruction, instructions) or values (CuTeDSL's MLIR verifier)
    s_v, d_v = _mode(s_shape, 0), _mode(d_shape, 0)
    if _is_pair(s_v) and _is_pair(d_v):
        if _size(s_v[1]) != _size(d_v[1]):
            def message(arguments):
                copy_, source, destination = texts(arguments)
                return (f"cute.copy: the first mode is (values of one {name}, instructions): the source "
                        f"{source} has {fmt(s_v)}, {_size(s_v[1])} instruction(s), the destination "
                        f"{destination} has {fmt(d_v)}, {_size(d_v[1])}. Partition the destination with the "
                        f"same thread slice of {copy_} (partition_D), or for registers pass "
                        f"`{copy_}.retile(fragment)`. (CuTeDSL refuses it: \"'cute.copy' op expects same size "
                        f"in restAtomVRank, but got srcShape: ({fmt(s_v)},({_rest_size(s_shape)})) and "
                        f"dstShape: ({fmt(d_v)},({_rest_size(d_shape)}))\")")
            return message
    elif _size(s_v) != _size(d_v):
        def message(arguments):
            copy_, source, destination = texts(arguments)
            return (f"cute.copy: the first mode holds one thread's values per copy step: {_size(s_v)} in the "
                    f"source {source} {fmt(s_v)} but {_size(d_v)} in the destination {destination} {fmt(d_v)}. "
                    f"Partition both with the same thread slice of {copy_} (`thr = {copy_}.get_slice(tidx)`, "
                    f"`thr.partition_S(...)`, `thr.partition_D(...)`; registers: `thr.retile(fragment)` or "
                    f"`cute.make_fragment_like(thr.partition_S(...))`). (CuTeDSL refuses it: \"'cute.copy' op "
                    f"expects same size in rank 0 but got srcShape: ({fmt(s_v)},({_rest_size(s_shape)})) and "
                    f"dstShape: ({fmt(d_v)},({_rest_size(d_shape)}))\")")
        return message

    # 5. where the instruction reads and writes (CuTeDSL's verifier)
    spaces = {"ldmatrix": ("smem", "rmem", "reads shared memory into registers",
                           "src needs be shared based memref and dst needs be reg based memref"),
              "cp.async": ("gmem", "smem", "copies global memory into shared memory",
                           "src expects global based memref" if src.storage.space != "gmem" else
                           "dst expects shared based memref")}
    if kind in spaces and (src.storage.space, dst.storage.space) != spaces[kind][:2]:
        def message(arguments):
            copy_, source, destination = texts(arguments)
            return (f"cute.copy: {name} {spaces[kind][2]}; the source {source} is {src.storage.describe()} and "
                    f"the destination {destination} is {dst.storage.describe()}. (CuTeDSL refuses it: "
                    f"\"{spaces[kind][3]}\")")
        return message

    # 6. ldmatrix and cp.async walk the destination by the source's grouping (CuTeDSL's compiler aborts)
    if kind in ("ldmatrix", "cp.async"):
        if _rank(s_v) > 2:
            def message(arguments):
                copy_, source, destination = texts(arguments)
                return (f"cute.copy: the source {source}'s first mode {fmt(s_v)} has {_rank(s_v)} modes; a "
                        f"{name} copy needs it as (values of one instruction, instructions), which is what "
                        f"`{copy_}.get_slice(tidx).partition_S(...)` gives. (CuTeDSL cannot compile it: the "
                        f"compiler aborts with \"LLVM ERROR: Failed to infer result type(s): cute.crd2idx\")")
            return message
        if _is_pair(s_v) and not _is_pair(d_v):
            per_instruction = _values(atom.layout_dst_tv)
            want = f"({per_instruction},{fmt(s_v[1])})"

            def message(arguments):
                copy_, source, destination = texts(arguments)
                crash = (f"(CuTeDSL cannot compile it: the compiler aborts with \"LLVM ERROR: Failed to infer "
                         f"result type(s): cute.crd2idx ((_,0)) on {fmt(d_v)}\")")
                if kind == "ldmatrix":
                    base, cut = _split_slice(destination)
                    return (f"cute.copy: pass the retiled view, `{copy_}.retile({base}){cut}`, as the destination. "
                            f"{destination} is grouped the MMA's way (first mode {fmt(d_v)}), but the {name} "
                            f"source {source} is grouped per instruction, {fmt(s_v)} = (values of one "
                            f"instruction, instructions), and the destination must be too: {want}. retile gives "
                            f"the same registers in that grouping (`tXrA = thr_copy.retile(tCrA)` once, then "
                            f"`tXrA{cut or '[...]'}`). {crash}")
                return (f"cute.copy: partition the destination with the same thread slice, "
                        f"`{copy_}.get_slice(tidx).partition_D(...)`. {destination}'s first mode {fmt(d_v)} is not "
                        f"grouped per {name} instruction like the source {source}'s, {fmt(s_v)} = (values of one "
                        f"instruction, instructions); it must be {want}. {crash}")
            return message

    if kind == "ldmatrix":
        reads, writes = _values(atom.layout_src_tv), _values(atom.layout_dst_tv)
        if (_is_pair(s_v) and _size(s_v[0]) != reads) or (_is_pair(d_v) and _size(d_v[0]) != writes) \
                or _size(s_v) % reads or _size(d_v) % writes or _size(s_v) // reads != _size(d_v) // writes:
            def message(arguments):
                copy_, source, destination = texts(arguments)
                return (f"cute.copy: one {name} instruction reads {reads} values per thread and writes "
                        f"{writes}; the source {source} gives {fmt(s_v)} and the destination {destination} "
                        f"{fmt(d_v)} per copy step. Partition the source with "
                        f"`{copy_}.get_slice(tidx).partition_S(...)` and pass the registers retiled, "
                        f"`{copy_}.retile(fragment)`. (CuTeDSL 4.8.1 compiles this, but the instruction then "
                        f"reads or writes registers outside the tensor; the simulator stops.)")
            return message
    elif _size(s_shape) != _size(d_shape):
        def message(arguments):
            copy_, source, destination = texts(arguments)
            return (f"cute.copy: the source {source} {fmt(s_shape)} has {_size(s_shape)} elements and the "
                    f"destination {destination} {fmt(d_shape)} {_size(d_shape)}. Partition both with the same "
                    f"thread slice of {copy_}. (CuTeDSL 4.8.1 compiles this, but the copy then reads or writes "
                    f"outside one of the tensors; the simulator stops.)")
        return message

    # 7. a universal copy of n elements at once needs n consecutive elements in both tensors
    if kind == "universal":
        vector = _values(atom.layout_src_tv)
        if vector > 1:
            for which, tensor, text_index in (("source", src, 1), ("destination", dst, 2)):
                run = contiguous_run(tensor.layout)
                if run < vector:
                    def message(arguments, which=which, tensor=tensor, text_index=text_index, run=run):
                        copy_ = _argument(arguments, 0, "the copy")
                        text = _argument(arguments, text_index, f"the {which}")
                        bits = vector * atom.value_type.width
                        return (f"cute.copy: {name} moves {vector} consecutive {atom.value_type} values at once, "
                                f"but the {which} {text} {tensor.layout} has {run} consecutive element(s) from "
                                f"its start. Copy fewer bits at a time (make the atom with num_bits_per_copy="
                                f"{run * atom.value_type.width if run > 1 else atom.value_type.width}), or lay the "
                                f"{which} out so that its first {vector} values are contiguous (stride 1). "
                                f"(CuTeDSL refuses it: \"'cute.copy' op "
                                f"'!cute_nvgpu.atom.universal_copy<{atom.value_type.mlir_type}, {bits} b>' cannot "
                                f"vectorize copy to {vector} elements (static strides must be 1)\")")
                    return message
    return None


# --------------------------------------------------------------------------------------------- gemm

_ACCEPTED_GEMMS: set = set()


def gemm_profile(a_rank: int, c_rank: int) -> str:
    """CuTeDSL's dispatch of cute.gemm by the ranks of A and C: "V" (V)x(V)=>(V), "MN" (M)x(N)=>(M,N),
    "MNK" (M,K)x(N,K)=>(M,N), "VMN" (V,M)x(V,N)=>(V,M,N), "VMNK" (V,M,K)x(V,N,K)=>(V,M,N)."""
    if a_rank == 1:
        return "V" if c_rank == 1 else "MN"
    if a_rank == 2:
        return "MNK" if c_rank == 2 else "VMN"
    return "VMNK"


def extents(shape, profile: str, operand: str) -> tuple:
    """(V, X, Y) sizes of a fragment under the dispatch `profile` (X, Y: M or N and K for A and B, M and N
    for C and D)."""
    sizes = [_size(m) for m in shape] if is_tuple(shape) else [_size(shape)]
    if profile == "V":
        return sizes[0], 1, 1
    if profile == "MN":
        return (1, sizes[0], 1) if operand in "AB" else (1, sizes[0], sizes[1])
    if profile == "MNK":
        return 1, sizes[0], sizes[1]
    if profile == "VMN":
        return (sizes[0], sizes[1], 1) if operand in "AB" else (sizes[0], sizes[1], sizes[2])
    return sizes[0], sizes[1], sizes[2]


def check_gemm(mma, d, a, b, c):
    """Refuse (OperandError) what CuTeDSL refuses in `cute.gemm(mma, d, a, b, c)` (and what no MMA can
    run); returns the dispatch profile (see `gemm_profile`). Remembered per operand layouts."""
    key = (mma.op, d.layout, a.layout, b.layout, c.layout, d.element_type, a.element_type, b.element_type,
           c.element_type, d.storage.space, a.storage.space, b.storage.space, c.storage.space)
    if key in _ACCEPTED_GEMMS:
        return gemm_profile(_rank(a.layout.shape), _rank(c.layout.shape))
    problem = gemm_problem(mma, d, a, b, c)
    if problem is None:
        if len(_ACCEPTED_GEMMS) > 65536:
            _ACCEPTED_GEMMS.clear()
        _ACCEPTED_GEMMS.add(key)
        return gemm_profile(_rank(a.layout.shape), _rank(c.layout.shape))
    raise OperandError(problem(_call_arguments("gemm")))


def gemm_problem(mma, d, a, b, c):
    """None when CuTeDSL compiles `cute.gemm(mma, d, a, b, c)` and the simulator can run it; else a function
    of the call's argument texts that writes the message."""
    shapes = {"A": a.layout.shape, "B": b.layout.shape, "C": c.layout.shape, "D": d.layout.shape}
    ranks = {k: _rank(v) for k, v in shapes.items()}
    warp = product(mma.thr_id.shape) > 1
    names = {"D": 1, "A": 2, "B": 3, "C": 4}

    def text(arguments, operand):
        return _argument(arguments, names[operand], operand)

    def refuse(what: str, fix: str, cutedsl: str | None):
        def message(arguments):
            said = (f" (CuTeDSL refuses it: \"{cutedsl}\")" if cutedsl else
                    " (CuTeDSL 4.8.1 compiles this, but the instruction then reads or writes registers outside "
                    "the fragments; the simulator stops.)")
            return "cute.gemm: " + what(arguments) + " " + fix + said
        return message

    sig = "cute.gemm(tiled_mma, tCrC, tCrA, tCrB, tCrC)"
    fragments = ("Pass the fragments of one thread slice: `thr = tiled_mma.get_slice(tidx)`, "
                 "`tCrA = tiled_mma.make_fragment_A(thr.partition_A(sA))` (B and C likewise), sliced the same "
                 f"way, as in `{sig}`.")
    if ranks["A"] != ranks["B"]:
        return refuse(lambda t: f"A {text(t, 'A')} has {ranks['A']} modes {fmt(shapes['A'])} but B {text(t, 'B')} "
                      f"has {ranks['B']} {fmt(shapes['B'])}; A and B must have the same modes.", fragments,
                      "`a` and `b` must have the same rank")
    if ranks["C"] != ranks["D"]:
        return refuse(lambda t: f"C {text(t, 'C')} has {ranks['C']} modes {fmt(shapes['C'])} but D {text(t, 'D')} "
                      f"has {ranks['D']} {fmt(shapes['D'])}.", "Accumulate in place: pass the same accumulator "
                      f"as D and C, `{sig}`.", "`c` and `d` must have the same rank")
    allowed = {1: (1, 2), 2: (2, 3), 3: (3,)}.get(ranks["A"], ())
    if ranks["A"] in (1, 2, 3) and ranks["C"] not in allowed:
        said = {1: "`c` must have rank <= 2 when `a` has rank 1", 2: "`c` must have rank 2 or 3 when `a` has rank 2",
                3: "`c` must have rank 3 when `a` has rank 3"}[ranks["A"]]
        return refuse(lambda t: f"A {text(t, 'A')} {fmt(shapes['A'])} has {ranks['A']} modes, so C {text(t, 'C')} "
                      f"{fmt(shapes['C'])} must have {' or '.join(map(str, allowed))}: (V,M,K) x (V,N,K) => (V,M,N).",
                      fragments, said)
    if ranks["A"] > 3 or (warp and ranks["A"] < 2):
        return refuse(lambda t: f"A {text(t, 'A')} {fmt(shapes['A'])} has {ranks['A']} modes; a fragment is "
                      f"(V, M, K) or (V, M).", fragments,
                      f"'cute.gemm' op expects rank 2 or 3 for A, but got: {ranks['A']}")
    profile = gemm_profile(ranks["A"], ranks["C"])
    if warp and ranks["D"] != 3:
        return refuse(lambda t: f"with fragments (V, M) x (V, N) the accumulators are (V, M, N); D "
                      f"{text(t, 'D')} {fmt(shapes['D'])} has {ranks['D']} modes.", fragments,
                      f"'cute.gemm' op expects rank 3 for D, but got: {ranks['D']}")
    ab, _, acc = mma.op.operand_dtypes
    if warp:
        spaces = {k: t.storage.space for k, t in (("A", a), ("B", b), ("C", c), ("D", d))}
        if any(space != "rmem" for space in spaces.values()):
            where = ", ".join(f"{k} {t.storage.describe()}" for k, t in (("A", a), ("B", b), ("C", c), ("D", d))
                              if t.storage.space != "rmem")
            return refuse(lambda t: f"mma.sync works on registers only; here {where}.",
                          "Make register fragments (`tiled_mma.make_fragment_A(thr.partition_A(sA))`, "
                          "`make_fragment_C(thr.partition_C(gC))`) and copy to and from them.",
                          "'cute.gemm' op expects rmem for input operands" if spaces["C"] == "rmem" or
                          any(spaces[k] != "rmem" for k in "ABD") else
                          "NVVM backend compilation failed")
        if a.element_type is not b.element_type:
            return refuse(lambda t: f"A {text(t, 'A')} holds {a.element_type} but B {text(t, 'B')} holds "
                          f"{b.element_type}.", f"Both must be {ab}: make them with tiled_mma.make_fragment_A/B.",
                          f"'cute.gemm' op expects A/B of the same type (mixed integer signedness is allowed), but "
                          f"got A: '{a.element_type.mlir_type}', B: '{b.element_type.mlir_type}'")
        if a.element_type is not ab:
            return refuse(lambda t: f"this MMA multiplies {ab}, but A {text(t, 'A')} and B hold {a.element_type}.",
                          f"Make A and B {ab} (tiled_mma.make_fragment_A/B), or an MMA of the type you have.",
                          f"'cute.gemm' op expects A/B of type {ab.mlir_type}, but got A: '{a.element_type.mlir_type}'")
        if d.element_type is not acc:
            return refuse(lambda t: f"this MMA accumulates in {acc}, but D {text(t, 'D')} holds {d.element_type}.",
                          f"Make the accumulators with tiled_mma.make_fragment_C(...) ({acc}); convert to "
                          f"{d.element_type} after the loop (`.load().to({d.element_type})`).",
                          f"'cute.gemm' op expects D of type {acc.mlir_type}, but got '{d.element_type.mlir_type}'")
    elif a.element_type is not None and c.element_type is not None and a.element_type is not c.element_type:
        return refuse(lambda t: f"the FMA computes in A's type, {a.element_type}, but C {text(t, 'C')} holds "
                      f"{c.element_type}.", f"Make A, B and the accumulators one type ({ab}), as "
                      "tiled_mma.make_fragment_A/B/C do.", "NVVM backend compilation failed (libNVVM: Failed "
                      "creating the llvm::Module)")
    va, xa, ya = extents(shapes["A"], profile, "A")
    vb, xb, yb = extents(shapes["B"], profile, "B")
    vc, xc, yc = extents(shapes["C"], profile, "C")
    vd, xd, yd = extents(shapes["D"], profile, "D")
    if xa != xd or xb != yd:
        said = "'cute.gemm' op expects A's M == D'M and B's N == D'N" if warp else None
        return refuse(lambda t: f"A {text(t, 'A')} {fmt(shapes['A'])} has M = {xa} and B {text(t, 'B')} "
                      f"{fmt(shapes['B'])} N = {xb}, but D {text(t, 'D')} {fmt(shapes['D'])} is M = {xd} by "
                      f"N = {yd}.", fragments + " Slice A and B only in K (`[None, None, k]`).", said)
    if ya != yb:
        said = "'cute.gemm' op expects A's K == B's K" if warp else None
        return refuse(lambda t: f"A {text(t, 'A')} {fmt(shapes['A'])} has K = {ya} but B {text(t, 'B')} "
                      f"{fmt(shapes['B'])} has K = {yb}.", "Slice A and B at the same k-block, "
                      "`tCrA[None, None, k]` with `tCrB[None, None, k]`.", said)
    if (vc, xc, yc) != (vd, xd, yd):
        return refuse(lambda t: f"C {text(t, 'C')} {fmt(shapes['C'])} and D {text(t, 'D')} {fmt(shapes['D'])} "
                      "differ in shape.", f"Accumulate in place: pass the same accumulators as D and C, `{sig}`.",
                      None)
    want = {"A": _values(mma.tv_layout_A), "B": _values(mma.tv_layout_B), "C": _values(mma.tv_layout_C)}
    for operand, v in (("A", va), ("B", vb), ("C", vc)):
        if v != want[operand]:
            return refuse(lambda t, operand=operand, v=v: f"one {fmt(mma.shape_mnk)} MMA reads {want[operand]} "
                          f"values of {operand} per thread, but the first mode of {text(t, operand)} "
                          f"{fmt(shapes[operand])} holds {v}.", fragments, None)
    return None
