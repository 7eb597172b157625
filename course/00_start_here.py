# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: CuTe by Hand
#     language: python
#     name: cute-by-hand
# ---

# %% [markdown]
# # 00 · Start here
#
# **Why.** In CUDA you write the index arithmetic yourself: `row = blockIdx.y * TILE + threadIdx.y`,
# `A[row * lda + k]`, a bounds check, a different formula for shared memory, another for registers.
# Every kernel re-derives these formulas, and a wrong one is a silent bug. CuTe replaces them with
# *layouts*: small functions from coordinates to offsets that you compose, divide and slice, so the index
# math is written once, checked, and printed. CuTeDSL is CuTe in Python: you write the kernel in Python and
# it is compiled through MLIR (the LLVM project's compiler framework) to PTX, the same virtual instruction set
# `nvcc` makes from CUDA C++.
#
# This course teaches CuTe by making every layout visible. Each chapter follows the same path:
#
# 1. **Why**: the problem in CUDA terms.
# 2. **See it**: a picture drawn live from the layout, then CuTeDSL's printed form.
# 3. **Play**: a widget; predict, then move the slider.
# 4. **Build it up**: small executed steps; every number in the text is asserted by a cell.
# 5. **Run it**: a kernel, on your GPU or on cutekit's CPU simulator.
# 6. **Exercises**: each ends in one `check(...)` call that grades your answer.
# 7. **What to remember**.
#
# ## Tiers: what your machine can run
#
# A check runs your answer on every *tier* your machine offers and tells you which ran:
#
# | tier | what runs |
# |---|---|
# | `reference` | cutekit's own Python version of CuTe's layout algebra and a CPU simulator of kernels |
# | `cutedsl-cpu` | the real CuTeDSL compiler, on the CPU: it traces your layouts and compiles your kernels to PTX for an Ampere GPU (sm_80) without needing one |
# | `gpu` | your kernel, compiled by CuTeDSL, on an NVIDIA GPU of compute capability 8.0 or newer, compared with torch and timed |
#
# The next cell asks your machine. A missing tier says why and what to do; you can do the whole course
# with only the first two.

# %%
import cutekit

report = cutekit.doctor()
report

# %%
assert report.ok, "the reference tier must work: run `make setup` again"
TIERS = [t.name for t in report.tiers if t.available]
print("available tiers:", TIERS)


# %% [markdown]
# ## Your first kernel
#
# A CuTeDSL program has three parts, the same three a CUDA program has:
#
# 1. **Device code**, a Python function decorated with `@cute.kernel`. It runs once per thread; inside,
#    `cute.arch.thread_idx()` and `cute.arch.block_idx()` are CUDA's `threadIdx` and `blockIdx`, each a
#    triple `(x, y, z)`.
# 2. **Host code**, decorated with `@cute.jit`: it builds layouts and launches the kernel with
#    `kernel(arguments).launch(grid=[...], block=[...])`, CUDA's `kernel<<<grid, block>>>(arguments)`.
#    Each call of a `@cute.jit` function runs its Python once to trace it, then compiles what it traced,
#    together with the kernels it launches (CuTeDSL keeps compiled code in a cache, so a second call that
#    traces to the same code skips the compiling, not the tracing). `cute.compile(f, ...)` traces and
#    compiles once and hands you the compiled function, to call many times without either.
# 3. **Plain Python** that makes the data (torch tensors) and calls the host code.
#
# `cutekit.use("auto")` decides what `import cutlass` means from here on: the real CuTeDSL on an sm_80 or
# newer GPU, or cutekit's CPU simulator, which runs the very same kernel source thread by thread (and
# tells you about races, out-of-bounds accesses and bank conflicts a GPU would hide). Call it once, before
# importing `cutlass`.

# %%
backend = cutekit.use("auto")
backend

# %% [markdown]
# `cute.printf` prints from every thread, with `{}` for each value. `hello`'s arguments are annotated
# `cutlass.Constexpr`, a compile-time constant: CuTeDSL uses their Python values (here tuples) while it
# traces, so they are built into the compiled code. Run the cell: two blocks of four threads print eight
# lines.

