# The two commands: `make serve` and `make test` (README.md). Both install what they need.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DATA ?= data
HOST ?= 127.0.0.1
PORT ?= 8000
# Players' word reports from the page land here (`kelime reports --reports reports.sqlite`).
REPORTS ?= reports.sqlite
STAMP := $(VENV)/.installed

.PHONY: serve test install lexicon bench clean

serve: lexicon
	$(BIN)/kelime serve --data $(DATA) --host $(HOST) --port $(PORT) --reports $(REPORTS)

test: install
	$(BIN)/python -m pytest -q

install: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kelime needs Python 3.11+; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

# The offline lexicons, each built when data/ has no usable one (none yet, or one an older
# kelime wrote): `kelime check` exits 2 exactly when the lexicon cannot be used. `tr` is
# Turkish (the same on every machine: its lists come with kelime), `ku` Kurmanji.
lexicon: install
	@$(BIN)/kelime check --data $(DATA) kitap >/dev/null 2>&1; test $$? -ne 2 || \
		$(BIN)/kelime build --bootstrap --out $(DATA)
	@$(BIN)/kelime check --data $(DATA) --lexicon ku av >/dev/null 2>&1; test $$? -ne 2 || \
		$(BIN)/kelime build --bootstrap --name ku --out $(DATA)

# Speed, as ratios against baselines measured in the same run (a few minutes each).
bench: install
	$(BIN)/python benchmarks/validate.py
	$(BIN)/python benchmarks/crawl.py
	$(BIN)/python benchmarks/normalize.py
	$(BIN)/python benchmarks/anagram.py
	$(BIN)/python benchmarks/options.py
	$(BIN)/python benchmarks/reports.py
	$(BIN)/python benchmarks/load.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
