"""A real Chromium (the system's, driven by Playwright) and a published, served ledger.

No test here skips: without Chromium every browser test fails with the command that installs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.crawl import BIN, PROJECT_ROOT, run_crawl

CHROMIUM = Path(os.environ.get("CROVIA_CHROMIUM", "/usr/bin/chromium"))
INSTALL_HINT = "make browser   (it runs: apt-get install -y chromium)"
# The flags a headless Chromium needs on a machine without network: no background traffic.
CHROMIUM_ARGS = [
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SEED = PROJECT_ROOT / "tests" / "vectors" / "seed_axiom_proof.json"
CRAWLED_FEEDS = (
    ("openai_news", "openai_news_rss_prefix.xml"),
    ("arxiv_cs_ai", "arxiv_cs_ai_rss2_2026-04-27_trim3.xml"),
)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: run `{INSTALL_HINT}`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context()
    yield context.new_page()
    context.close()


@dataclass
class Site:
    """A crawled ledger, published into `directory` and served at `base` by `crovia serve`."""

    ledger_dir: Path
    directory: Path
    base: str
    axiom_ids: list[str]

    def url(self, path: str) -> str:
        return self.base.rstrip("/") + path


def publish(ledger_dir: Path, directory: Path) -> list[str]:
    """`crovia publish DIR --ledger-dir LEDGER`, as an operator runs it; the lines it printed."""
    done = subprocess.run(
        [str(BIN / "crovia"), "publish", str(directory), "--ledger-dir", str(ledger_dir)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


class Server:
    """`crovia serve DIR --port 0` as a child process; `base` is the URL it prints."""

    def __init__(self, directory: Path) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "crovia"), "serve", str(directory), "--port", "0"],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        if not line.startswith("serving "):
            self.stop()
            raise RuntimeError(f"crovia serve did not start: {line!r} {self.process.stderr.read()}")
        self.base = line.rsplit(" at ", 1)[1].strip()

    def stop(self) -> None:
        self.process.terminate()
        self.process.communicate(timeout=20)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, module_feed_server: object) -> Iterator[Site]:
    work = tmp_path_factory.mktemp("site")
    feeds = [{"vendor": v, "url": module_feed_server.url(f)} for v, f in CRAWLED_FEEDS]
    crawl = run_crawl(work, feeds)
    assert crawl.returncode == 0, crawl.stderr[-2000:]
    directory = work / "public"
    publish(work / "ledger", directory)
    samples = directory / "samples"
    samples.mkdir()
    shutil.copyfile(SEED, samples / "seed.json")
    ids = sorted(p.stem for p in (directory / "receipts").glob("axm_*.json"))
    server = Server(directory)
    try:
        yield Site(work / "ledger", directory, server.base, ids)
    finally:
        server.stop()
