"""Shared fixtures: a feed server on 127.0.0.1 serving the project's fixture feeds.

To crawl in a test: `from tests.crawl import run_crawl` (see tests/crawl.py).

The suite is hermetic: no CROVIA_* variable of the caller's shell changes a test's outcome (issue
43, obs 9: with CROVIA_LEDGER_DIR set, `crovia pubkey` in a test read the shell's ledger). Every
CROVIA_* variable is removed from the environment when this file is loaded, before any test module
is imported, except INFRASTRUCTURE: where `make test` found the tools the tests drive, the rule
against skips and the fuzzing time. A test that wants a setting sets it (monkeypatch, or the
environment of the process it starts: tests/crawl.py). tests/test_hermetic.py holds it.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from crovia_spider.config.settings_check import HARNESS_VARIABLES
from tests.feedserver import FeedServer

# What the test infrastructure needs from `make test`: the variables the Makefile exports for its
# own run (crovia doctor knows them too: none is a setting), and the Chromium the browser tests
# and the browser captures both use.
INFRASTRUCTURE = HARNESS_VARIABLES | {"CROVIA_CHROMIUM"}
for _name in [n for n in os.environ if n.startswith("CROVIA_") and n not in INFRASTRUCTURE]:
    del os.environ[_name]

# Property tests hold what is computed, never how fast: a machine shared with the rest of the
# suite (two workers a core) runs an example past Hypothesis's 200 ms deadline now and then, which
# failed a property that holds (tests/ledger/store/test_index_rows.py). No deadline, no health
# check of speed; a test that sets its own settings keeps them.
settings.register_profile("crovia", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("crovia")

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
FEEDS = FIXTURES / "feeds"


@pytest.fixture
def feed_server() -> Iterator[FeedServer]:
    """A fresh server (no scripts, no recorded requests) serving tests/fixtures/feeds/."""
    with FeedServer(FEEDS) as server:
        yield server


@pytest.fixture(scope="module")
def module_feed_server() -> Iterator[FeedServer]:
    """One server for a whole test module, for crawls reused across several assertions."""
    with FeedServer(FEEDS) as server:
        yield server


# `make check` runs `pytest -m "not slow"`: lint and the fast tests, under a minute. A test is slow
# when it starts processes (a crawl, a `crovia` command, openssl), a server or a browser: its
# module, or the module of a fixture it uses, mentions one of these. Decided from the source, so a
# new crawl test is slow without anyone remembering to mark it.
SLOW_SIGNS = (
    "subprocess",
    "tests.crawl",
    "tests.feedserver",
    "FeedServer",
    "tests.scratch",
    "playwright",
    "Popen",
    "crovia_spider.demo",
)
_slow_sources: dict[str, bool] = {}


def _source_is_slow(path: str | None) -> bool:
    if not path or not path.endswith(".py"):
        return False
    if path not in _slow_sources:
        source = Path(path).read_text(encoding="utf-8")
        _slow_sources[path] = any(sign in source for sign in SLOW_SIGNS)
    return _slow_sources[path]


def _is_slow(item: pytest.Item) -> bool:
    if _source_is_slow(str(item.path)):
        return True
    fixture_info = getattr(item, "_fixtureinfo", None)
    for defs in fixture_info.name2fixturedefs.values() if fixture_info else ():
        for definition in defs:
            try:
                source = inspect.getsourcefile(definition.func)
            except TypeError:
                continue
            if source and Path(source).is_relative_to(TESTS) and _source_is_slow(source):
                return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "slow" not in item.keywords and _is_slow(item):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """`make test` (CI) sets CROVIA_FORBID_SKIPS=1: a skipped test fails there, saying why, so a
    missing tool (openssl, Chromium, node) can never pass as a quiet 's'."""
    outcome = yield
    report = outcome.get_result()
    forbidden = os.environ.get("CROVIA_FORBID_SKIPS") == "1"
    if forbidden and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped, and `make test` forbids skips: {report.longrepr}"
