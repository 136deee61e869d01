"""Run a real `scrapy crawl` as a subprocess against a scratch ledger, and read what it left.

    proc = run_crawl(tmp_path, [{"vendor": "openai", "url": server.url("openai.xml")}])
    assert proc.returncode == 0
    runs = run_records(tmp_path)            # data of tmp_path/ledger/runs.jsonl

Every CROVIA_* path points into `tmp_path` (feeds.toml, ledger/, keys/signing.key, created with the
ledger's own key generator on first use); delays and retry backoff are off; the working directory is
the project root (found from this file, never hard-coded). Extra arguments go to `scrapy crawl`
after the defaults, so `-s NAME=value` there wins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ledger.keys import generate_signing_key, load_signing_key
from ledger.store import Ledger

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
FAST_SETTINGS = (
    "-s",
    "CROVIA_POLITE_DELAYS=0",
    "-s",
    "DOWNLOAD_DELAY=0",
    "-s",
    "RETRY_BACKOFF_BASE=0",
    "-s",
    "LOG_LEVEL=INFO",
)


def crawl_env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    """The environment of a crawl into `tmp_path` (creates the signing key if missing)."""
    key = tmp_path / "keys" / "signing.key"
    if not key.exists():
        generate_signing_key(key)
    env = dict(os.environ)
    env.update(
        CROVIA_FEEDS_FILE=str(tmp_path / "feeds.toml"),
        CROVIA_LEDGER_DIR=str(tmp_path / "ledger"),
        CROVIA_SIGNING_KEY_FILE=str(key),
        CROVIA_CLASSIFY_FILE=str(PROJECT_ROOT / "config" / "classify.toml"),
    )
    env.update(overrides)
    return env


def write_feeds(path: Path, feeds: list[dict[str, Any]] | str) -> None:
    """Write a feeds.toml: `feeds` is raw TOML text or a list of [[feeds]] tables."""
    if isinstance(feeds, str):
        path.write_text(feeds, encoding="utf-8")
        return
    tables = [
        "[[feeds]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in f.items()) for f in feeds
    ]
    path.write_text("\n".join(tables), encoding="utf-8")


def run_crawl(
    tmp_path: Path,
    feeds: list[dict[str, Any]] | str | None,
    *extra_args: str,
    spider: str = "vendor_press",
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`scrapy crawl SPIDER` with the CROVIA_* paths in `tmp_path`; feeds.toml is (re)written unless
    `feeds` is None. Returns the finished process (output captured as text), whatever its exit code.
    """
    if feeds is not None:
        write_feeds(tmp_path / "feeds.toml", feeds)
    return subprocess.run(
        crawl_command(spider, *extra_args),
        cwd=PROJECT_ROOT,
        env=env or crawl_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def crawl_command(spider: str, *extra_args: str) -> list[str]:
    """The `scrapy crawl SPIDER` command line run_crawl runs."""
    return [str(BIN / "scrapy"), "crawl", spider, *FAST_SETTINGS, *extra_args]


def start_crawl(
    tmp_path: Path, *extra_args: str, spider: str = "vendor_press", **popen: Any
) -> subprocess.Popen[str]:
    """`scrapy crawl SPIDER` as run_crawl runs it (feeds.toml as it is), started in the background;
    `popen` goes to subprocess.Popen (stdout, stderr)."""
    return subprocess.Popen(
        crawl_command(spider, *extra_args),
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path),
        text=True,
        **popen,
    )


def crawl_replies(tmp_path: Path, server: Any, replies: Any, path: str = "lab.xml") -> list[dict]:
    """One crawl of the feed `path` of `server` (vendor "lab") per (name, Reply) of `replies`, each
    answered with its reply and exiting 0; every fetch record of the ledger after them."""
    feeds = [{"vendor": "lab", "url": server.url(path)}]
    for name, reply in replies:
        server.script(path, reply)
        proc = run_crawl(tmp_path, feeds)
        assert proc.returncode == 0, (name, proc.stderr[-3000:])
    return fetch_records(tmp_path)


def issue_into(tmp_path: Path, unsigned: dict[str, Any]) -> dict[str, Any]:
    """`unsigned` (an envelope without signature, axiom_id, anchors) signed into the ledger of
    `tmp_path` with its own key and writer, and sealed, as a hostile writer holding the key would;
    returned with the axiom_id and leaf_index it was given."""
    key = load_signing_key(crawl_env(tmp_path)["CROVIA_SIGNING_KEY_FILE"])
    with Ledger.open(tmp_path / "ledger", signing_key=key) as ledger:
        [issued] = ledger.issue([unsigned])
        ledger.seal()
    return {**unsigned, "axiom_id": issued.axiom_id, "leaf_index": issued.leaf_index}


def crovia(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the `crovia` CLI with the CROVIA_* paths of `tmp_path`."""
    return subprocess.run(
        [str(BIN / "crovia"), *args],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_records(tmp_path: Path) -> list[dict[str, Any]]:
    """Every run record of the ledger in `tmp_path`, oldest first."""
    path = tmp_path / "ledger" / "runs.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def leaves(tmp_path: Path) -> list[dict[str, Any]]:
    """Every envelope of the ledger in `tmp_path`, items and fetch records, in leaf order."""
    path = tmp_path / "ledger" / "axiom_ledger.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def envelopes(tmp_path: Path) -> list[dict[str, Any]]:
    """Every item envelope (AX.OBS) of the ledger in `tmp_path`, in leaf order; the fetch
    records (AX.FETCH), one per feed and crawl, are `fetch_records`."""
    return [env for env in leaves(tmp_path) if env["axiom_type"] == "AX.OBS"]


def fetch_records(tmp_path: Path) -> list[dict[str, Any]]:
    """Every fetch record (AX.FETCH envelope) of the ledger in `tmp_path`, in leaf order."""
    return [env for env in leaves(tmp_path) if env["axiom_type"] == "AX.FETCH"]


def feed_outcome(record: dict[str, Any], vendor: str) -> dict[str, Any]:
    """One feed's entry in a run record."""
    return next(feed for feed in record["feeds"] if feed["vendor"] == vendor)


def assert_counts_add_up(record: dict[str, Any]) -> None:
    """Every feed of a run record accounts for each entry it saw: seen = issued (new + updated)
    + unchanged (duplicate) + dropped, and dropped is the sum of its reasons; so do the totals."""
    for feed in record["feeds"]:
        fates = feed["new"] + feed["updated"] + feed["duplicate"] + feed["dropped"]
        assert feed["items_seen"] == fates, feed
        assert feed["dropped"] == sum(feed["drop_reasons"].values()), feed
    for key, total in record["totals"].items():
        assert total == sum(feed[key] for feed in record["feeds"]), key
