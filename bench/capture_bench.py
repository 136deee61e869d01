"""Bench: capturing 1,000 pages (fetch, keep body and heads, extract the main text, sign an
AX.CAPTURE record each) against plain Scrapy fetching the same pages into a gzipped WARC with
warcio (bench/capture_peer.py), in one run, served from 127.0.0.1.

The site: 1,000 article pages of 10 to 30 KB (a head with inline style and script, a navigation
bar, an <article> of 8 to 32 paragraphs, related links, a footer with a nonce), a listing page
naming them all (a source of kind "page") and a robots.txt. Before every timed crawl the pages are
written again with a fresh nonce, so every fetch brings bytes never kept before, as a real page
with a nonce or a date in its footer does; the main text stays the same.

What is timed on our side is a recapture, `scrapy crawl vendor_press -s CROVIA_CAPTURE_ONLY=1
-s CROVIA_CAPTURE_ALL=1` (what `crovia capture --all` runs, without its launcher), in a copy of a
ledger seeded once by a crawl of the listing that issued the 1,000 items and captured their pages.
The seeding crawl's own captures are not what is timed: that crawl also fetches and reads the
listing and signs 1,000 items, which the peer does not do, so its time is no page-for-page
comparison; and recaptures are most of the captures a ledger makes (four in a page's first month
on the default schedule, one a month after), run from cron exactly like this. Its time is printed
once, for information. The timed crawl must add 1,000 capture records, each `unchanged` (the same
main text under a new footer), and the peer's WARC hold 1,000 response records, or the bench stops.

Both sides: the same 16 requests in flight and 2 per host (the project's
CONCURRENT_REQUESTS_PER_DOMAIN), no download delay (CROVIA_POLITE_DELAYS=0 on ours), no
AutoThrottle, robots.txt fetched and obeyed. Runs alternate (peer, ours, ...), each into a fresh
directory; the median of the per-round ratios ours/peer is printed (goal: <= 1.3), with the CPU-time
ratio (both processes of our crawl: it extracts text in a parser worker on the second core), what
one capture keeps, and the machine's load average, since a shared machine sways wall times.
Usage: python bench/capture_bench.py [--rounds N] [--pages N] [--workdir DIR]. Offline; about
two minutes for 1,000 pages and 3 rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from warcio.archiveiterator import ArchiveIterator  # noqa: E402

from bench.crawl_bench import FAST, Run, timed  # noqa: E402
from crovia_spider.demo import serve  # noqa: E402
from ledger.keys import generate_signing_key  # noqa: E402
from ledger.store import BodyStore  # noqa: E402

GOAL = 1.3
VOCABULARY = (
    "model training data evaluation benchmark release weights licence safety team research "
    "results performance reasoning language system users access policy update version report "
    "compute cluster tokens context window agents tools partners customers developers open "
    "source community feedback improvements latency throughput accuracy alignment testing red "
    "teaming deployment infrastructure regions pricing availability documentation examples "
    "the a of to and in for on with by from that this we our is are was were will can new more"
)
WORDS = VOCABULARY.split()
STYLE = "".join(f".c{i}{{margin:{i}px;padding:{i % 7}px;color:#{i * 4099 % 0xFFFFFF:06x}}}"
                for i in range(40))  # fmt: skip
SCRIPT = "".join(f"window.dataLayer.push({{event:'view',slot:{i},ts:Date.now()}});"
                 for i in range(12))  # fmt: skip


def paragraph(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(70, 120))]
    return (" ".join(words).capitalize() + ".").replace(" the the", " the")


def article(n: int, pages: int, nonce: str) -> bytes:
    """Page `n`: the same article on every call, a footer that differs with `nonce`."""
    rng = random.Random(n)
    title = " ".join(rng.choice(WORDS) for _ in range(6)).capitalize()
    nav = "".join(f'<li><a href="/section/{s}.html">Section {s}</a></li>' for s in range(30))
    text = "".join(f"<p>{paragraph(rng)}</p>" for _ in range(8 + n % 25))
    related = "".join(
        f'<li><a href="/articles/{(n + k) % pages:05d}.html">Related story {k}</a></li>'
        for k in range(1, 13)
    )
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{STYLE}</style><script>window.dataLayer=[];{SCRIPT}</script></head><body>"
        f"<header><a href='/'>Lab</a><nav><ul>{nav}</ul></nav></header>"
        f"<main><article><h1>{title}</h1><p class='byline'>By the research team,"
        f" {1 + n % 28} June 2026</p>{text}</article>"
        f"<aside><h2>Related</h2><ul>{related}</ul></aside></main>"
        f"<footer><p>Copyright 2026 Lab. All rights reserved.</p><p>Rendered by build"
        f" {nonce}-{n}, request {nonce}{n:05d}, nonce {hash((nonce, n)) & 0xFFFFFFFF:08x}</p>"
        "</footer></body></html>"
    ).encode()


def write_site(www: Path, pages: int) -> list[str]:
    """robots.txt, the listing page and the articles' directory; returns the article paths."""
    (www / "articles").mkdir(parents=True, exist_ok=True)
    (www / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    paths = [f"articles/{n:05d}.html" for n in range(pages)]
    cards = "".join(f'<li class="card"><a href="/{p}">Story {n}</a></li>'
                    for n, p in enumerate(paths))  # fmt: skip
    (www / "news.html").write_text(f"<!doctype html><html><body><ul>{cards}</ul></body></html>")
    return paths


def write_articles(www: Path, paths: list[str], nonce: str) -> None:
    for n, path in enumerate(paths):
        (www / path).write_bytes(article(n, len(paths), nonce))


def captures(ledger: Path) -> list[dict]:
    """The bodies of the ledger's capture records, in order."""
    with (ledger / "axiom_ledger.jsonl").open("rb") as lines:
        found = [json.loads(line) for line in lines if b'"AX.CAPTURE"' in line]
    return [e["body"] for e in found if e["axiom_type"] == "AX.CAPTURE"]


def crawl_env(run_dir: Path, key: Path) -> dict[str, str]:
    return dict(os.environ, CROVIA_FEEDS_FILE=str(run_dir / "feeds.toml"),
                CROVIA_LEDGER_DIR=str(run_dir / "ledger"), CROVIA_SIGNING_KEY_FILE=str(key),
                CROVIA_POLITE_DELAYS="0")  # fmt: skip


def seed(work: Path, base: str, key: Path, pages: int) -> Run:
    """One crawl of the listing: the ledger every timed crawl starts from a copy of."""
    run_dir = work / "seed"
    run_dir.mkdir()
    (run_dir / "feeds.toml").write_text(
        f'[[feeds]]\nvendor = "lab"\nurl = "{base}/news.html"\nkind = "page"\n'
        'selectors = { item = "li.card", link = "a", title = "a" }\n'
    )
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", *FAST,
            "-s", f"CROVIA_MAX_ENTRIES_PER_FEED={max(pages, 2000)}"]  # fmt: skip
    run = timed(args, ROOT, crawl_env(run_dir, key))
    first = [c for c in captures(run_dir / "ledger") if c["outcome"] == "first"]
    if len(first) != pages:
        sys.exit(f"bench: the seeding crawl captured {len(first)} pages first, expected {pages}")
    return run


