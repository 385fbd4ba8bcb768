# The two commands of the README:
#   make book   create the environment, execute every chapter, write the HTML book to _build/html/
#   make test   lint, unit tests, the machinery's tests, every chapter executed (twice: the build's
#               execution and an independent one, compared), strict builds and the checks of the
#               built book (ARCHITECTURE.md, "What make test runs")
# Everything installs into .venv from requirements.txt, and the browser assets (MathJax)
# into node_modules from package-lock.json; nothing needs to be installed by hand.
# The machinery is the booktools package (python -m booktools.<tool>), installed with rnnlib.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
export PYTHONHASHSEED := 0
export OMP_NUM_THREADS ?= 2
# notebooks executed at once (booktools.execute); each kernel gets (cores / JOBS) threads
JOBS       ?= 2
# what `make lint` formats-checks and lints
RUFF_PATHS ?= .

# The environment is (re)built when requirements.txt or pyproject.toml change.
ENV_STAMP := $(VENV)/.installed

.PHONY: book test env unit tools-test lint executions book-strict cache-check bench clean

env: $(ENV_STAMP)

$(ENV_STAMP): requirements.txt pyproject.toml package.json package-lock.json booktools/vendor_assets.py booktools/assets/ipywidgets_offline.js
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed, found " + sys.version' \
		|| { echo "set PYTHON=python3.11 (make PYTHON=python3.11 ...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	$(PY) -m booktools.vendor_assets
	@touch $@

# jupyter-cache keys executed notebooks on their code only: wipe it whenever the
# library or the pins change, so a page never shows outputs of an older rnnlib.
cache-check: env
	@$(PY) -m booktools.cache_key _build student/_build

# The chapters are executed into the cache JOBS at a time; the build renders from the cache.
book: cache-check
	$(PY) -m booktools.execute --jobs $(JOBS) book
	$(BIN)/jupyter-book build --keep-going .
	@echo
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# `make test` runs in three phases, two jobs at a time (make -j2; the executions step has its
# own pool of JOBS kernels). The budget check reads the kernels' CPU time, which work running
# beside them does not inflate (booktools/exec_times.py).
#   1. lint, unit tests, the machinery's tests, and every execution of a notebook;
#   2. the strict book build and the student edition's build (both render from the caches);
#   3. the checks of the built books (BUILT=1: they do not ask for the builds again).
PHASE := --no-print-directory -j2 --output-sync=target
test: env browser-deps
	$(MAKE) $(PHASE) lint unit tools-test executions
	$(MAKE) $(PHASE) book-strict student
	$(MAKE) $(PHASE) BUILT=1 exec-times repro-check student-check browser-check built-checks

# With BUILT=1 (phase 3 of `make test`) the checks read the builds as they are.
BUILD_DEP   = $(if $(BUILT),,book-strict)
STUDENT_DEP = $(if $(BUILT),,student)

# Format and lint (ruff, configured in pyproject.toml; notebooks included).
lint: env
	$(BIN)/ruff format --check $(RUFF_PATHS)
	$(BIN)/ruff check $(RUFF_PATHS)

# The library's tests: no Jupyter kernel, no browser.
unit: env
	$(PY) -m pytest tests

# The machinery's tests (booktools/tests): they start kernels and Chromium. The tests of
# built pages ("built_") run in built-checks, after the builds.
tools-test: env browser-deps
	$(PY) -m pytest booktools/tests -k "not built_" -p no:cacheprovider

# Every execution of a notebook that `make test` needs, in one pool of JOBS workers:
# each chapter for the book (cached), each student notebook (cached), and each chapter
# once more for repro-check. The later steps only read these executions.
executions: cache-check student-notebooks
	$(PY) -m booktools.execute --jobs $(JOBS) book student repro

# Strict build (-W -n: any warning, broken reference or failing cell fails it).
book-strict: cache-check
	$(PY) -m booktools.execute --jobs $(JOBS) book
	$(BIN)/jupyter-book build -W -n --keep-going .

# Reliability checks of the built book (README.md, "Reliability checks"), run by `make test`
# after the strict build.
.PHONY: browser-deps browser-check repro-check exec-times

# Chromium and chromedriver come from Debian's packages, installed here (as root, as in CI) if absent.
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
		if [ "$$(id -u)" != 0 ]; then echo "chromium and chromedriver are needed: sudo apt-get install -y chromium chromium-driver"; exit 1; fi; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; \
	fi

# Every built page in headless Chromium with no network: math typeset, images loaded, no console
# errors, title and headings present, nothing wider than the column. Screenshots: _build/html/_screenshots/index.html.
browser-check: $(BUILD_DEP) browser-deps
	$(PY) -m booktools.browser_check _build/html

# The build's execution of each chapter and an independent one give the same text outputs (timings aside).
repro-check: $(BUILD_DEP)
	$(PY) -m booktools.repro_check --jobs $(JOBS) _build

# Each chapter's execution time (kernel CPU seconds, one thread: < 90 s each, < 600 s in all);
# the wall times are in the book's appendix.
exec-times: $(BUILD_DEP)
	$(PY) -m booktools.exec_times _build

# The tests that read built pages (launch links of the book, no solutions in the student
# edition) run after both builds, where a missing page fails them.
.PHONY: built-checks
built-checks: $(BUILD_DEP) $(STUDENT_DEP)
	RNNLIB_REQUIRE_BUILD=1 $(PY) -m pytest booktools/tests -k "built_" -p no:cacheprovider

# Homework (CONTRIBUTING.md, "Exercises"; chapters/instructor_guide.md).
.PHONY: student student-notebooks student-check grade

# The student edition: the chapters with stubs instead of solutions, in student/ (gitignored).
student-notebooks: env
	$(PY) -m booktools.student_edition

# Its notebooks executed once (errors allowed: the stubs raise), and its HTML built from that execution.
student: student-notebooks cache-check
	$(PY) -m booktools.execute --jobs $(JOBS) student
	$(BIN)/jupyter-book build -W -n --keep-going student
	@echo
	@echo "The student edition is at $(CURDIR)/student/_build/html/index.html (notebooks in student/chapters/)"

# Every student notebook runs, and raises only the NotImplementedError of its own stubs
# (graded from the execution the student edition's HTML shows, not executed again).
student-check: $(STUDENT_DEP)
	$(PY) -m booktools.grade --expect-stubs --executed student/_build student/chapters/*.ipynb

# One score per exercise of a completed notebook: make grade NB=path/to/notebook.ipynb
grade: env
	@test -n "$(NB)" || { echo "usage: make grade NB=path/to/notebook.ipynb"; exit 2; }
	$(PY) -m booktools.grade "$(NB)"

# The chapters in JupyterLab with their MyST and math rendered (jupyterlab-myst; README.md,
# "Running the chapters yourself"): reader copies in lab/ (booktools.lab). STUDENT=1: the student edition.
.PHONY: lab
lab: env $(if $(STUDENT),student-notebooks)
	$(PY) -m booktools.lab $(if $(STUDENT),--student)

# Benchmarks print speed ratios; they are not tests (timings depend on the machine).
bench: env
	$(PY) benchmarks/bench_elman.py
	$(PY) benchmarks/bench_pseudo.py
	$(PY) benchmarks/bench_truncation.py
	$(PY) benchmarks/bench_truncation_memory.py
	$(PY) benchmarks/bench_train.py --threads 1

clean:
	rm -rf _build student/_build
