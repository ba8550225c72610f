# make book   set up .venv (if needed) with the trl extra and build the book into _book/
# make test   set up .venv (if needed), lint the code with ruff, type-check it with mypy, train the book's missing runs and compute its facts one per core, run the test suite (strict: a law of the book that fails is a failure)
# make test-fast  the engine's own tests (tests/unit/core, record, book): under a minute, catches a broken core function
# make test-unit  the unit tests only (tests/unit): no trained run, a few minutes
# make readme-figure  redraw docs/workshop.png, the README's figure, from the seed-0 base run
# make clean  remove the built book and the executed notebooks (not .venv, not the run cache)

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch is installed first, at the version pyproject.toml pins, so that nothing
# later asks for a newer (and, on Linux, CUDA-sized) build. TORCH_PIP_ARGS
# passes extra pip options for that one install, e.g. an index of CPU wheels.
TORCH := $(shell sed -n 's/^ *"\(torch==[^"]*\)".*/\1/p' pyproject.toml)
TORCH_PIP_ARGS ?=
# make test, make test-fast and make test-unit run on this many pytest-xdist
# workers, a test file to a worker (its tests in order). The browser tests'
# whole-book build runs once, in the first worker that needs it; the others
# load the same cached runs beside it without waiting (a cached run is read
# without its lock).
TEST_WORKERS ?= 2

.PHONY: book test test-fast test-unit clean setup readme-figure

# The book is built with the TRL appendix: the trl extra is installed, pinned so that
# torch stays the CPU build (a build without it leaves the appendix out and says so).
book: setup $(VENV)/.installed-trl
	$(BIN)/rlbook build

# The suite checks the chapters' claims on every run the book uses; training the
# missing ones and computing the chapters' facts first, one per core, is faster
# than the suite doing it one after another (a no-op when the cache is warm).
test: setup
	$(BIN)/ruff check rlbook tests
	$(BIN)/ruff format --check rlbook tests
	$(BIN)/mypy
	RLBOOK_PROGRESS=0 OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m rlbook.book.prefetch
	RLBOOK_STRICT=1 $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The engine, the run record and the facts machinery: the quickest loop while changing code.
test-fast: setup
	$(BIN)/python -m pytest -q -x -n $(TEST_WORKERS) --dist loadfile tests/unit/core tests/unit/record tests/unit/book

# The package's own tests, none of which needs a trained run.
test-unit: setup
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile tests/unit

readme-figure: setup
	$(BIN)/python docs/readme_figure.py

setup: $(VENV)/.installed

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/python pyproject.toml
	@test -n "$(TORCH)" || { echo "no torch==VERSION pin found in pyproject.toml"; exit 1; }
	$(BIN)/python -m pip install "$(TORCH)" $(TORCH_PIP_ARGS)
	$(BIN)/python -m pip install -e ".[dev]"
	touch $@

$(VENV)/.installed-trl: $(VENV)/.installed constraints-trl.txt
	$(BIN)/python -m pip install -c constraints-trl.txt -e ".[trl]"
	touch $@

clean:
	rm -rf _book _build
