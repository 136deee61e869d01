"""Bench: records per second of one OAI-PMH harvest (docs/spider.md, "arXiv, complete"), against
an arXiv RSS feed of the same papers, both served from 127.0.0.1 and measured in one run.

The endpoint is the test fixture (tests/spider/oaipmh_server.py): N arXivRaw records of one day in
pages of 1,000 (arXiv's own page size), with resumption tokens; the harvest asks for that day and
today (no record: one more request). The RSS side is the 2024+ arXiv RSS of the same N papers
(same ids, titles and abstracts), its entry limit lifted to N (CROVIA_MAX_ENTRIES_PER_FEED). Each
crawl is a real `scrapy crawl vendor_press` of one source into a fresh ledger, politeness off
(CROVIA_POLITE_DELAYS=0: arXiv's 3 s a request would otherwise be most of the harvest), every
record issued (the bench stops otherwise). The two alternate within a round, in reversed order
every other round; printed: the median records per second of each, the median ratio of wall
times harvest/RSS (no goal: the harvest reads more pages and every version's metadata), the
CPU-time ratio and the load average.
Usage: python bench/oaipmh_bench.py [--rounds N] [--records N] [--quick]. Offline; about a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from bench.crawl_bench import Run, timed  # noqa: E402
from ledger.keys import generate_signing_key  # noqa: E402
from tests.spider.oaipmh_server import OaiServer, Paper, rss  # noqa: E402

PAGE = 1000  # records a page, as arXiv serves them


def papers(n: int, day: str) -> list[Paper]:
    return [Paper(f"2611.{i:05d}", day, versions=1 + i % 3, categories="cs.AI cs.LG")
            for i in range(n)]  # fmt: skip


def crawl(work: Path, name: str, feed: dict[str, object], key: Path, *extra: str) -> Run:
    run_dir = work / name
    run_dir.mkdir()
    table = "".join(f"{k} = {json.dumps(v)}\n" for k, v in feed.items())
    (run_dir / "feeds.toml").write_text("[[feeds]]\n" + table, encoding="utf-8")
    env = dict(os.environ, CROVIA_FEEDS_FILE=str(run_dir / "feeds.toml"),
               CROVIA_LEDGER_DIR=str(run_dir / "ledger"), CROVIA_SIGNING_KEY_FILE=str(key),
               CROVIA_POLITE_DELAYS="0", CROVIA_CAPTURE="0")  # fmt: skip
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", "-s", "LOG_LEVEL=WARNING", *extra]
    return timed(args, ROOT, env)


def issued(work: Path, name: str) -> int:
    path = work / name / "ledger" / "axiom_ledger.jsonl"
    return sum(b'"axiom_type":"AX.OBS"' in line for line in path.read_bytes().splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="one round of 300 records")
    args = parser.parse_args()
    rounds, n = (1, 300) if args.quick else (args.rounds, args.records)
    day = (datetime.now(UTC).date() - timedelta(days=1)).isoformat()
    records = papers(n, day)
    times: dict[str, list[Run]] = {"oaipmh": [], "rss": []}
    with tempfile.TemporaryDirectory() as scratch, OaiServer(records, page_size=PAGE) as server:
        work = Path(scratch)
        key = work / "signing.key"
        generate_signing_key(key)
        announced = [(p, "new" if p.versions == 1 else "replace") for p in records]
        server.rss["cs.AI"] = rss("cs.AI", datetime.now(UTC).date(), announced)
        sources = {
            "oaipmh": ({"vendor": "arxiv_oai", "url": server.url, "kind": "oaipmh", "set": "cs"},
                       ("-s", f"CROVIA_OAI_FROM={day}")),
            "rss": ({"vendor": "arxiv_cs_ai", "url": server.rss_url("cs.AI")},
                    ("-s", f"CROVIA_MAX_ENTRIES_PER_FEED={n}")),
        }  # fmt: skip
        for r in range(rounds):
            order = list(sources) if r % 2 == 0 else list(reversed(sources))
            for kind in order:
                feed, extra = sources[kind]
                run = crawl(work, f"{kind}{r}", feed, key, *extra)
                got = issued(work, f"{kind}{r}")
                if got != n:
                    sys.exit(f"bench: the {kind} crawl issued {got} of {n} records")
                times[kind].append(run)
                print(f"  {kind}: {n} records in {run.seconds:.2f}s ({n / run.seconds:,.0f}/s,"
                      f" CPU {run.cpu_seconds:.2f}s)")  # fmt: skip
    for kind, runs in times.items():
        rate = statistics.median(n / run.seconds for run in runs)
        print(f"{kind}: median {rate:,.0f} records/s over {len(runs)} crawl(s) of {n}")
    ratio = statistics.median(o.seconds / r.seconds for o, r in zip(*times.values(), strict=True))
    cpu = statistics.median(
        o.cpu_seconds / r.cpu_seconds for o, r in zip(*times.values(), strict=True)
    )
    print(f"ratio oaipmh/rss: {ratio:.2f} (CPU-time {cpu:.2f})")
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
