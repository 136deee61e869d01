"""Bench: browser captures beside plain captures of the same 100 JavaScript pages, on 127.0.0.1.

The site: PAGES article pages, each a shell whose text arrives by `fetch('/api/<n>.json')` from a
script, with a stylesheet and an image, a listing page naming them all (a source of kind "page")
and a robots.txt. Two crawls of the listing, each into a fresh ledger, alternating per round:

- plain: `capture = true`, the pages captured as one HTTP GET each (what a capture is without the
  browser);
- browser: `capture = "browser"`, every page captured plainly and then rendered by the system
  Chromium, every request of the page fetched through the crawl, screenshot, DOM, signed.

Both crawls also fetch the listing and sign its items, the same work on both sides. Each crawl's
process tree (the crawl, its parser worker and page keeper, and for the browser one Playwright's
driver and every Chromium process) is sampled every 0.2 s for its memory (each process's
proportional set size: Chromium's processes share most of their pages); its peak is
printed, the browser's processes apart. The browser crawl must sign PAGES browser captures, all
`complete`, or the bench stops. Printed: captures per minute of each crawl, the ratio of the two
crawls' times, peak memory, what a browser capture keeps, and what a day of browser captures
takes at that rate (CROVIA_BROWSER_CONCURRENCY pages at once, the default 2).

Usage: python bench/browser_bench.py [--pages N] [--rounds N] [--workdir DIR]. Offline; about two
minutes for 100 pages and one round on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from crovia_spider.capture.chromium import resident_bytes  # noqa: E402
from crovia_spider.demo import serve  # noqa: E402
from ledger.keys import generate_signing_key  # noqa: E402
from ledger.store import BodyStore  # noqa: E402

FAST = ("-s", "CROVIA_POLITE_DELAYS=0", "-s", "DOWNLOAD_DELAY=0", "-s", "LOG_LEVEL=INFO")
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201e5273de30000000049454e44ae426082"
)
APP = """fetch('/api/' + document.body.dataset.page + '.json').then((r) => r.json()).then((a) => {
  for (const text of a.paragraphs) {
    const p = document.createElement('p'); p.textContent = text;
    document.getElementById('more').append(p);
  }
});
"""
WORDS = [
    "model",
    "training",
    "data",
    "evaluation",
    "benchmark",
    "release",
    "weights",
    "licence",
    "safety",
    "research",
    "results",
    "performance",
    "reasoning",
    "language",
    "system",
    "users",
    "access",
    "policy",
    "update",
    "version",
    "report",
]


class Run(NamedTuple):
    seconds: float
    peak_mb: float  # the whole process tree's resident memory at its peak
    peak_browser_mb: float  # of which Playwright's driver and Chromium


def paragraph(n: int, k: int) -> str:
    return " ".join(WORDS[(n * 7 + k * 3 + i) % len(WORDS)] for i in range(60)).capitalize() + "."


def write_site(www: Path, pages: int) -> None:
    for folder in ("articles", "api", "static", "img"):
        (www / folder).mkdir(parents=True, exist_ok=True)
    (www / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    (www / "static" / "app.js").write_text(APP)
    (www / "static" / "site.css").write_text("body { font: 16px serif; max-width: 42em; }\n")
    cards = []
    for n in range(pages):
        static = "".join(f"<p>{paragraph(n, k)}</p>" for k in range(4))
        (www / "articles" / f"{n:04d}.html").write_text(
            "<!doctype html><html><head><meta charset='utf-8'><title>Story</title>"
            "<link rel='stylesheet' href='/static/site.css'></head>"
            f"<body data-page='{n:04d}'><nav><a href='/'>Home</a></nav><article><h1>Story {n}</h1>"
            f"{static}<img src='/img/{n:04d}.png' alt=''><div id='more'></div></article>"
            "<script src='/static/app.js'></script></body></html>"
        )
        answer = {"paragraphs": [paragraph(n, k) for k in range(4, 10)]}
        (www / "api" / f"{n:04d}.json").write_text(json.dumps(answer))
        (www / "img" / f"{n:04d}.png").write_bytes(PNG)
        cards.append(f'<li class="card"><a href="/articles/{n:04d}.html">Story {n}</a></li>')
    (www / "news.html").write_text(
        f"<!doctype html><html><body><ul>{''.join(cards)}</ul></body></html>"
    )


def tree_rss(pid: int) -> tuple[int, int]:
    """(memory of `pid` and its descendants, of which the browser's: node, Chromium), each
    process's proportional set size (crovia_spider/capture/chromium.py resident_bytes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    total = browser = 0
    todo = [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            command = Path(f"/proc/{current}/cmdline").read_bytes()
        except OSError:
            continue
        held = resident_bytes([current])  # proportional: shared pages counted once in all
        total += held
        if b"chrom" in command or b"run-driver" in command:
            browser += held
    return total, browser


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """Run `args`; its wall time and its process tree's peak memory (sampled every 0.2 s)."""
    peaks = [0, 0]
    with tempfile.TemporaryFile() as log:
        started = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=log, stderr=log)

        def sample() -> None:
            while proc.poll() is None:
                total, browser = tree_rss(proc.pid)
                peaks[0], peaks[1] = max(peaks[0], total), max(peaks[1], browser)
                time.sleep(0.2)  # a sampling period, not a synchronisation

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        proc.wait()
        elapsed = time.perf_counter() - started
        sampler.join()
        if proc.returncode != 0:
            log.seek(0)
            sys.exit(f"bench: {' '.join(args[:3])} failed:\n{log.read()[-3000:].decode()}")
    return Run(elapsed, peaks[0] / 2**20, peaks[1] / 2**20)


def crawl(work: Path, name: str, base: str, key: Path, capture: str, pages: int) -> Run:
    run_dir = work / name
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir()
    (run_dir / "feeds.toml").write_text(
        f'[[feeds]]\nvendor = "lab"\nurl = "{base}/news.html"\nkind = "page"\n'
        f"capture = {capture}\nselectors = {{ item = 'li.card', link = 'a', title = 'a' }}\n"
    )
    env = dict(
        os.environ,
        CROVIA_FEEDS_FILE=str(run_dir / "feeds.toml"),
        CROVIA_LEDGER_DIR=str(run_dir / "ledger"),
        CROVIA_SIGNING_KEY_FILE=str(key),
    )
    budgets = ("-s", f"CROVIA_CAPTURE_PAGES={pages}", "-s", f"CROVIA_BROWSER_PAGES={pages}")
    os.sync()  # the bench's own writes are not the crawl's
    run = timed([str(BIN / "scrapy"), "crawl", "vendor_press", *FAST, *budgets], ROOT, env)
    plain, browser = captures(run_dir / "ledger")
    if len(plain) != pages or (capture == '"browser"' and len(browser) != pages):
        sys.exit(f"bench: {name} signed {len(plain)} plain and {len(browser)} browser captures")
    wrong = [b for b in browser if b["browser"]["verdict"] != "complete"]
    if wrong:
        sys.exit(f"bench: {len(wrong)} browser captures not complete, e.g. {wrong[0]['browser']}")
    return run


def captures(ledger: Path) -> tuple[list[dict], list[dict]]:
    with (ledger / "axiom_ledger.jsonl").open("rb") as lines:
        found = [json.loads(line)["body"] for line in lines if b'"AX.CAPTURE"' in line]
    return [b for b in found if "mode" not in b], [b for b in found if b.get("mode")]


def kept_per_browser_capture(ledger: Path) -> tuple[float, int]:
    """Mean bytes a browser capture adds to bodies/ beyond its plain twin (its screenshot, DOM,
    manifest, its page's further bodies and heads, each kept once), and its ledger line."""
    plain, browser = captures(ledger)
    store = BodyStore(ledger)
    heads = ("body_sha256", "request_head_sha256", "response_head_sha256")
    twins = {b.get(name) for b in plain for name in heads}
    twins |= {(b.get("text") or {}).get("sha256") for b in plain}
    digests = set()
    for body in browser:
        facts = body["browser"]
        digests |= {facts["exchanges_sha256"], facts["screenshot"]["sha256"]}
        digests |= {facts["dom"]["sha256"], body["text"]["sha256"]}
        manifest = json.loads(store.get(body["browser"]["exchanges_sha256"]))
        for exchange in manifest["exchanges"]:
            digests.update(exchange.get(name) for name in heads)
    digests -= twins | {None}
    size = sum(store.path(d).stat().st_size for d in digests)
    return size / len(browser), len(json.dumps(browser[0]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workdir", type=Path, help="work here and keep it (default: a temp dir)")
    args = parser.parse_args()
    if not 1 <= args.pages <= 10_000:
        parser.error("--pages is 1 to 10,000")
    with tempfile.TemporaryDirectory(prefix="crovia-browser-") as tmp:
        work = args.workdir or Path(tmp)
        write_site(work / "www", args.pages)
        key = work / "bench.key"
        generate_signing_key(key)
        server = serve(work / "www")
        base = f"http://127.0.0.1:{server.server_address[1]}"
        plains, browsers = [], []
        for n in range(args.rounds):
            plains.append(crawl(work, f"plain{n}", base, key, "true", args.pages))
            browsers.append(crawl(work, f"browser{n}", base, key, '"browser"', args.pages))
            print(f"round {n + 1}: plain {plains[-1].seconds:.2f}s  browser"
                  f" {browsers[-1].seconds:.2f}s", flush=True)  # fmt: skip
        server.shutdown()
        report(work, args.pages, plains, browsers)
    return 0


def report(work: Path, pages: int, plains: list[Run], browsers: list[Run]) -> None:
    plain_s = statistics.median(r.seconds for r in plains)
    browser_s = statistics.median(r.seconds for r in browsers)
    extra = max(browser_s - plain_s, 1e-9)
    print(f"{pages:,} JavaScript pages (a script, a stylesheet, an image, an API answer each),"
          f" {len(plains)} round(s), median times")  # fmt: skip
    print(f"plain crawl: {pages:,} plain captures in {plain_s:.2f}s:"
          f" {pages / plain_s * 60:,.0f} captures/min")  # fmt: skip
    print(f"browser crawl: {pages:,} plain and {pages:,} browser captures in {browser_s:.2f}s:"
          f" {pages / browser_s * 60:,.0f} browser captures/min with their twins,"
          f" {pages / extra * 60:,.0f}/min for the browser's part alone")  # fmt: skip
    print(f"ratio browser crawl / plain crawl: {browser_s / plain_s:.2f}")
    peak = max(r.peak_mb for r in browsers)
    print(f"peak memory: plain crawl {max(r.peak_mb for r in plains):,.0f} MiB; browser crawl"
          f" {peak:,.0f} MiB, of which Chromium and its driver"
          f" {max(r.peak_browser_mb for r in browsers):,.0f} MiB")  # fmt: skip
    kept, line = kept_per_browser_capture(work / f"browser{len(browsers) - 1}" / "ledger")
    print(f"kept per browser capture beyond its twin: {kept:,.0f} B gzipped; ledger line"
          f" {line:,} B")  # fmt: skip
    per_day = pages / browser_s * 60 * 1440
    print(f"a day at this rate: {per_day:,.0f} browser captures (with their twins),"
          f" {per_day * kept / 1e9:,.1f} GB kept")  # fmt: skip
    print("load average (1, 5, 15 min): {:.1f} {:.1f} {:.1f} on {} cores".format(
        *os.getloadavg(), os.cpu_count()))  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
