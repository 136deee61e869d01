"""Bench: items issued per second by source kind (docs/spider.md, "Source kinds"): a news sitemap
of 50,000 URLs (plain and gzipped) and a JSON Feed of 2,000 items, each against an RSS feed of the
same items (same URLs, titles and dates), all served from 127.0.0.1 and measured in one run.

Each crawl is a real `scrapy crawl vendor_press` of one source into a fresh ledger, politeness off
(CROVIA_POLITE_DELAYS=0), every item issued (the ledger holds N items and one fetch record, or the
bench stops). The RSS side lifts its entry limit to N (CROVIA_MAX_ENTRIES_PER_FEED; the sitemap's
own, CROVIA_MAX_SITEMAP_URLS, is the protocol's 50,000 already). Kinds alternate within a round,
in reversed order every other round; the ratio of a kind is its wall time over that of the RSS
crawl of the same N items in the same round, and the median over rounds is printed (goal: <= 1.2
for each), with the median items per second of each kind, the CPU-time ratios (less swayed by the
load than wall times) and the machine's load average, since a shared machine sways them all.
Usage: python bench/kinds_bench.py [--rounds N] [--sitemap-items N] [--jsonfeed-items N]
[--quick]. Offline; about four minutes (--quick: seconds, for the smoke test).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from bench.crawl_bench import Run, timed  # noqa: E402
from crovia_spider.demo import serve  # noqa: E402
from ledger.keys import generate_signing_key  # noqa: E402

GOAL = 1.2
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"


class Item(NamedTuple):
    link: str
    title: str
    date: str  # ISO 8601, as a news sitemap and a JSON Feed write it
    rfc822: str  # the same instant, as RSS writes it


class Source(NamedTuple):
    kind: str  # the `kind` of its [[feeds]] entry
    label: str  # as printed
    file: str  # under the served directory
    items: int


def make_items(n: int) -> list[Item]:
    """`n` distinct items: short links (a 50,000-URL news sitemap stays under the 16 MiB cap)."""
    return [
        Item(
            f"https://lab.example/news/{i}",
            f"Item {i}: progress on topic {i % 97}",
            f"2026-06-{1 + i % 28:02d}T{i % 24:02d}:00:00+00:00",
            f"{1 + i % 28:02d} Jun 2026 {i % 24:02d}:00:00 +0000",
        )
        for i in range(n)
    ]


def rss(items: list[Item]) -> bytes:
    rows = "".join(
        f"<item><title>{it.title}</title><link>{it.link}</link><guid>{it.link}</guid>"
        f"<pubDate>{it.rfc822}</pubDate></item>"
        for it in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Lab</title>'
        f"<link>https://lab.example/news</link><description>bench</description>{rows}"
        "</channel></rss>"
    ).encode()


def news_sitemap(items: list[Item]) -> bytes:
    rows = "".join(
        f"<url><loc>{it.link}</loc><news:news><news:publication><news:name>Lab</news:name>"
        "<news:language>en</news:language></news:publication>"
        f"<news:publication_date>{it.date}</news:publication_date>"
        f"<news:title>{it.title}</news:title></news:news></url>"
        for it in items
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:news="{NEWS_NS}">{rows}</urlset>'
    ).encode()


def json_feed(items: list[Item]) -> bytes:
    feed = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "Lab",
        "home_page_url": "https://lab.example/news",
        "items": [
            {"id": it.link, "url": it.link, "title": it.title, "date_published": it.date}
            for it in items
        ],
    }
    return json.dumps(feed).encode()


def write_sources(www: Path, sitemap_items: int, jsonfeed_items: int) -> list[Source]:
    """The bodies of every kind, RSS first for each size; the sources that read them."""
    big, small = make_items(sitemap_items), make_items(jsonfeed_items)
    sitemap = news_sitemap(big)
    bodies = {
        Source("feed", f"rss {sitemap_items}", "big.rss.xml", sitemap_items): rss(big),
        Source("sitemap", "sitemap", "news-sitemap.xml", sitemap_items): sitemap,
        Source("sitemap", "sitemap.gz", "news-sitemap.xml.gz", sitemap_items): gzip.compress(
            sitemap, mtime=0
        ),
        Source("feed", f"rss {jsonfeed_items}", "small.rss.xml", jsonfeed_items): rss(small),
        Source("jsonfeed", "jsonfeed", "feed.json", jsonfeed_items): json_feed(small),
    }
    for source, body in bodies.items():
        (www / source.file).write_bytes(body)
    return list(bodies)


def crawl(work: Path, base: str, source: Source, key: Path, tag: str) -> Run:
    """One crawl of `source` into a fresh ledger; stops the bench unless all its items issued."""
    run_dir = work / tag
    run_dir.mkdir()
    feeds = run_dir / "feeds.toml"
    # `capture = false`: this bench measures the readers; captures have their own
    # (bench/capture_bench.py), and a sitemap's pages would be captured by default.
    feeds.write_text(f'[[feeds]]\nvendor = "lab"\nurl = "{base}/{source.file}"\n'
                     f'kind = "{source.kind}"\ncapture = false\n')  # fmt: skip
    env = dict(os.environ, CROVIA_FEEDS_FILE=str(feeds), CROVIA_LEDGER_DIR=str(run_dir / "ledger"),
               CROVIA_SIGNING_KEY_FILE=str(key), CROVIA_POLITE_DELAYS="0")  # fmt: skip
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", "-s", "LOG_LEVEL=INFO",
            "-s", f"CROVIA_MAX_ENTRIES_PER_FEED={max(source.items, 2000)}"]  # fmt: skip
    run = timed(args, ROOT, env)
    with (run_dir / "ledger" / "axiom_ledger.jsonl").open("rb") as lines:
        issued = sum(1 for _ in lines) - 1  # the source's one fetch record
    if issued != source.items:
        record = (run_dir / "ledger" / "runs.jsonl").read_text().splitlines()[-1]
        sys.exit(f"bench: {source.label} issued {issued} items, expected {source.items}:\n{record}")
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sitemap-items", type=int, default=50_000)
    parser.add_argument("--jsonfeed-items", type=int, default=2_000)
    parser.add_argument("--quick", action="store_true", help="200 and 50 items, one round")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.sitemap_items, args.jsonfeed_items = 1, 200, 50
    if not 1 <= args.sitemap_items <= 50_000:
        parser.error("--sitemap-items is 1 to 50,000 (the protocol's URLs a file)")
    with tempfile.TemporaryDirectory(prefix="crovia-kinds-") as tmp:
        work = Path(tmp)
        (work / "www").mkdir()
        sources = write_sources(work / "www", args.sitemap_items, args.jsonfeed_items)
        key = work / "bench.key"
        generate_signing_key(key)
        server = serve(work / "www")
        base = f"http://127.0.0.1:{server.server_address[1]}"
        runs = measure(work, base, sources, key, args.rounds)
        server.shutdown()
    report(runs, args.rounds)
    return 0


def measure(
    work: Path, base: str, sources: list[Source], key: Path, rounds: int
) -> dict[Source, list[Run]]:
    """`rounds` crawls of each source, in alternating order so that drift in the machine's load
    falls on every kind alike."""
    runs: dict[Source, list[Run]] = {source: [] for source in sources}
    for n in range(rounds):
        for source in sources if n % 2 == 0 else reversed(sources):
            runs[source].append(crawl(work, base, source, key, f"r{n}-{source.file}"))
        times = ", ".join(f"{s.label} {r[-1].seconds:.2f}s" for s, r in runs.items())
        print(f"round {n + 1}: {times}", flush=True)
    return runs


def report(runs: dict[Source, list[Run]], rounds: int) -> None:
    print(f"items issued per second, median of {rounds} round(s), one fresh ledger a crawl:")
    for source, done in runs.items():
        seconds = statistics.median(r.seconds for r in done)
        print(f"  {source.label}: {source.items} items in {seconds:.2f}s,"
              f" {source.items / seconds:,.0f} items/s")  # fmt: skip
    peers = {source.items: runs[source] for source in runs if source.kind == "feed"}
    for source, done in runs.items():
        if source.kind == "feed":
            continue
        rss_runs = peers[source.items]
        wall = statistics.median(k.seconds / p.seconds for k, p in zip(done, rss_runs, strict=True))
        cpu = statistics.median(
            k.cpu_seconds / p.cpu_seconds for k, p in zip(done, rss_runs, strict=True)
        )
        verdict = "ok" if wall <= GOAL else "over"
        print(f"ratio {source.label}/rss {source.items}: {wall:.2f} (goal <= {GOAL}: {verdict});"
              f" CPU-time ratio {cpu:.2f}")  # fmt: skip
    print("load average (1, 5, 15 min): {:.1f} {:.1f} {:.1f} on {} cores".format(
        *os.getloadavg(), os.cpu_count()))  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
