"""Bench: what fetch records (AX.FETCH, issue 18) cost on disk, per record and per year.

Simulates FEEDS feeds crawled hourly for HOURS hours: each crawl issues one signed fetch record
per feed (a realistic mix: 60% 304, 20% the same body again, 20% a new body), seals, and publishes
the log with `crovia publish` (tiles, entry bundles, seals, one receipt per leaf), as the
scheduler does. It measures, per record: the ledger line, the index rows, the Merkle node files,
the seal and checkpoint lines, the published directory and, within it, the receipts; and the mean
gzip size of a kept feed body (tests/fixtures/feeds/, the larger real feeds). Then it states the
year for 200 feeds hourly (1,752,000 records). Nothing is asserted; the figures go to
docs/operations.md. Usage: python bench/fetch_sizing.py [--feeds N] [--hours N]. Offline.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from ledger.keys import generate_signing_key, load_signing_key  # noqa: E402
from ledger.records.fetch import (  # noqa: E402
    NEW_BODY,
    NOT_MODIFIED,
    UNCHANGED_BODY,
    entries_digest,
    new_fetch_envelope,
)
from ledger.store import Ledger  # noqa: E402

YEAR_RECORDS = 200 * 24 * 365


def fetch_envelope(feed: int, hour: int) -> dict:
    url = f"https://www.vendor-{feed:03d}.example.com/news/feed.xml"
    kind = (feed * 7 + hour) % 10
    outcome = NOT_MODIFIED if kind < 6 else UNCHANGED_BODY if kind < 8 else NEW_BODY
    at = f"2026-12-{1 + hour // 24:02d}T{hour % 24:02d}:{feed % 60:02d}:07.123456Z"
    digest = hashlib.sha256(f"{feed}-{hour // 6}".encode()).hexdigest()
    identities = [
        {"family": f"vendor_{feed:03d}", "guid": "", "link": f"{url}#{n}"} for n in range(30)
    ]
    fetch = {
        "fetched_at": at,
        "final_url": url,
        "status": 304 if kind < 6 else 200,
        "etag": f'"{digest[:32]}"',
        "last_modified": "Tue, 01 Dec 2026 04:00:00 GMT",
    }
    if kind >= 6:
        fetch["body_sha256"] = digest
    return new_fetch_envelope(
        spider="vendor_press", vendor=f"vendor_{feed:03d}", feed_url=url, outcome=outcome,
        fetched_at=at, run_hash=hashlib.sha256(str(hour).encode()).hexdigest(), fetch=fetch,
        body_sha256=digest,
        entries={"count": 30, "identities_sha256": entries_digest(identities), "limit": 2000},
        sent={"if_none_match": f'"{digest[:32]}"'},
        content_type="" if kind < 6 else "application/rss+xml; charset=utf-8",
    )  # fmt: skip


def size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feeds", type=int, default=200)
    parser.add_argument("--hours", type=int, default=24)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        key_file = work / "signing.key"
        generate_signing_key(key_file)
        key = load_signing_key(key_file)
        ledger_dir, public = work / "ledger", work / "public"
        for hour in range(args.hours):
            with Ledger.open(ledger_dir, signing_key=key) as ledger:
                ledger.issue([fetch_envelope(feed, hour) for feed in range(args.feeds)])
                ledger.seal(run_id=f"hour-{hour}")
            done = subprocess.run(
                [str(BIN / "crovia"), "publish", str(public), "--ledger-dir", str(ledger_dir)],
                capture_output=True, text=True, cwd=ROOT,
            )  # fmt: skip
            if done.returncode:
                sys.exit(done.stdout + done.stderr)
        records = args.feeds * args.hours
        parts = {
            "ledger (axiom_ledger.jsonl)": size(ledger_dir / "axiom_ledger.jsonl"),
            "index (index.sqlite)": size(ledger_dir / "index.sqlite"),
            "Merkle nodes (tree/)": size(ledger_dir / "tree"),
            "seals + checkpoints": size(ledger_dir / "seals.jsonl") + size(ledger_dir / "tlog"),
            "published log without receipts": size(public) - size(public / "receipts"),
            "receipts (published, one per leaf)": size(public / "receipts"),
        }
        print(f"{records} fetch records ({args.feeds} feeds x {args.hours} hourly crawls)")
        total = 0
        for name, value in parts.items():
            total += value
            per = value / records
            print(f"  {name:<38} {per:8.0f} B/record  {per * YEAR_RECORDS / 1e9:7.2f} GB/year")
        per = total / records
        print(f"  {'all of it':<38} {per:8.0f} B/record  {per * YEAR_RECORDS / 1e9:7.2f} GB/year")
    feeds = sorted((ROOT / "tests" / "fixtures" / "feeds").glob("*"), key=lambda p: -size(p))[:8]
    bodies = [len(gzip.compress(p.read_bytes(), compresslevel=6, mtime=0)) for p in feeds]
    mean = sum(bodies) // len(bodies)
    print(f"kept body: mean gzip size of the 8 largest fixture feeds {mean} B (raw "
          f"{sum(size(p) for p in feeds) // len(feeds)} B); per year for 200 feeds, by the number"
          " of distinct bodies a feed serves:")  # fmt: skip
    for per_day, what in ((1, "1 a day"), (4, "4 a day"), (24, "every fetch (no stable bytes)")):
        print(f"  {what:<32} {200 * 365 * per_day * mean / 1e9:7.2f} GB/year")


if __name__ == "__main__":
    main()
