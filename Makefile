# The two commands of the README:
#   make book   create the environment, execute every chapter, write the HTML book to _build/html/
#   make test   lint, unit tests, the machinery's tests, every chapter executed twice (the build's
#               execution, and nbval's, which compares every text output with it), strict builds
#               and the checks of the built book (ARCHITECTURE.md, "What make test runs")
# Needed beforehand (README.md, "What you need"): Python 3.11, make, and Node's npm (the browser
# assets); `make test` also needs Debian's chromium and chromium-driver, which it installs when
# run as root. Everything else installs into .venv from requirements.txt, and the browser
# assets (MathJax) into node_modules from package-lock.json.
# The machinery is the booktools package (python -m booktools.<tool>), installed with rnnlib.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
export PYTHONHASHSEED := 0
# The thread policy (ARCHITECTURE.md, "Threads"): threads come from the environment, never
# from code. Every process make starts (pytest, benchmarks) reads OMP_NUM_THREADS; the
# kernels of booktools.execute get one thread each (--threads), whatever JOBS.
export OMP_NUM_THREADS ?= 1
# notebooks executed at once (booktools.execute), one thread each
JOBS       ?= 2
# pages the browser check opens at once (one Chromium each), and so cores it keeps busy
BROWSER_WORKERS ?= 2
# what `make lint` formats-checks and lints
RUFF_PATHS ?= .

# The environment is (re)built when requirements.txt or pyproject.toml change.
ENV_STAMP := $(VENV)/.installed

.PHONY: vendor strip book test env unit tools-test lint executions book-strict cache-check bench clean nbval

env: $(ENV_STAMP)

