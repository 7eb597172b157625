# CuTe by Hand. The two commands: `make lab` and `make test`.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
WHEELHOUSE ?=
JOBS ?= 2
# Without a GPU, CuTeDSL compiles for sm_80 on the CPU; with one (nvidia-smi present) it targets the GPU it finds.
ifeq ($(shell command -v nvidia-smi 2>/dev/null),)
export CUTE_DSL_ARCH ?= sm_80
endif

.PHONY: setup lab test test-deep test-fast gpu-test bench sync clean distclean doctor progress help conformance
.PHONY: conformance-atoms conformance-blackwell differential
.PHONY: test-hub pull-link image

help:
	@echo "make lab    set up .venv and open the course in JupyterLab (127.0.0.1)"
	@echo "make test   set up .venv and run every test, nbval over every notebook included"
	@echo "make test-deep  make test over the wide sweeps: every seed 0-99, the long CuTeDSL samples, every notebook in the browser"
	@echo "make test-fast  unit tests only (no notebooks, no slow suites)"
	@echo "make gpu-test  real CuTeDSL kernels on an sm_80+ GPU vs torch (skips with one line without one)"
	@echo "make bench  time every course kernel against torch (GPU); table, CSV and plot under results/"
	@echo "make sync   regenerate course/ (and every notebook) from the chapter sources solutions/NN_topic.py"
	@echo "            (and the reference of CuTeDSL names, solutions/90_reference.py, from the chapters)"
	@echo "make doctor which tiers this machine offers"
	@echo "make conformance [CASES=200000 SEED=0]  cutekit.cute against CuTeDSL on random layout-algebra cases"
	@echo "make conformance-atoms [ATOM_CASES=4000 SEED=0]  the same on TiledCopys and TiledMMAs of the Ampere atoms"
	@echo "make conformance-blackwell [BLACKWELL_CASES=3000 SEED=0]  the same on sm_100 MMAs, TMEM and TMA (sm_100a)"
	@echo "make differential [DIFF_CASES=2000 SEED=0]  the simulator against CuTeDSL and the PTX ISA on generated kernels"
	@echo "make test-hub  a real JupyterHub on 127.0.0.1: three learners, their checks, the room's report"
	@echo "make pull-link HUB=https://hub.example.org REPO=<git URL> [BRANCH=student]  the nbgitpuller link for learners"
	@echo "make image IMAGE=REGISTRY/cute-by-hand:TAG REPO=<git URL>  a cluster's CPU and GPU images (repo2docker), pushed"
	@echo "make clean  remove caches and build output (keeps .venv); make distclean also removes .venv"
	@echo "make student    the student bundle (course without solutions, cutekit, env files) in build/student, + zip"
	@echo "make student-branch [BRANCH=student]  the student bundle committed as a branch (for the hub and pull link)"
	@echo "make site       the learners' site: the course notebooks executed, as static HTML, in build/site (offline)"
	@echo "make site-instructor  the same from the solutions (the answers shown), in build/site-instructor"
	@echo "make wheelhouse every wheel the course needs in build/wheelhouse (or WHEELHOUSE=dir), for offline labs"

setup:
	@command -v $(PY) >/dev/null 2>&1 || { echo "setup: no '$(PY)' on PATH: install Python 3.10-3.13 and run 'make PY=python3.11 ...'" >&2; exit 2; }
	@$(PY) scripts/setup_env.py --venv $(VENV) $(if $(WHEELHOUSE),--wheelhouse $(WHEELHOUSE))

lab: setup
	cd course && ../$(VPY) -m jupyterlab --ip=127.0.0.1 --ServerApp.root_dir=. $(if $(filter 0,$(shell id -u)),--allow-root)

# Course notebooks run as a learner sees them (unsolved exercises say "not yet"); solution notebooks run
# strict, so a check that fails on its own solution fails the build. Progress files are not written.
PYTEST := CUTEKIT_PROGRESS=off $(VPY) -m pytest -n $(JOBS) --dist loadfile --timeout 900 -p no:cacheprovider

