"""Bench: the full pipeline (`scrapy crawl vendor_press`: parse, normalise, fingerprint, dedupe,
classify, sign, append, seal) against plain Scrapy + feedparser writing the same items to a
JSON-lines feed export (bench/crawl_peer.py), on the same 10,000 items served from 127.0.0.1.

Runs alternate (peer, full, peer, full, ...), each into a fresh directory; the median of the
per-pair ratios full/peer is printed (goal: <= 1.3). Usage: python bench/crawl_bench.py [--pairs N]
[--items N] [--feeds N]. Offline; takes about a minute.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from crovia_spider.demo import serve  # noqa: E402
from ledger.keys import generate_signing_key  # noqa: E402

FAST = ("-s", "DOWNLOAD_DELAY=0", "-s", "LOG_LEVEL=INFO", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2")
ABSTRACT = (
    "We study {topic} in large language models and show that a simple change to the training "
    "objective improves robustness on held-out tasks. Our method needs no extra data, scales to "
    "models with billions of parameters, and closes most of the gap to much larger systems on "
    "reasoning benchmarks. We release code and checkpoints. Experiments across {n} settings show "
    "consistent gains, with ablations isolating the contribution of each component."
)


def write_feeds(directory: Path, items: int, feeds: int) -> list[str]:
    """`feeds` RSS files holding `items` distinct entries in all; returns their file names."""
    names, per_feed = [], items // feeds
    for f in range(feeds):
        entries = []
        for i in range(f * per_feed, (f + 1) * per_feed):
            if i % 2:  # arXiv-style entry
                description = f"arXiv:2606.{i:05d}v1 Announce Type: new \nAbstract: " + ABSTRACT
                link = f"https://arxiv.org/abs/2606.{i:05d}"
            else:  # vendor blog entry with some markup
                description = "&lt;p&gt;" + ABSTRACT + "&lt;/p&gt;&lt;p&gt;Read more.&lt;/p&gt;"
                link = f"https://vendor.example.org/blog/post-{i}"
            text = description.format(topic=f"topic {i % 97}", n=i % 13)
            entries.append(
                f"<item><title>Item {i}: progress on topic {i % 97}</title><link>{link}</link>"
                f"<guid>{link}</guid><pubDate>Thu, 18 Jun 2026 00:00:00 -0400</pubDate>"
                f"<description>{text}</description>"
                "</item>"
            )
        body = (
            '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
            f"<title>Bench feed {f}</title><link>https://bench.example.org/{f}</link>"
            f"<description>bench</description>{''.join(entries)}</channel></rss>"
        )
        names.append(f"feed{f}.xml")
        (directory / names[-1]).write_text(body, encoding="utf-8")
    return names


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(args[:3])} failed:\n{proc.stderr[-3000:]}")
    return elapsed


def run_peer(work: Path, urls: list[str], n: int) -> float:
    run_dir = work / f"peer{n}"
    run_dir.mkdir()
    args = [str(BIN / "scrapy"), "runspider", str(ROOT / "bench" / "crawl_peer.py"),
            "-a", "urls=" + ",".join(urls), "-o", "items.jsonl:jsonlines", *FAST]  # fmt: skip
    return timed(args, run_dir, dict(os.environ))


def run_full(work: Path, urls: list[str], n: int, key: Path) -> float:
    run_dir = work / f"full{n}"
    run_dir.mkdir()
    feeds = run_dir / "feeds.toml"
    feeds.write_text(
        "".join(f'[[feeds]]\nvendor = "bench_{i}"\nurl = "{u}"\n' for i, u in enumerate(urls))
    )
    env = dict(os.environ, CROVIA_FEEDS_FILE=str(feeds), CROVIA_LEDGER_DIR=str(run_dir / "ledger"),
               CROVIA_SIGNING_KEY_FILE=str(key))  # fmt: skip
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", "-s", "CROVIA_POLITE_DELAYS=0", *FAST]
    elapsed = timed(args, ROOT, env)
    leaves = sum(1 for _ in (run_dir / "ledger" / "axiom_ledger.jsonl").open())
    if leaves != EXPECTED_ITEMS:
        record = (run_dir / "ledger" / "runs.jsonl").read_text().splitlines()[-1]
        sys.exit(f"bench: the full pipeline issued {leaves} envelopes, expected {EXPECTED_ITEMS}:"
                 f"\n{record}")  # fmt: skip
    return elapsed


EXPECTED_ITEMS = 0


def main() -> int:
    global EXPECTED_ITEMS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--feeds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="crovia-bench-") as tmp:
        work = Path(tmp)
        (work / "www").mkdir()
        names = write_feeds(work / "www", args.items, args.feeds)
        EXPECTED_ITEMS = args.items // args.feeds * args.feeds
        key = work / "bench.key"
        generate_signing_key(key)
        server = serve(work / "www")
        urls = [f"http://127.0.0.1:{server.server_address[1]}/{name}" for name in names]
        peers, fulls = [], []
        for n in range(args.pairs):
            peers.append(run_peer(work, urls, n))
            fulls.append(run_full(work, urls, n, key))
            print(f"pair {n + 1}: peer {peers[-1]:.2f}s  full {fulls[-1]:.2f}s  "
                  f"ratio {fulls[-1] / peers[-1]:.2f}")  # fmt: skip
        server.shutdown()
    ratios = [f / p for f, p in zip(fulls, peers, strict=True)]
    print(f"{EXPECTED_ITEMS} items in {args.feeds} feeds, {args.pairs} alternating pairs")
    print(
        f"median peer {statistics.median(peers):.2f}s, median full {statistics.median(fulls):.2f}s"
    )
    print(f"median ratio full/peer: {statistics.median(ratios):.2f} (goal <= 1.30)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
