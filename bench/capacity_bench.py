"""Bench: capacity (issue 19 obs 12). How many feeds one machine harvests per hour with politeness
on, how many items per second it signs, and how much disk an item takes.

`--feeds` RSS feeds of `--items-per-feed` distinct entries each are spread over `--hosts` loopback
hosts, 127.0.0.2 and up, each its own feed server (tests/feedserver.py: ETag, Last-Modified, 304).
One real `scrapy crawl vendor_press` with the shipped politeness (robots.txt obeyed, DOWNLOAD_DELAY
1 s randomised per host, 2 connections per host) fetches them all into a fresh ledger: the first
crawl (every item new), then a second over the same, unchanged feeds (each answers 304). Printed:
- feeds per hour = feeds x 3600 / wall time of one crawl, with the politeness floor (the delays a
  host's requests must wait, robots.txt included: (requests on the busiest host - 1) x 1 s) and
  the crawl's time as a ratio to it; the crawl's CPU seconds (both processes, both cores);
- items signed per second in the crawl, against the floor of signing alone: `Ledger.issue` of the
  same number of envelopes in this process (sign, append, index), measured in the same run;
- disk: bytes per item of the ledger directory's parts after the first crawl (JSONL, index,
  seals, tree, kept bodies), and a year at the issue's figure (200 feeds hourly, 850,000 leaves).
On a machine shared with other work the wall times swing with the load: say so with the figures.
Usage: python bench/capacity_bench.py [--feeds N] [--items-per-feed N] [--hosts N]. Offline.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import nacl.signing

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from bench.crawl_bench import Run, timed, write_feeds  # noqa: E402
from ledger.keys import generate_signing_key  # noqa: E402
from ledger.store import Ledger  # noqa: E402
from tests.feedserver import FeedServer  # noqa: E402
from tests.vectors.make_vectors import sample_envelope  # noqa: E402

DELAY = 1.0  # crovia_spider/settings.py DOWNLOAD_DELAY: the shipped politeness for a host
YEAR_FEEDS = 200  # the issue's year: 200 feeds fetched hourly ...
YEAR_LEAVES = 850_000  # ... giving about 850,000 leaves
YEAR_FETCHES = YEAR_FEEDS * 24 * 365


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feeds", type=int, default=500)
    parser.add_argument("--items-per-feed", type=int, default=20)
    parser.add_argument("--hosts", type=int, default=125, help="loopback hosts, 127.0.0.2 and up")
    args = parser.parse_args()
    if not 1 <= args.hosts <= 250:
        parser.error("--hosts is 1 to 250 (127.0.0.2 to 127.0.0.251)")
    with tempfile.TemporaryDirectory(prefix="crovia-capacity-") as tmp, ExitStack() as servers:
        work = Path(tmp)
        (work / "www").mkdir()
        names = write_feeds(work / "www", args.feeds * args.items_per_feed, args.feeds)
        hosts = [
            servers.enter_context(FeedServer(work / "www", host=f"127.0.0.{2 + n}"))
            for n in range(args.hosts)
        ]
        urls = [hosts[n % len(hosts)].url(name) for n, name in enumerate(names)]
        key = work / "capacity.key"
        generate_signing_key(key)
        env = _crawl_env(work, urls, key)
        first = _crawl(env)
        items = _leaves(work / "ledger")
        second = _crawl(env)
        report_crawls(args, urls, items, first, second)
        report_signing(items, first, work / "issue-floor")
        report_disk(work / "ledger", items, args.feeds)
    print("load average (1, 5, 15 min): {:.1f} {:.1f} {:.1f} on {} cores".format(
        *os.getloadavg(), os.cpu_count()))  # fmt: skip
    return 0


def _crawl_env(work: Path, urls: list[str], key: Path) -> dict[str, str]:
    feeds = work / "feeds.toml"
    feeds.write_text("".join(f'[[feeds]]\nvendor = "cap_{n}"\nurl = "{u}"\n' for n, u in
                             enumerate(urls)))  # fmt: skip
    env = dict(os.environ, CROVIA_FEEDS_FILE=str(feeds), CROVIA_LEDGER_DIR=str(work / "ledger"),
               CROVIA_SIGNING_KEY_FILE=str(key), CROVIA_POLITE_DELAYS="1")  # fmt: skip
    return env


def _crawl(env: dict[str, str]) -> Run:
    return timed([str(BIN / "scrapy"), "crawl", "vendor_press"], ROOT, env)


def _leaves(ledger_dir: Path) -> int:
    with (ledger_dir / "axiom_ledger.jsonl").open("rb") as lines:
        return sum(1 for _ in lines)


def politeness_floor(urls: list[str]) -> float:
    """Seconds the busiest host's requests wait between them (robots.txt, then its feeds) at the
    mean delay; Scrapy draws each from 0.5 to 1.5 times DOWNLOAD_DELAY."""
    per_host = Counter(url.split("/")[2] for url in urls)
    return max(per_host.values()) * DELAY


def report_crawls(
    args: argparse.Namespace, urls: list[str], items: int, first: Run, second: Run
) -> None:
    floor = politeness_floor(urls)
    print(
        f"{args.feeds} feeds of {args.items_per_feed} items on {args.hosts} loopback hosts,"
        f" politeness on (floor {floor:.0f} s: the busiest host's delays)"
    )
    for label, run in (("first crawl, all new", first), ("second crawl, all 304", second)):
        print(
            f"{label}: {run.seconds:.1f} s = {run.seconds / floor:.1f}x the floor,"
            f" {args.feeds * 3600 / run.seconds:,.0f} feeds/hour;"
            f" CPU {run.cpu_seconds:.1f} s ({args.feeds * 3600 / run.cpu_seconds:,.0f} feeds per"
            f" CPU-hour); peak RSS {run.peak_rss_mb:.0f} MB"
        )
    # the first crawl signs every item and one fetch record (AX.FETCH) per feed
    expected = args.feeds * (args.items_per_feed + 1)
    if items != expected:
        sys.exit(f"capacity: {items} leaves after the first crawl, expected {expected}")


def report_signing(items: int, first: Run, ledger_dir: Path) -> None:
    envelopes = [sample_envelope(n) for n in range(items)]
    started = time.perf_counter()
    with Ledger.open(ledger_dir, signing_key=nacl.signing.SigningKey.generate()) as ledger:
        ledger.issue(envelopes)
    floor = time.perf_counter() - started
    print(
        f"items signed per second: crawl {items / first.seconds:,.0f}/s (fetch to durable leaf),"
        f" Ledger.issue alone {items / floor:,.0f}/s (floor, same run): signing and appending"
        f" are {floor / first.seconds:.0%} of the crawl's time"
    )


def report_disk(ledger_dir: Path, items: int, feeds: int) -> None:
    total = _tree(ledger_dir)
    parts = {
        "ledger JSONL": _size(ledger_dir / "axiom_ledger.jsonl"),
        "index.sqlite": sum(_size(p) for p in ledger_dir.glob("index.sqlite*")),
        "kept bodies": _tree(ledger_dir / "bodies"),
    }
    parts["the rest (seals, runs, tree, checkpoints)"] = total - sum(parts.values())
    leaf_bytes = total - parts["kept bodies"]
    body = parts["kept bodies"] / feeds
    print(f"disk after the first crawl: {total / 1e6:.1f} MB for {items} items")
    for name, size in parts.items():
        print(f"  {name}: {size / items:,.0f} bytes per item")
    year = YEAR_LEAVES * leaf_bytes / items
    print(
        f"a year of {YEAR_LEAVES:,} leaves: {year / 1e9:.2f} GB of ledger and index;"
        f" kept bodies {body / 1e3:.1f} kB per changed fetch, at most"
        f" {YEAR_FETCHES * body / 1e9:.1f} GB if all {YEAR_FETCHES:,} hourly fetches of"
        f" {YEAR_FEEDS} feeds changed"
    )


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _tree(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


if __name__ == "__main__":
    sys.exit(main())