# The browser test runs on its own after the rest: beside a busy worker, JupyterLab's kernel start races.
# The course notebooks run with CuTeDSL hidden (as on a Mac, where it has no wheels); the solutions with it.
# The three notebook runs check different things, so all three stay (the first two in one pytest run, each
# notebook's kernel started with its folder's environment by tests/notebook_env.py): course/ under nbval is what a learner
# runs (blank answers say "not answered", the simulator stands in for CuTeDSL); solutions/ strict is every
# model answer earning every point of every tier this machine has (cutedsl-cpu included); the browser is
# JupyterLab's front end (every cell, every explorer's sliders; make test: chapter 00 and the first notebook
# of each kind of explorer, make test-deep: all). tests/test_chapters_in_cutedsl.py is no fourth run: it
# replays the chapters' cutekit calls in real CuTeDSL and compiles their kernels.
# The compiles of the course's kernels with real CuTeDSL run in processes of their own: the simulator's test
# kernels install cutekit.use("sim") when collected, and CuTeDSL cannot be imported twice in one process.
COMPILE_TESTS := tests/test_kernels_compile_cpu.py tests/test_hopper_gemm_compile_cpu.py tests/test_teaching_kernels_compile_cpu.py
test: setup
	$(PYTEST) tests --ignore=tests/e2e $(foreach t,$(COMPILE_TESTS),--ignore=$(t))
	$(PYTEST) $(COMPILE_TESTS)
	$(PYTEST) -p tests.notebook_env course solutions --nbval-lax --nbval-current-env
	CUTEKIT_PROGRESS=off $(VPY) -m pytest --timeout 900 -p no:cacheprovider tests/e2e

# cutekit.cute against real CuTeDSL on CASES random cases (make test runs a 2,000-case sample, make test-deep 5,000).
CASES ?= 200000
SEED ?= 0
conformance: setup
	$(VPY) scripts/conformance.py --cases $(CASES) --seed $(SEED)

# The TiledCopys and TiledMMAs CuTeDSL builds from the Ampere atoms, every thread's partitions included
# (make test runs a 40-case sample covering every atom and MMA of a 300-case draw, make test-deep the 300).
ATOM_CASES ?= 4000
conformance-atoms: setup
	$(VPY) scripts/conformance.py --atoms --cases $(ATOM_CASES) --seed $(SEED)

# The same suites over their wide sweeps (tests/sweep.py): every mistake on seeds 0-99, CuTeDSL asked about
# the whole Ampere atom draw, every notebook in the browser. About three times make test's time.
test-deep: export CUTEKIT_SWEEP = deep
test-deep: test

# What a Blackwell (sm_100) GEMM builds on the host (tcgen05 MMAs, TMEM, smem layouts, TMA loads), traced for
# sm_100a (make test compares a covering set, against pinned answers where CuTeDSL is absent).
BLACKWELL_CASES ?= 3000
conformance-blackwell: setup
	$(VPY) scripts/conformance.py --blackwell --cases $(BLACKWELL_CASES) --seed $(SEED)

# The simulator against real CuTeDSL (each kernel traced and compiled for sm_80 on the CPU) and the PTX ISA (an
# oracle evaluating it lane by lane) on DIFF_CASES generated kernels (make test runs a 10-case sample).
DIFF_CASES ?= 2000
differential: setup
	$(VPY) scripts/differential.py --cases $(DIFF_CASES) --seed $(SEED)

test-fast: setup
	$(VPY) -m pytest -n $(JOBS) -m "not slow" tests

# On a GPU: the GPU suite, then every solution notebook (strict) with cutekit.use("auto") choosing the GPU.
gpu-test: setup
	$(VPY) -m pytest tests/gpu -p no:cacheprovider
	@if $(VPY) -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then \
		CUTEKIT_PROGRESS=off $(VPY) -m pytest -n $(JOBS) --dist loadfile -p no:cacheprovider course --nbval-lax --nbval-current-env && \
		CUTEKIT_STRICT=1 CUTEKIT_PROGRESS=off $(VPY) -m pytest -n $(JOBS) --dist loadfile -p no:cacheprovider solutions --nbval-lax --nbval-current-env; \
	else echo "gpu-test: no CUDA GPU here, notebooks not run on the GPU tier"; fi

bench: setup
	$(VPY) benchmarks/bench.py --out results

# One source per chapter: solutions/NN_topic.py, answers between ### BEGIN SOLUTION / ### END SOLUTION.
# The reference notebook (solutions/90_reference.py) is written first, from the chapters' CuTeDSL names.
sync: setup
	$(VPY) scripts/vocabulary.py
	$(VPY) scripts/generate_course.py
	$(VPY) scripts/mistake_table.py

