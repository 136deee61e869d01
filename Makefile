# Every target does its own set-up: a fresh clone needs nothing but python3 (3.11+) and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# Same default as crovia_spider/options.py; the environment overrides it (make crawl creates it).
export CROVIA_SIGNING_KEY_FILE ?= data/keys/signing.key

.PHONY: install crawl test demo lint bench clean need-openssl

install: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

crawl: $(STAMP)
	@test -f "$(CROVIA_SIGNING_KEY_FILE)" || $(BIN)/crovia keygen --out "$(CROVIA_SIGNING_KEY_FILE)"
	$(BIN)/scrapy crawl vendor_press

test: $(STAMP) need-openssl
	$(BIN)/python -m pytest

# The stamp tests answer RFC 3161 requests with OpenSSL's own TSA (`openssl ts -reply`).
need-openssl:
	@command -v openssl >/dev/null || { echo "openssl is missing: apt-get install -y openssl" >&2; exit 1; }

demo: $(STAMP)
	$(BIN)/python -m crovia_spider.demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
