# The two commands of the README:
#   make book   create the environment, execute every chapter, write the HTML book to _build/html/
#   make test   unit tests, every chapter notebook under nbval, and a strict (-W -n) book build
# Everything installs into .venv from requirements.txt, and the browser assets (MathJax)
# into node_modules from package-lock.json; nothing needs to be installed by hand.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
export PYTHONHASHSEED := 0
export OMP_NUM_THREADS ?= 2

# The environment is (re)built when requirements.txt or pyproject.toml change.
ENV_STAMP := $(VENV)/.installed

.PHONY: book test env unit notebooks book-strict cache-check bench clean

env: $(ENV_STAMP)

$(ENV_STAMP): requirements.txt pyproject.toml package.json package-lock.json tools/vendor_assets.py tools/assets/ipywidgets_offline.js
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is needed, found " + sys.version' \
		|| { echo "set PYTHON=python3.11 (make PYTHON=python3.11 ...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	$(PY) tools/vendor_assets.py
	@touch $@

# jupyter-cache keys executed notebooks on their code only: wipe it whenever the
# library or the pins change, so a page never shows outputs of an older rnnlib.
cache-check: env
	@$(PY) tools/cache_key.py _build

book: cache-check
	$(BIN)/jupyter-book build --keep-going .
	@echo
	@echo "The book is at $(CURDIR)/_build/html/index.html"

unit: env
	$(PY) -m pytest tests

notebooks: env
	$(PY) -m pytest --nbval-lax --nbval-current-env --nbval-cell-timeout=300 chapters/

book-strict: cache-check
	$(BIN)/jupyter-book build -W -n --keep-going .

test: unit notebooks book-strict student-check exec-times browser-check repro-check built-checks

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
# errors, title and headings present. Screenshots: _build/html/_screenshots/index.html.
browser-check: book-strict browser-deps
	$(PY) tools/browser_check.py _build/html

# Each chapter executed afresh gives the same text outputs as in the book build (timings aside).
repro-check: book-strict
	$(PY) tools/repro_check.py _build

# The build's execution seconds per chapter (< 90 s each, < 600 s in all); also in the book's appendix.
exec-times: book-strict
	$(PY) tools/exec_times.py _build

# The unit tests that read built pages (launch links of the book, no solutions in the student
# edition) skip in `make unit`, which runs before any build; here they run after both builds,
# and a missing page fails them.
.PHONY: built-checks
built-checks: book-strict student
	RNNLIB_REQUIRE_BUILD=1 $(PY) -m pytest tests -k "built_" -p no:cacheprovider

# Homework (CONTRIBUTING.md, "Exercises"; chapters/instructor_guide.md).
.PHONY: student student-notebooks student-check grade

# The student edition: the chapters with stubs instead of solutions, in student/ (gitignored).
student-notebooks: env
	$(PY) tools/student_edition.py

student: student-notebooks
	@$(PY) tools/cache_key.py student/_build
	$(BIN)/jupyter-book build -W -n --keep-going student
	@echo
	@echo "The student edition is at $(CURDIR)/student/_build/html/index.html (notebooks in student/chapters/)"

# Every student notebook runs, and raises only the NotImplementedError of its own stubs.
student-check: student-notebooks
	$(PY) tools/grade.py --expect-stubs student/chapters/*.ipynb

# One score per exercise of a completed notebook: make grade NB=path/to/notebook.ipynb
grade: env
	@test -n "$(NB)" || { echo "usage: make grade NB=path/to/notebook.ipynb"; exit 2; }
	$(PY) tools/grade.py "$(NB)"

# Benchmarks print speed ratios; they are not tests (timings depend on the machine).
bench: env
	$(PY) benchmarks/bench_elman.py
	$(PY) benchmarks/bench_pseudo.py
	$(PY) benchmarks/bench_truncation.py
	$(PY) benchmarks/bench_truncation_memory.py

clean:
	rm -rf _build
