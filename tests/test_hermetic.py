"""The test suite is hermetic (issue 43, observation 9): no CROVIA_* variable of the caller's shell
changes a test's outcome. With CROVIA_LEDGER_DIR set in the shell, `make check` in a fresh clone
failed tests/ledger/test_pubkey.py::test_pubkey_prints_the_key_and_writes_the_keygen_trust_root.

Proved by running a sample of the suite (the test that failed, tests that read the log's origin,
the settings, the scheduler, a crawl and `crovia doctor`) in a pytest of its own whose environment
sets every setting of the table to something hostile: a ledger sealed by another key under another
origin, another signing key, missing config files, values no setting takes, a Redis and a TSA
nobody listens for. tests/conftest.py clears them at the session's start, keeping only what the
test infrastructure needs (INFRASTRUCTURE there).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from crovia_spider.options import OPTIONS
from ledger.keys import generate_signing_key
from ledger.store import Ledger
from tests.conftest import INFRASTRUCTURE
from tests.crawl import PROJECT_ROOT
from tests.vectors.make_vectors import sample_envelope

SAMPLE = [
    "tests/ledger/test_pubkey.py",
    "tests/ledger/test_pubkey_origin.py",
    "tests/ledger/test_tlog_cli.py::test_pubkey_prints_the_note_verifier_key",
    "tests/test_settings_table.py::test_a_crawls_scrapy_settings_are_checked_where_they_came_from",
    "tests/schedule/test_cli.py",
    "tests/spider/test_bad_settings.py::test_feeds_check_says_the_settings_were_checked",
    "tests/test_doctor.py::test_a_crawled_ledger_is_clean_and_doctor_writes_nothing",
]


def hostile_environment(tmp_path: Path) -> dict[str, str]:
    """Every setting set, each to what would change a test's outcome if it leaked in."""
    directory = tmp_path / "hostile"
    directory.mkdir(mode=0o700)
    key = generate_signing_key(directory / "keys" / "other.key")
    with Ledger.open(directory / "ledger", signing_key=key, log_origin="hostile.example/x") as led:
        led.issue([sample_envelope(n) for n in range(2)])
        led.seal()
    missing = str(directory / "missing.toml")
    chosen = {
        "CROVIA_LEDGER_DIR": str(directory / "ledger"),
        "CROVIA_SIGNING_KEY_FILE": str(directory / "keys" / "other.key"),
        "CROVIA_JOB_KEY_FILE": str(directory / "keys" / "jobs.key"),
        "CROVIA_LOG_ORIGIN": "hostile.example/x",
        "CROVIA_FEEDS_FILE": missing,
        "CROVIA_CLASSIFY_FILE": missing,
        "CROVIA_SCHEDULE_FILE": missing,
        "CROVIA_PUBLISH_DIR": str(directory / "public"),
        "CROVIA_METRICS_FILE": str(directory / "metrics.prom"),
        "CROVIA_REDIS_URL": "redis://127.0.0.1:1/0",
        "CROVIA_TSA_URLS": "http://127.0.0.1:1/tsa",
        "CROVIA_SEQUENCER_KEY": "ab" * 32,
        "CROVIA_PARSE_WORKER": "2",
    }
    every = {name: chosen.get(name, "hostile value") for name in OPTIONS}
    infrastructure = {name: value for name, value in _environ().items() if name in INFRASTRUCTURE}
    return {**_environ(), **every, **infrastructure, "CROVIA_FORBID_SKIPS": "1"}


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_a_sample_of_the_suite_passes_with_every_setting_hostile(tmp_path):
    env = hostile_environment(tmp_path)
    assert set(OPTIONS) <= set(env)
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "-n", "0", *SAMPLE],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert " passed" in ran.stdout and "failed" not in ran.stdout and "skipped" not in ran.stdout
