# Two commands for readers: `make book` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TORCH_INDEX := https://download.pytorch.org/whl/cpu

# The reference numerics (README, "Reproducibility"): every recipe below runs under them.
include numerics.env
REFERENCE_SETTINGS := $(shell sed -n 's/^\([A-Z_][A-Z0-9_]*\)=.*/\1/p' numerics.env)
export $(REFERENCE_SETTINGS)

.PHONY: setup lint test test-fast-paths fingerprint book execute pretrain pretrain-check browser-test bench bench-smoke lock clean

# The reference environment: the exact versions and hashes of requirements.lock
$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# The lock pins torch==2.13.0+cpu, which PyPI does not host: first try the machine's own indexes
	@# (a local wheel, a mirror), then add PyTorch's CPU index
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock 2>$(VENV)/pip-first-try.log \
	  || { echo "Installing from this machine's package indexes failed ($(VENV)/pip-first-try.log says why);"; \
	       echo "trying again with PyTorch's CPU index added ($(TORCH_INDEX)), where torch==2.13.0+cpu lives"; \
	       $(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock --extra-index-url $(TORCH_INDEX); }
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)

# One linter, ruff (its rules: pyproject.toml), over the package, tests, scripts and the chapters' notebooks
lint: $(STAMP)
	$(BIN)/ruff check lmcourse tests benchmarks scripts browser_tests chapters

# Unit tests and every notebook, strict, under the reference settings (see conftest.py). The reference
# settings use one thread, so TEST_WORKERS processes share the tests, each test file (each notebook)
# whole in one of them; TEST_WORKERS=0 runs everything in this process
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

# A reader's default: without the reference settings (every library on its fastest code path)
FAST_PATHS := env $(foreach name,$(REFERENCE_SETTINGS),-u $(name)) LMCOURSE_NUMERICS=fast

# Every notebook as a reader's Jupyter runs it: no errors, and every claim holds (TEST_WORKERS notebooks at a time)
test-fast-paths: $(STAMP)
	$(FAST_PATHS) $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile chapters

# This machine's numerics fingerprint under the reference settings (compare: tests/data/)
fingerprint: $(STAMP)
	$(BIN)/python scripts/numerics_fingerprint.py

book: $(STAMP)
	$(BIN)/jupyter-book build . --all --warningiserror
	@echo "Open _build/html/index.html"

# Open every page of the built book (make book first) in headless Chromium, offline; one full-page
# screenshot per page goes to SCREENSHOTS (empty: none; CI takes none, which saves a few minutes).
# Needs Debian's chromium (apt-get install -y chromium).
SCREENSHOTS ?= _build/screenshots
browser-test: $(STAMP)
	@test -x /usr/bin/chromium || { echo "browser-test needs /usr/bin/chromium: apt-get install -y chromium"; exit 1; }
	$(BIN)/pytest browser_tests --screenshots="$(SCREENSHOTS)"

# Refresh committed outputs under the reference settings, stopping at a claim that does not hold
# (through benchmarks/notebook_client.py: nbconvert's client can stall on widget cells):
# make execute NB=chapters/01_pretraining.ipynb (all chapters, section notebooks such as 06b_ included, without NB)
NB ?= $(sort $(wildcard chapters/[0-9][0-9]*_*.ipynb))
execute: $(STAMP)
	LMCOURSE_PROGRESS=0 LMCOURSE_CLAIMS=strict $(BIN)/python -m benchmarks.notebook_client $(NB)

# The course's pretrained checkpoints (lmcourse/checkpoints): rebuild them, two at a time, under the
# reference settings (ELMo's biLM about 40 minutes of one core, GPT about 22, BERT and ELECTRA about
# 15 each; about 55 minutes on 2 cores), or rebuild and compare with the shipped hashes
pretrain: $(STAMP)
	LMCOURSE_PROGRESS=0 $(BIN)/python -m lmcourse.pretrain elmo electra & pid=$$!; \
	LMCOURSE_PROGRESS=0 $(BIN)/python -m lmcourse.pretrain bert gpt || status=1; wait $$pid || status=1; exit $${status:-0}

pretrain-check: $(STAMP)
	LMCOURSE_PROGRESS=0 $(BIN)/python -m lmcourse.pretrain --check elmo electra & pid=$$!; \
	LMCOURSE_PROGRESS=0 $(BIN)/python -m lmcourse.pretrain --check bert gpt || status=1; wait $$pid || status=1; exit $${status:-0}

# Race the course against its peers (see benchmarks/README.md) on the fast paths, as readers
# run it; bench also refreshes the Performance page. Leave the machine idle meanwhile.
bench: $(STAMP)
	$(FAST_PATHS) $(BIN)/python -m benchmarks.run --save; status=$$?; $(BIN)/python scripts/performance_page.py; exit $$status

bench-smoke: $(STAMP)
	$(FAST_PATHS) $(BIN)/python -m benchmarks.run --smoke

# Re-pin requirements.lock to the newest versions that requirements.txt allows (takes minutes)
lock: $(STAMP)
	$(BIN)/python -m pip install --quiet pip-tools
	$(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --no-header \
		--no-annotate --no-emit-index-url --no-emit-find-links -o $(VENV)/lock.txt requirements.txt
	{ grep '^#' requirements.lock; grep -v '^-e ' $(VENV)/lock.txt; } > requirements.lock.new
	mv requirements.lock.new requirements.lock

clean:
	rm -rf _build