def run_ours(work: Path, key: Path, pages: int, n: int) -> Run:
    run_dir = work / f"ours{n}"
    shutil.copytree(work / "seed", run_dir)
    # The copy and the rewritten pages are the bench's own writes: flushed before the clock
    # starts, so the crawl's syncs (its kept pages are durable before their records) flush only
    # what the crawl wrote. The peer's run starts after the same flush (it never syncs).
    os.sync()
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", *FAST,
            "-s", "CROVIA_CAPTURE_ONLY=1", "-s", "CROVIA_CAPTURE_ALL=1"]  # fmt: skip
    run = timed(args, ROOT, crawl_env(run_dir, key))
    new = captures(run_dir / "ledger")[pages:]
    wrong = [c for c in new if c["outcome"] != "unchanged"]
    if len(new) != pages or wrong:
        record = (run_dir / "ledger" / "runs.jsonl").read_text().splitlines()[-1]
        sys.exit(f"bench: the capture crawl signed {len(new)} capture records, expected {pages}"
                 f" all unchanged; {len(wrong)} not, e.g. {wrong[:1]}\n{record}")  # fmt: skip
    return run


def run_peer(work: Path, urls: Path, pages: int, n: int) -> Run:
    run_dir = work / f"peer{n}"
    run_dir.mkdir()
    os.sync()  # as before ours: the bench's own writes are not the peer's
    args = [str(BIN / "scrapy"), "runspider", str(ROOT / "bench" / "capture_peer.py"),
            "-a", f"urls_file={urls}", "-a", "warc=pages.warc.gz", *FAST,
            "-s", "ROBOTSTXT_OBEY=True"]  # fmt: skip
    run = timed(args, run_dir, dict(os.environ))
    records = warc_responses(run_dir / "pages.warc.gz")
    if records != pages:
        sys.exit(f"bench: the peer's WARC holds {records} response records, expected {pages}")
    return run


