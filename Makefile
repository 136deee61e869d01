# Every target does its own set-up: a fresh clone needs nothing but python3 (3.11+) and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# Same default as crovia_spider/options.py; the environment overrides it (make crawl creates it).
export CROVIA_SIGNING_KEY_FILE ?= data/keys/signing.key
# The browser tests drive this Chromium with Playwright (Debian's package; Playwright's own browser
# download needs the internet). `make test CHROMIUM=/path/to/chromium` uses another.
CHROMIUM ?= /usr/bin/chromium
export CROVIA_CHROMIUM := $(CHROMIUM)

.PHONY: install browser crawl test check demo lint bench clean need-openssl fuzz pywb redis lock

install: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Every package comes from requirements.lock: its version and the hashes of its files (README,
# "Dependencies"), so an install is the same whatever the registries serve that day and whatever pip
# the venv has (Debian's 23.0 too). pip checks each file's hash and that the lock holds every
# dependency it meets; the project itself goes in editable. tests/test_lock.py fails (make test,
# make check) when pyproject.toml and the lock disagree.
LOCK := requirements.lock
$(STAMP): pyproject.toml $(LOCK) | $(BIN)/python
	$(call install-lock,$(BIN),$(LOCK))
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# $(call install-lock,VENV_BIN,LOCK): the lock's setuptools first, then the whole lock with it as
# the build backend (no build isolation) of what is published as source only (surt, under wacz and
# pywb), so no build fetches an unpinned, unhashed setuptools either.
install-lock = awk '/^[a-z0-9]/ { pin = /^setuptools==/ } pin' $(2) \
	  | $(1)/python -m pip install --quiet --require-hashes --no-deps -r /dev/stdin \
	  && $(1)/python -m pip install --quiet --require-hashes --no-build-isolation -r $(2)

# Re-resolves the locks after a change of pyproject.toml (or of PYWB_REQUIREMENT), keeping every
# pin it still allows; `make lock UPGRADE=1` takes the newest of everything. Needs the network.
# Universal (every platform and Python the project allows), every file's hash, every extra, and
# the build backend (pyproject's build-system.requires).
LOCK_FLAGS = --universal --generate-hashes --python-version 3.11 --system-certs --quiet \
	--custom-compile-command 'make lock' $(if $(UPGRADE),--upgrade)
lock: $(STAMP)
	$(BIN)/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")' \
	  | $(BIN)/uv pip compile pyproject.toml - --all-extras $(LOCK_FLAGS) -o $(LOCK)
	printf '%s\n' '$(PYWB_REQUIREMENT)' 'setuptools>=68' \
	  | $(BIN)/uv pip compile - $(LOCK_FLAGS) -o $(PYWB_LOCK)

crawl: $(STAMP)
	@test -f "$(CROVIA_SIGNING_KEY_FILE)" || $(BIN)/crovia keygen --out "$(CROVIA_SIGNING_KEY_FILE)"
	$(BIN)/scrapy crawl vendor_press

# Everything, test files spread over every core (pytest-xdist; `make test PYTEST_WORKERS=1` runs
# them one by one). A skipped test fails here (CROVIA_FORBID_SKIPS): CI runs everything or says why.
# Two workers a core: many tests wait on crawls, servers and child processes, not on the CPU
# (on 2 cores: 4 min 41 s with 4 workers, 5 min 11 s with 2).
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))
test: $(STAMP) need-openssl $(CHROMIUM)
	CROVIA_FORBID_SKIPS=1 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile

# For development: lint, then the fast tests (no crawl, no command run, no browser: the tests
# conftest.py does not mark slow), in one to two minutes on 2 cores. It runs the venv's python
# itself, so it installs the venv itself too (a test holds every such target to it).
check: $(STAMP) lint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile -m "not slow" -q

browser: $(CHROMIUM)

$(CHROMIUM):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the browser tests (apt-get install chromium)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "The browser tests need Chromium at $(CHROMIUM). Install it with:"; \
	  echo "    sudo apt-get install -y chromium"; \
	  echo "or point to one: make test CHROMIUM=/path/to/chromium"; \
	  exit 1; \
	fi

# The stamp tests answer RFC 3161 requests with OpenSSL's own TSA (`openssl ts -reply`).
need-openssl:
	@command -v openssl >/dev/null || { echo "openssl is missing: apt-get install -y openssl" >&2; exit 1; }

# The page's differential test runs its scripts under Node (Debian's nodejs, no npm needed).
NODE ?= /usr/bin/node
export CROVIA_NODE := $(NODE)
test: $(NODE)

$(NODE):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's nodejs for the page's differential test (apt-get install nodejs)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs >/dev/null; \
	else \
	  echo "The page's differential test needs Node at $(NODE): sudo apt-get install -y nodejs"; \
	  exit 1; \
	fi

# The cluster tests (tests/cluster/) start their own redis-server on a loopback port (Debian's).
REDIS_SERVER ?= /usr/bin/redis-server
export CROVIA_REDIS_SERVER := $(REDIS_SERVER)
test: $(REDIS_SERVER)

redis: $(REDIS_SERVER)

$(REDIS_SERVER):
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's redis-server for the cluster tests (apt-get install redis-server)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	else \
	  echo "The cluster tests need redis-server at $(REDIS_SERVER). Install it with:"; \
	  echo "    sudo apt-get install -y redis-server"; \
	  echo "or point to one: make test REDIS_SERVER=/path/to/redis-server"; \
	  exit 1; \
	fi

# The replay test (tests/archive/test_replay.py) runs pywb from a venv of its own: pywb 2.10 pins
# pyOpenSSL<26.2, so cryptography<48, which breaks our RFC 3161 code, and redis==2.10.6.
# Locked as the project is: requirements-pywb.lock (`make lock` resolves PYWB_REQUIREMENT, and
# setuptools to build surt).
PYWB_VENV  := .venv-pywb
PYWB_STAMP := $(PYWB_VENV)/.installed-stamp
PYWB_LOCK  := requirements-pywb.lock
PYWB_REQUIREMENT := pywb>=2.10,<3
export CROVIA_PYWB_BIN := $(CURDIR)/$(PYWB_VENV)/bin
test: $(PYWB_STAMP)

pywb: $(PYWB_STAMP)

$(PYWB_STAMP): $(PYWB_LOCK)
	$(PYTHON) -m venv $(PYWB_VENV)
	$(call install-lock,$(PYWB_VENV)/bin,$(PYWB_LOCK))
	touch $@

demo: $(STAMP) need-openssl
	$(BIN)/python -m crovia_spider.demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# Each fuzz harness for FUZZ_SECONDS (make test runs them for 2 s each): docs/fuzzing.md.
FUZZ_SECONDS ?= 300
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz.run --seconds $(FUZZ_SECONDS)

clean:
	rm -rf $(VENV) $(PYWB_VENV) .pytest_cache .hypothesis build *.egg-info
