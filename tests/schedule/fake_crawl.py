"""A stand-in for `scrapy crawl NAME ...` in scheduler tests: no Scrapy, no network, same contract.

Invoked as `python fake_crawl.py crawl NAME [ARGS...]` (CROVIA_SCRAPY_COMMAND points here), or
`... list` (spiders "demo" and "other"). A crawl logs its life to $FAKE_CRAWL_LOG as JSON lines
(start, term, end), works for $FAKE_CRAWL_SECONDS, then appends a run record to
$CROVIA_LEDGER_DIR/runs.jsonl as a crawl does. Like Scrapy, the first SIGTERM makes it wind up
early and still write its record, unless $FAKE_CRAWL_IGNORE_TERM is set.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path


class Terminated(Exception):
    """Raised by the SIGTERM handler to cut the work short, as Scrapy's graceful stop does."""


def note(event: str) -> None:
    line = {"event": event, "pid": os.getpid(), "argv": sys.argv[1:], "t": time.time()}
    with open(os.environ["FAKE_CRAWL_LOG"], "a") as fh:
        fh.write(json.dumps(line) + "\n")


def on_term(signum: int, frame: object) -> None:
    raise Terminated


def main() -> None:
    if sys.argv[1] == "list":  # `scrapy list`, as the scheduler checks job spiders with it
        print("demo\nother")
        return
    started = time.time()
    try:
        signal.signal(
            signal.SIGTERM, signal.SIG_IGN if os.environ.get("FAKE_CRAWL_IGNORE_TERM") else on_term
        )
        note("start")
        print(f"fake_crawl: working pid={os.getpid()}", file=sys.stderr, flush=True)
        time.sleep(float(os.environ.get("FAKE_CRAWL_SECONDS", "0")))  # the "crawl" itself
    except Terminated:
        note("term")
    record = {
        "run_id": f"fake-{os.getpid()}",
        "spider": sys.argv[2],
        "started_at": started,
        "finished_at": time.time(),
        "outcome": "finished",
        "totals": {"new": 3, "updated": 1},
    }
    ledger = Path(os.environ["CROVIA_LEDGER_DIR"])
    ledger.mkdir(parents=True, exist_ok=True)
    with (ledger / "runs.jsonl").open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    note("end")


if __name__ == "__main__":
    main()