# The venv's own pip installs (no upgrade of it first), without compiling to bytecode as it
# goes (one core); compileall then compiles every module on all the cores. Keep the compiling:
# where PYTHONDONTWRITEBYTECODE is set (as on this project's machines) nothing else writes the
# .pyc files, and each kernel would compile torch again (9 s of CPU instead of 4). Excluded:
# Python 3.12 syntax in torch's test helpers (pip skips it too), and the packages' own test
# suites (tests/ and test/ folders, 30 of the 68 MB of source; 13 of 76 s of CPU), which
# nothing imports, except music21's, which `import music21` loads.
$(ENV_STAMP): requirements.txt pyproject.toml package.json package-lock.json booktools/assets/ipywidgets_offline.js
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed, found " + sys.version' \
		|| { echo "set PYTHON=python3.11 (make PYTHON=python3.11 ...)"; exit 1; }
	@command -v npm >/dev/null 2>&1 || { echo "npm is needed for the book's browser assets (MathJax): install Node.js (Debian: apt-get install npm)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile -r requirements.txt
	$(PY) -m compileall -q -j 0 -x '(/py312_intrinsics\.py$$|^(?!.*/music21/).*/tests?/)' $(VENV)/lib
	$(PY) -m pip install --quiet --no-deps -e .
	@# pip installed torch's pinned version; a CUDA wheel of it would pass pip too: the book's is the CPU build
	$(PY) -c 'import sys, torch; sys.exit(f"torch {torch.__version__} is a CUDA build; requirements.txt pins the CPU build" if torch.version.cuda else None)'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	$(MAKE) --no-print-directory vendor
	@touch $@

# The browser assets the book serves itself (no CDN: the HTML works with no network), from
# node_modules (package-lock.json) into _extra/_vendor, which Sphinx's html_extra_path serves as
# _build/html/_vendor (not html_static_path: Jupyter Book would add every .js and .css under a
# static path to every page). Only what pages load: MathJax's tex-chtml component with the
# modules it loads lazily, RequireJS, and the ipywidgets embed manager (embed-amd.js and the
# fonts beside it), which replace the CDN scripts myst-nb adds (nb_ipywidgets_js); and the
# book's own booktools/assets/ipywidgets_offline.js.
VENDOR := _extra/_vendor
WIDGETS := node_modules/@jupyter-widgets/html-manager/dist
vendor:
	rm -rf $(VENDOR)
	mkdir -p $(VENDOR)/mathjax $(VENDOR)/requirejs $(VENDOR)/jupyter-widgets
	cp -R node_modules/mathjax/es5/tex-chtml.js $(addprefix node_modules/mathjax/es5/,input output ui a11y) $(VENDOR)/mathjax/
	cp node_modules/requirejs/require.js $(VENDOR)/requirejs/
	cp -R $(WIDGETS) $(VENDOR)/jupyter-widgets/html-manager
	find $(VENDOR)/jupyter-widgets/html-manager \( -name 'embed.js' -o -name 'embed.js.*' -o -name 'libembed-amd.js' -o -name '*.map' \) -delete
	cp booktools/assets/ipywidgets_offline.js $(VENDOR)/jupyter-widgets/offline.js

# Strip the chapters (or NB=...) of outputs and execution counts, as they are stored
# (CONTRIBUTING.md); cell ids are kept (nbstripout's default renumbers them). The check that
# none holds outputs is tests/test_repo.py.
NB ?= chapters/*.ipynb
strip: env
	$(PY) -m nbstripout --keep-id $(NB)

# jupyter-cache keys executed notebooks on their code only: wipe it whenever the
# library or the pins change, so a page never shows outputs of an older rnnlib.
cache-check: env
	@$(PY) -m booktools.cache_key _build student/_build

# The chapters are executed into the cache JOBS at a time; the build renders from the cache.
book: cache-check
	$(PY) -m booktools.execute --jobs $(JOBS) book
	$(BIN)/jupyter-book build --keep-going .
	$(PY) -m booktools.portable --edition book --install --no-execute >/dev/null
	@echo
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# `make test`: first the environment and the browser, side by side (pip and apt-get); then
# every step in one make run, two at a time (make -j2; the executions step and nbval each
# have their own JOBS kernels), each step as soon as what it reads is there, the longest
# chain first (make starts the goals in the order given):
#   the executions (book and student, one pool) at once, and beside them the machinery's
#   tests, the unit tests and lint;
#   after the executions: nbval (each chapter again, compared), the strict book build and
#   the student edition's build (both render from the caches);
#   after the builds: the checks of the built books (the browser check, BROWSER_WORKERS pages at once)
#   and of the portable notebooks (booktools.portable --check).
# With IN_TEST=1 the steps that read executions wait for the executions step instead of
# executing what is missing themselves. No step compares a time with a threshold: the
# execution times are reported (exec-times), the budget is `make bench`'s (booktools/budget.py).
PHASE := --no-print-directory -j2 --output-sync=target
test:
	$(MAKE) $(PHASE) env browser-deps
	$(MAKE) $(PHASE) IN_TEST=1 executions tools-test unit lint records-smoke nbval book-strict browser-check student student-check exec-times built-checks portable-check

# In `make test` (IN_TEST=1) the steps that read executions wait for the one executions step.
EXEC_DEP    = $(if $(IN_TEST),executions,cache-check)
BUILD_DEP   = book-strict
STUDENT_DEP = student

# Recorded runs (ARCHITECTURE.md, "Recorded runs"): `make record CH=11` runs a chapter's full
# experiment and writes chapters/records/chNN.json (config, results, provenance, fingerprint),
# which the chapter reads and checks; DEVICE=cuda trains on a GPU (the fingerprint stays on
# the CPU). records-smoke, a step of `make test`, runs every record command at a size of
# seconds into a temporary folder, never over a committed record.
RECORD_CHAPTERS := 05 06 07 11
.PHONY: record records-smoke
record: env
	@test -n "$(CH)" || { echo "usage: make record CH=NN [DEVICE=cuda] (chapters with a record: $(RECORD_CHAPTERS))"; exit 2; }
	$(PY) -m rnnlib.experiments.ch$(CH) --record --jobs $(JOBS) $(if $(DEVICE),--device $(DEVICE))

records-smoke: env
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	for ch in $(RECORD_CHAPTERS); do \
		$(PY) -m rnnlib.experiments.ch$$ch --smoke --out "$$tmp/ch$$ch.json" >/dev/null || exit 1; \
		echo "record command of chapter $$ch: smoke run passed"; \
	done

# Format and lint (ruff, configured in pyproject.toml; notebooks included).
lint: env
	$(BIN)/ruff format --check $(RUFF_PATHS)
	$(BIN)/ruff check $(RUFF_PATHS)

# The library's tests: no Jupyter kernel, no browser.
unit: env
	$(PY) -m pytest tests -n $(JOBS) -p no:cacheprovider

# The machinery's tests (booktools/tests): they start kernels and Chromium. The tests of
# built pages ("built_") run in built-checks, after the builds.
tools-test: env browser-deps
	$(PY) -m pytest booktools/tests -k "not built_" -p no:cacheprovider --durations=10

# The executions that the builds render, in one pool of JOBS workers: each chapter for the
# book (cached), and each student notebook (cached): a student notebook that is its
# chapter's cells followed by stubs takes those cells' outputs from the chapter's execution
# and runs only its install cell and stubs (ARCHITECTURE.md). The builds and the checks
# only read them; nbval executes each chapter once more.
executions: cache-check student-notebooks
	$(PY) -m booktools.execute --jobs $(JOBS) book student

# nbval, the notebook check: each chapter executed again in a fresh kernel, every text output
# compared cell by cell with the build's execution of it (exported from the jupyter-cache by
# booktools.nbval_notebooks), what legitimately varies masked by booktools/nbval_sanitize.cfg;
# a differing or failing cell is a pytest failure that shows the cell and both outputs.
# One chapter: make nbval NB=chapters/05_sgd.ipynb (it executes the chapter for the book
# first if the cache lacks it). JOBS chapters at once (pytest-xdist), one thread each (as the
# book's executions have with JOBS=2 on two cores). nbval's kernels, its cell limit and its
# waits come from booktools.records (WAITS), through the plugin booktools.nbval_notebooks;
# NBVAL_CELL_TIMEOUT=... overrides the cell limit.
nbval: $(EXEC_DEP)
	$(if $(IN_TEST),,$(PY) -m booktools.execute --jobs $(JOBS) book $(if $(NB),--only $(NB)))
	$(PY) -m booktools.nbval_notebooks --out _build/nbval $(NB)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
	$(PY) -m pytest -p no:cacheprovider -p booktools.nbval_notebooks --nbval --nbval-current-env \
		--nbval-sanitize-with booktools/nbval_sanitize.cfg $(if $(NBVAL_CELL_TIMEOUT),--nbval-cell-timeout $(NBVAL_CELL_TIMEOUT)) \
		$(if $(NB),,-n $(JOBS) --dist loadfile) _build/nbval

# Strict build (-W -n: any warning, broken reference or failing cell fails it).
book-strict: $(EXEC_DEP)
	$(if $(IN_TEST),,$(PY) -m booktools.execute --jobs $(JOBS) book)
	$(BIN)/jupyter-book build -W -n --keep-going .

# Reliability checks of the built book (README.md, "Reliability checks"), run by `make test`
# after the strict build.
.PHONY: browser-deps browser-check exec-times

# Chromium and chromedriver come from Debian's packages, installed here (as root, as in CI) if
# absent; `make book` does not need them. Not root and absent: one line says what to install.
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
		if [ "$$(id -u)" != 0 ]; then echo "make test needs chromium and chromedriver (the browser check): sudo apt-get install -y chromium chromium-driver"; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
	fi

# Every built page in headless Chromium with no network: math typeset, images loaded, no console
# errors, title and headings present, nothing wider than the column. Screenshots: _build/html/_screenshots/index.html.
browser-check: $(BUILD_DEP) browser-deps
	$(PY) -m booktools.browser_check --workers $(BROWSER_WORKERS) _build/html

# Each chapter's execution time (wall, kernel CPU on one thread, CPU in units of the reference
# workload measured in the same run, where the wall time went), as the appendix "Execution
# times" shows it: a report, with warnings for a stall or a chapter over budget, never a failure
# on a time (booktools/budget.py: a test command must pass on a busy machine). `make bench`
# enforces the budget.
exec-times: $(BUILD_DEP)
	$(PY) -m booktools.exec_times _build

# The tests that read built pages (launch links of the book, no solutions in the student
# edition) run after both builds, where a missing page fails them.
.PHONY: built-checks
built-checks: $(BUILD_DEP) $(STUDENT_DEP) $(if $(IN_TEST),portable-check)
	RNNLIB_REQUIRE_BUILD=1 $(PY) -m pytest booktools/tests -k "built_" -p no:cacheprovider

# Homework (CONTRIBUTING.md, "Exercises"; chapters/instructor_guide.md).
.PHONY: student student-notebooks student-check grade

# The student edition: the chapters with stubs instead of solutions, in student/ (gitignored).
student-notebooks: env
	$(PY) -m booktools.student_edition

# Its notebooks executed once (errors allowed: the stubs raise; the chapters' outputs reused where
# the book's cache has them), and its HTML built from that execution.
student: student-notebooks $(EXEC_DEP)
	$(if $(IN_TEST),,$(PY) -m booktools.execute --jobs $(JOBS) student)
	$(BIN)/jupyter-book build -W -n --keep-going student
	@echo
	@echo "The student edition is at $(CURDIR)/student/_build/html/index.html (notebooks in student/chapters/)"

# Every student notebook runs, and raises only the NotImplementedError of its own stubs
# (graded from the execution the student edition's HTML shows, not executed again).
student-check: $(STUDENT_DEP)
	$(PY) -m booktools.grade --expect-stubs --executed student/_build student/chapters/*.ipynb

# One score per exercise of a completed notebook: make grade NB=path/to/notebook.ipynb
# A class at once: make grade SUBMISSIONS=folder [OUT=folder_grades], in parallel (one process
# and kernel per submission), into OUT/gradebook.csv, canvas.csv, gradescope.csv, grades.json,
# feedback/ and answers/; STUDENT=name regrades one student into that gradebook (points and
# late policy: booktools/grading.yml; chapters/instructor_guide.md, "Grading").
grade: env
	@if [ -n "$(SUBMISSIONS)" ]; then \
		$(PY) -m booktools.grade --class "$(SUBMISSIONS)" $(if $(OUT),--out "$(OUT)") \
			$(if $(STUDENT),--student "$(STUDENT)"); \
	elif [ -n "$(NB)" ]; then \
		$(PY) -m booktools.grade "$(NB)"; \
	else \
		echo "usage: make grade NB=path/to/notebook.ipynb, or make grade SUBMISSIONS=folder [OUT=folder] [STUDENT=name]"; exit 2; \
	fi

# PDFs of the two editions (LaTeX through jupyter-book's pdflatex builder; needs TeX Live:
# apt-get install texlive-xetex texlive-latex-extra texlive-fonts-recommended latexmk
# texlive-plain-generic texlive-science texlive-fonts-extra fonts-freefont-otf; the LaTeX class of
# jupyter-book needs bbm.sty, from texlive-fonts-extra). Not part of `make test`.
.PHONY: pdf student-pdf
pdf: cache-check
	$(PY) -m booktools.execute --jobs $(JOBS) book
	$(BIN)/jupyter-book build --builder pdflatex --keep-going .
	@echo "The instructor edition's PDF is $(CURDIR)/_build/latex/book.pdf"

student-pdf: student-notebooks cache-check
	$(PY) -m booktools.execute --jobs $(JOBS) student
	$(BIN)/jupyter-book build --builder pdflatex --keep-going student
	@echo "The student edition's PDF is $(CURDIR)/student/_build/latex/book.pdf"

# The chapters in JupyterLab with their MyST and math rendered (jupyterlab-myst; README.md,
# "Running the chapters yourself"): reader copies in lab/ (booktools.lab). STUDENT=1: the student edition.
# PORTABLE=1: the portable copies instead (portable/, plain Markdown: what Colab or VS Code shows).
.PHONY: lab
lab: env $(if $(STUDENT),student-notebooks) $(if $(PORTABLE),cache-check)
	$(PY) -m booktools.lab $(if $(STUDENT),--student) $(if $(PORTABLE),--portable)

# Portable copies of the chapters (booktools.portable; README.md, "Running the chapters yourself"):
# plain Markdown that any notebook front end renders (Colab, VS Code, classic Jupyter), with the
# glued numbers of the build's execution (chapters the cache lacks are executed first), in
# portable/book/ and portable/student/, then each rendered by nbconvert and checked in headless
# Chromium (no raw MyST, every formula typeset). BASE_URL=... links into the published book.
.PHONY: portable portable-check
portable: student-notebooks cache-check
	$(PY) -m booktools.portable --check --jobs $(JOBS) $(if $(BASE_URL),--base-url $(BASE_URL))

# The folder to publish at student_edition.repository_url (what the student edition's launch
# buttons and install cells open): the portable student notebooks and the package.
.PHONY: student-repository
student-repository: portable
	$(PY) -m booktools.student_edition --repository-folder $(or $(REPO),student/_repository)

# In `make test`: the portable copies of both editions made from the test's own executions
# and builds, rendered by a front end that knows no MyST, checked in Chromium, then served by
# each built edition's "download .ipynb" (--install; built-checks reads them after).
portable-check: $(BUILD_DEP) $(STUDENT_DEP)
	$(PY) -m booktools.portable --check --install --jobs $(JOBS)

# Benchmarks print speed ratios; they are not tests (timings depend on the machine). The first
# two lines are the chapters' budget: the reference workload here, and the last build's
# executions in its units (fails over budget; make book first).
bench: env
	$(PY) -m booktools.records
	$(PY) -m booktools.exec_times --enforce _build
	$(PY) benchmarks/bench_elman.py
	$(PY) benchmarks/bench_pseudo.py
	$(PY) benchmarks/bench_truncation.py
	$(PY) benchmarks/bench_truncation_memory.py
	$(PY) benchmarks/bench_train.py --threads 1
	$(PY) benchmarks/bench_ntk.py

# Everything a build or a test run leaves behind (the environment .venv and node_modules stay;
# student/ is generated whole by make student).
clean:
	rm -rf _build student .pytest_cache booktools/tests/.pytest_cache .hypothesis .ruff_cache
	find . \( -path ./.venv -o -path ./node_modules \) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -prune -exec rm -rf {} +