# Workshops on JupyterHub (deploy/README.md): the loopback hub test (also part of `make test`), and the link
# that gives learners the course and its updates.
test-hub: setup
	$(PYTEST) tests/test_hub.py tests/test_deploy.py

HUB ?=
REPO ?=
IMAGE ?=
# The branch learners get: the student bundle, published by `make student-branch` (never main: it holds the answers).
BRANCH ?= student
pull-link:
	@test -n "$(HUB)" || { echo "pull-link: give the hub's address: make pull-link HUB=https://hub.example.org REPO=<git URL of the course>" >&2; exit 2; }
	@test -n "$(REPO)" || { echo "pull-link: give the course's repository: make pull-link HUB=$(HUB) REPO=https://github.com/ORG/cute-by-hand" >&2; exit 2; }
	@$(PY) deploy/pull_link.py --hub "$(HUB)" --repo "$(REPO)" --branch "$(BRANCH)"

# A cluster's two single-user images (deploy/README.md): the student branch built by repo2docker as it is
# (CPU torch), and again with PyPI's CUDA build of torch in place of it (IMAGE-gpu); each pushed. Needed again
# only when the environment changes (environment.yml, postBuild): course and grader fixes arrive by the pull.
GPU_TORCH := torch==2.13.0
image:
	@test -n "$(IMAGE)" || { echo "image: name it with its tag: make image IMAGE=registry.example.org/cute-by-hand:2026-06 REPO=<git URL>" >&2; exit 2; }
	@case "$(lastword $(subst /, ,$(IMAGE)))" in *:*) ;; *) echo "image: IMAGE needs a tag (REGISTRY/cute-by-hand:TAG): the GPU image is TAG-gpu" >&2; exit 2;; esac
	@test -n "$(REPO)" || { echo "image: give the course's repository: make image IMAGE=$(IMAGE) REPO=https://github.com/ORG/cute-by-hand" >&2; exit 2; }
	jupyter-repo2docker --ref $(BRANCH) --no-run --user-name jovyan --image-name $(IMAGE) $(REPO)
	docker push $(IMAGE)
	jupyter-repo2docker --ref $(BRANCH) --no-run --user-name jovyan --image-name $(IMAGE)-gpu \
		--appendix 'RUN $${NB_PYTHON_PREFIX}/bin/pip uninstall -y torch && $${NB_PYTHON_PREFIX}/bin/pip install --no-cache-dir --index-url https://pypi.org/simple "$(GPU_TORCH)"' \
		$(REPO)
	docker push $(IMAGE)-gpu

doctor: setup
	$(VPY) -m cutekit doctor

progress: setup
	$(VPY) -m cutekit progress

clean:
	rm -rf .pytest_cache .hypothesis build dist *.egg-info results test-artifacts
	find . -name __pycache__ -prune -not -path './.venv/*' -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)

# ---- workshops (INSTRUCTOR.md): the student bundle, the published site, a wheelhouse for offline labs ----
.PHONY: student student-branch site site-instructor wheelhouse
SITE_CHAPTERS ?=

student: setup
	$(VPY) scripts/build_student.py --out build/student

# Commits the student bundle as the next commit of BRANCH (git plumbing: the branch checked out here is untouched).
student-branch: setup
	$(VPY) scripts/student_branch.py --branch $(BRANCH)

# Learners' site: the course notebooks (exercises unsolved). The instructor's: the solutions, answers shown.
site: setup
	$(VPY) scripts/build_site.py --source course --out build/site $(if $(SITE_CHAPTERS),--chapters $(SITE_CHAPTERS))

site-instructor: setup
	$(VPY) scripts/build_site.py --source solutions --out build/site-instructor $(if $(SITE_CHAPTERS),--chapters $(SITE_CHAPTERS))

# WHEELHOUSE_PYTHON / WHEELHOUSE_OS (linux, macos) / WHEELHOUSE_ARCH / WHEELHOUSE_GLIBC / WHEELHOUSE_MACOS / TORCH_SPEC
# choose the labs' platform (see --help); Macs get no CuTeDSL (it has no macOS wheels) and PyPI's torch.
wheelhouse:
	$(PY) scripts/wheelhouse.py --dest $(or $(WHEELHOUSE),build/wheelhouse)