def warc_responses(path: Path) -> int:
    with path.open("rb") as stream:
        return sum(1 for record in ArchiveIterator(stream) if record.rec_type == "response")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--workdir", type=Path, help="work here and keep it (default: a temp dir)")
    args = parser.parse_args()
    if not 1 <= args.pages <= 50_000:
        parser.error("--pages is 1 to 50,000")
    with tempfile.TemporaryDirectory(prefix="crovia-capture-") as tmp:
        work = args.workdir or Path(tmp)
        (work / "www").mkdir(parents=True)
        paths = write_site(work / "www", args.pages)
        key = work / "bench.key"
        generate_signing_key(key)
        server = serve(work / "www")
        base = f"http://127.0.0.1:{server.server_address[1]}"
        (work / "urls.txt").write_text("".join(f"{base}/{p}\n" for p in paths))
        write_articles(work / "www", paths, "seed")
        seeded = seed(work, base, key, args.pages)
        print(f"seeding crawl (listing page, {args.pages:,} items, their first captures):"
              f" {seeded.seconds:.2f}s, not timed", flush=True)  # fmt: skip
        peers, ours = measure(work, paths, key, args.pages, args.rounds)
        server.shutdown()
        report(work, paths, peers, ours, args.pages)
    return 0


def measure(
    work: Path, paths: list[str], key: Path, pages: int, rounds: int
) -> tuple[list[Run], list[Run]]:
    peers, ours = [], []
    for n in range(rounds):
        write_articles(work / "www", paths, f"p{n}-{time.time_ns()}")
        peers.append(run_peer(work, work / "urls.txt", pages, n))
        write_articles(work / "www", paths, f"o{n}-{time.time_ns()}")
        ours.append(run_ours(work, key, pages, n))
        print(f"round {n + 1}: peer {peers[-1].seconds:.2f}s  ours {ours[-1].seconds:.2f}s  "
              f"ratio {ours[-1].seconds / peers[-1].seconds:.2f}", flush=True)  # fmt: skip
    return peers, ours


def report(work: Path, paths: list[str], peers: list[Run], ours: list[Run], pages: int) -> None:
    sizes = [(work / "www" / p).stat().st_size for p in paths]
    last_warc = work / f"peer{len(peers) - 1}" / "pages.warc.gz"
    mean = statistics.mean(sizes) / 1024
    print(f"{pages:,} pages of {min(sizes) / 1024:.0f} to {max(sizes) / 1024:.0f} KB"
          f" (mean {mean:.1f} KB), {len(ours)} alternating round(s)")  # fmt: skip
    print(f"last round: our ledger {pages:,} capture records (all unchanged), the peer's WARC"
          f" {warc_responses(last_warc):,} response records")  # fmt: skip
    peer_s = statistics.median(p.seconds for p in peers)
    ours_s = statistics.median(o.seconds for o in ours)
    print(f"median peer {peer_s:.2f}s ({pages / peer_s:,.0f} pages/s),"
          f" median ours {ours_s:.2f}s ({pages / ours_s:,.0f} captures/s)")  # fmt: skip
    wall = statistics.median(o.seconds / p.seconds for o, p in zip(ours, peers, strict=True))
    cpu = statistics.median(o.cpu_seconds / p.cpu_seconds for o, p in zip(ours, peers, strict=True))
    verdict = "ok" if wall <= GOAL else "over"
    print(f"median ratio ours/peer: {wall:.2f} (goal <= {GOAL}: {verdict});"
          f" median CPU-time ratio {cpu:.2f} (both processes counted)")  # fmt: skip
    kept = kept_per_capture(work / f"ours{len(ours) - 1}" / "ledger", pages)
    warc = last_warc.stat().st_size / pages
    print(f"kept per capture: body {kept['body']:,.0f} B gzipped (gzip ratio {kept['ratio']:.1f}),"
          f" main text {kept['text']:,.0f} B, heads {kept['heads']:,.0f} B; ledger line"
          f" {kept['line']:,.0f} B; peer WARC {warc:,.0f} B a page")  # fmt: skip
    print("load average (1, 5, 15 min): {:.1f} {:.1f} {:.1f} on {} cores".format(
        *os.getloadavg(), os.cpu_count()))  # fmt: skip


def kept_per_capture(ledger: Path, pages: int) -> dict[str, float]:
    """Mean bytes a capture of the timed crawl added: its blobs as kept in bodies/ (gzipped) and
    its ledger line; `ratio` is the page bodies' size over their gzipped size."""
    new = captures(ledger)[pages:]
    store = BodyStore(ledger)

    def gz(digests: list[str]) -> float:
        return sum(store.path(d).stat().st_size for d in digests) / len(new)

    body = gz([c["body_sha256"] for c in new])
    with (ledger / "axiom_ledger.jsonl").open("rb") as lines:
        line = [len(x) for x in lines if b'"AX.CAPTURE"' in x][pages:]
    return {
        "body": body,
        "ratio": sum(c["body_length"] for c in new) / len(new) / body,
        "text": gz([c["text"]["sha256"] for c in new]),
        "heads": gz([c[h] for c in new for h in ("request_head_sha256", "response_head_sha256")]),
        "line": sum(line) / len(line),
    }


if __name__ == "__main__":
    sys.exit(main())
