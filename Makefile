# Two commands for readers: `make book` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup test book execute browser-test bench bench-smoke clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

setup: $(STAMP)

test: $(STAMP)
	$(BIN)/pytest

book: $(STAMP)
	$(BIN)/jupyter-book build . --all --warningiserror
	@echo "Open _build/html/index.html"

# Open every page of the built book (make book first) in headless Chromium, offline; screenshots
# go to _build/screenshots. Needs Debian's chromium (apt-get install -y chromium).
browser-test: $(STAMP)
	@test -x /usr/bin/chromium || { echo "browser-test needs /usr/bin/chromium: apt-get install -y chromium"; exit 1; }
	$(BIN)/pytest browser_tests

# Refresh a notebook's committed outputs: make execute NB=chapters/01_pretraining.ipynb
execute: $(STAMP)
	LMCOURSE_PROGRESS=0 $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=600 $(NB)

# Race the course against its peers (see benchmarks/README.md); bench also refreshes the
# Performance page. Leave the machine idle meanwhile.
bench: $(STAMP)
	$(BIN)/python -m benchmarks.run --save; status=$$?; $(BIN)/python scripts/performance_page.py; exit $$status

bench-smoke: $(STAMP)
	$(BIN)/python -m benchmarks.run --smoke

clean:
	rm -rf _build
