"""Bench: the full pipeline (`scrapy crawl vendor_press`: fetch policy, parse, normalise,
fingerprint, dedupe, classify, sign with fetch evidence and a fetch record per feed, keep bodies,
append, seal) against plain Scrapy + feedparser writing the same items to a JSON-lines feed export
(bench/crawl_peer.py), on the same 10,000 items served from 127.0.0.1.

Runs alternate (peer, full, peer, full, ...), each into a fresh directory; the median of the
per-pair ratios full/peer is printed (goal: <= 1.0; <= 1.6 with CROVIA_PARSE_WORKER=0 in the
environment, everything in the crawl's one process as in the peer), and the crawl's peak RSS
(goal: < 200 MB): ru_maxrss of the crawl as wait4 reports it, the largest process of its tree (the
crawl or its parse worker). The median ratio of CPU seconds (user + system, the whole process
tree) is printed too, and the load average before and after: on a loaded machine wall times swing
with the load, CPU time much less.
Usage: python bench/crawl_bench.py [--pairs N] [--items N] [--feeds N]. Offline; about a minute.
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
from typing import NamedTuple

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


class Run(NamedTuple):
    seconds: float
    peak_rss_mb: float
    cpu_seconds: float


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """Run `args`; its wall time, peak RSS (wait4's ru_maxrss, KiB on Linux) and CPU time."""
    with tempfile.TemporaryFile() as log:
        started = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=log, stderr=log)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            log.seek(0)
            sys.exit(f"bench: {' '.join(args[:3])} failed:\n{log.read()[-3000:].decode()}")
    return Run(elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def run_peer(work: Path, urls: list[str], n: int) -> Run:
    run_dir = work / f"peer{n}"
    run_dir.mkdir()
    args = [str(BIN / "scrapy"), "runspider", str(ROOT / "bench" / "crawl_peer.py"),
            "-a", "urls=" + ",".join(urls), "-o", "items.jsonl:jsonlines", *FAST]  # fmt: skip
    return timed(args, run_dir, dict(os.environ))


def run_full(work: Path, urls: list[str], n: int, key: Path) -> Run:
    run_dir = work / f"full{n}"
    run_dir.mkdir()
    feeds = run_dir / "feeds.toml"
    feeds.write_text(
        "".join(f'[[feeds]]\nvendor = "bench_{i}"\nurl = "{u}"\n' for i, u in enumerate(urls))
    )
    env = dict(os.environ, CROVIA_FEEDS_FILE=str(feeds), CROVIA_LEDGER_DIR=str(run_dir / "ledger"),
               CROVIA_SIGNING_KEY_FILE=str(key))  # fmt: skip
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", "-s", "CROVIA_POLITE_DELAYS=0", *FAST]
    run = timed(args, ROOT, env)
    # Every item, and one fetch record (AX.FETCH) per feed: they are on, as in every crawl.
    leaves = sum(1 for _ in (run_dir / "ledger" / "axiom_ledger.jsonl").open()) - len(urls)
    if leaves != EXPECTED_ITEMS:
        record = (run_dir / "ledger" / "runs.jsonl").read_text().splitlines()[-1]
        sys.exit(f"bench: the full pipeline issued {leaves} envelopes, expected {EXPECTED_ITEMS}:"
                 f"\n{record}")  # fmt: skip
    kept = sum(1 for _ in (run_dir / "ledger" / "bodies").rglob("*.gz"))
    if kept != len(urls):
        sys.exit(f"bench: {kept} kept bodies, expected one per feed ({len(urls)})")
    return run


EXPECTED_ITEMS = 0


def main() -> int:
    global EXPECTED_ITEMS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--feeds", type=int, default=20)
    args = parser.parse_args()
    print(f"before: load average {load()}")
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
            peer, full = run_peer(work, urls, n), run_full(work, urls, n, key)
            peers.append(peer)
            fulls.append(full)
            print(f"pair {n + 1}: peer {peer.seconds:.2f}s  full {full.seconds:.2f}s  "
                  f"ratio {full.seconds / peer.seconds:.2f}  peak RSS peer "
                  f"{peer.peak_rss_mb:.0f} MB, full {full.peak_rss_mb:.0f} MB")  # fmt: skip
        server.shutdown()
    report(peers, fulls, args.pairs, args.feeds)
    print(f"after: load average {load()}")
    return 0


def load() -> str:
    """The load averages (1, 5, 15 min) and the CPU count: the bench's company on the machine."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} CPUs"


def report(peers: list[Run], fulls: list[Run], pairs: int, feeds: int) -> None:
    ratios = [f.seconds / p.seconds for f, p in zip(fulls, peers, strict=True)]
    print(f"{EXPECTED_ITEMS} items in {feeds} feeds, {pairs} alternating pairs")
    print(
        f"median peer {statistics.median(p.seconds for p in peers):.2f}s, "
        f"median full {statistics.median(f.seconds for f in fulls):.2f}s"
    )
    one_process = os.environ.get("CROVIA_PARSE_WORKER", "").strip().lower() in ("0", "false", "no")
    goal, mode = (1.6, "CROVIA_PARSE_WORKER=0, one process") if one_process else (1.0, "full")
    print(f"median ratio full/peer ({mode}): {statistics.median(ratios):.2f} (goal <= {goal})")
    cpu = [f.cpu_seconds / p.cpu_seconds for f, p in zip(fulls, peers, strict=True)]
    print(f"median CPU-time ratio full/peer: {statistics.median(cpu):.2f} (both cores counted)")
    print(
        f"crawl peak RSS: max {max(f.peak_rss_mb for f in fulls):.0f} MB (goal < 200 MB); "
        f"peer max {max(p.peak_rss_mb for p in peers):.0f} MB"
    )


if __name__ == "__main__":
    sys.exit(main())
