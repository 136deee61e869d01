"""Fixtures of the stamp tests: a test PKI made with openssl, a crawled and sealed ledger, and
`crovia` run as a subprocess with stamp settings.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from crovia_spider.demo_tsa import OPENSSL, TestPki
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, run_crawl

FEED = "arxiv_cs_ai_rss2_2026-04-27_trim3.xml"


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPki:
    """A root CA and a TSA certificate (critical timeStamping EKU), made by `openssl` here."""
    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    return TestPki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory, module_feed_server) -> Path:
    """A real crawl of one feed into a ledger, sealed at its end; copy it before changing it."""
    base = tmp_path_factory.mktemp("crawled")
    proc = run_crawl(base, [{"vendor": "arxiv_cs_ai", "url": module_feed_server.url(FEED)}])
    assert proc.returncode == 0, proc.stderr[-2000:]
    return base


@pytest.fixture
def work(crawled: Path, tmp_path: Path) -> Path:
    """A private copy of the crawled ledger (keys included) for one test."""
    target = tmp_path / "work"
    shutil.copytree(crawled, target)
    return target


def crovia(base: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`crovia ARGS` with the CROVIA_* paths of `base` and the given settings."""
    return subprocess.run(
        [str(BIN / "crovia"), *args],
        cwd=PROJECT_ROOT,
        env=crawl_env(base, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def first_axiom(base: Path) -> str:
    """The axiom_id of leaf 0 of the ledger in `base`."""
    line = (base / "ledger" / "axiom_ledger.jsonl").read_bytes().splitlines()[0]
    return json.loads(line)["axiom_id"]