# %%
import cutlass
import cutlass.cute as cute


@cute.kernel
def hello_kernel():
    tx, ty, tz = cute.arch.thread_idx()
    bx, by, bz = cute.arch.block_idx()
    cute.printf("block ({},{},{}) thread ({},{},{})", bx, by, bz, tx, ty, tz)


@cute.jit
def hello(grid: cutlass.Constexpr, block: cutlass.Constexpr):
    hello_kernel().launch(grid=grid, block=block)


hello((2, 1, 1), (4, 1, 1))
if backend.name == "gpu":
    import torch
    torch.cuda.synchronize()        # a GPU's printf buffer is flushed when the host waits for it

# %% [markdown]
# On a GPU the eight lines come in no fixed order: blocks run in parallel, and CUDA promises no order
# between threads' `printf`s. The simulator runs one block after another and, inside a block, one thread
# after another, with `x` varying fastest, then `y`, then `z`: the order CUDA numbers threads
# (`x + y * blockDim.x + z * blockDim.x * blockDim.y`, which is also how threads are grouped into warps of
# 32). Blocks go in the same order, `blockIdx.x` fastest. `cutekit.sim.last_launch()` keeps what the last
# simulated launch printed:

# %%
if backend.name == "sim":
    printed = cutekit.sim.last_launch().printed
    assert printed[0] == "block (0,0,0) thread (0,0,0)" and printed[5] == "block (1,0,0) thread (1,0,0)"
    assert len(printed) == 8
    print(cutekit.sim.last_launch())

# %% [markdown]
# `grid` and `block` are triples, as in CUDA's `dim3`. A grid of 1 × 2 blocks, each of 3 × 2 threads, prints
# 2 × 6 = 12 lines; on the simulator, `x` runs fastest inside each block, and block `(0,1,0)` follows block
# `(0,0,0)`:

# %%
hello((1, 2, 1), (3, 2, 1))
if backend.name == "gpu":
    torch.cuda.synchronize()
if backend.name == "sim":
    printed = cutekit.sim.last_launch().printed
    assert len(printed) == 12
    assert printed[:4] == ["block (0,0,0) thread (0,0,0)", "block (0,0,0) thread (1,0,0)",
                           "block (0,0,0) thread (2,0,0)", "block (0,0,0) thread (0,1,0)"]
    assert printed[6] == "block (0,1,0) thread (0,0,0)"

# %% [markdown]
# ## Exercise: predict what prints
#
# Write `predict(grid, block)`: the list of lines `hello(grid, block)` prints. The check asks about grids and
# blocks of one, two and three dimensions (it launches no kernel: it knows what each launch prints); any order
# is fine for most of the points, the simulator's order earns the last one. Every exercise works the same way:
# replace the placeholder under `# YOUR CODE HERE` and run the cell. Until then its check says *not attempted
# yet* (and records nothing); a wrong answer loses points with a hint naming the first case it got wrong and
# what went wrong there; run it again for fresh random cases (each result shows its random seed). When a hint
# is not enough, `hint("ch00.predict_printf")` prints the rule behind the exercise, still without its answer;
# from an exercise's third failed check on, its result reminds you that `hint` is there.

# %%
from cutekit.checks import check, hint

# %%
def predict(grid, block):
    # YOUR CODE HERE
    return None


check("ch00.predict_printf", predict)

# %% [markdown]
# ## What to remember
#
# - A layout maps coordinates to offsets; CuTe composes, divides and slices layouts so you stop writing
#   index arithmetic by hand.
# - A CuTeDSL program: `@cute.kernel` (per thread), `@cute.jit` (host, launches), plain Python (data).
# - `cutekit.use("auto")` before `import cutlass`: the GPU when you have one, the simulator otherwise.
#
# Next: **01 · Layouts**, where you draw, predict and write your first layouts.
