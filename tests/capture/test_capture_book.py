"""The capture book is a cache of the ledger: lost, damaged or behind, it is rebuilt from the
capture records, so no capture is chained to the wrong one or judged against a stale version.
Also its schedule: when a page is due again after it was first seen."""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path

import pytest

from crovia_spider.capture.book import BOOK_FILE, next_due, parse_schedule
from tests.capture.pages import script_site
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, leaves, run_crawl
from tests.feedserver import FeedServer

FAST = ["-s", "CROVIA_POLITE_DELAYS=0", "-s", "DOWNLOAD_DELAY=0", "-s", "RETRY_BACKOFF_BASE=0"]


def capture_all(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BIN / "crovia"), "capture", "--all", *FAST],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def chains(tmp_path: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for envelope in leaves(tmp_path):
        if envelope["axiom_type"] == "AX.CAPTURE":
            out.setdefault(envelope["body"]["url"], []).append(envelope)
    return out


@pytest.mark.slow
def test_a_lost_damaged_or_stale_book_is_rebuilt_from_the_ledger(tmp_path):
    book = tmp_path / "ledger" / BOOK_FILE
    with FeedServer() as server:
        assert run_crawl(tmp_path, script_site(server)).returncode == 0  # round 1
        stale = book.read_bytes()
        capture_all(tmp_path)  # round 2: the book now names round 2's records
        book.write_bytes(stale)  # as if round 2 had been killed before saving its book
        capture_all(tmp_path)  # round 3: edited, removed, moved
        book.unlink()  # lost
        capture_all(tmp_path)  # round 4
        book.write_text("{not json", encoding="utf-8")  # damaged
        capture_all(tmp_path)  # round 5
    found = chains(tmp_path)
    assert sorted(tuple(e["body"]["outcome"] for e in chain) for chain in found.values()) == sorted(
        [
            ("first", "unchanged", "edited", "unchanged", "unchanged"),
            ("first", "unchanged", "removed", "removed", "removed"),
            ("first", "unchanged", "moved", "unchanged", "unchanged"),
        ]
    )
    for chain in found.values():
        assert chain[0]["predecessors"] == []
        for before, after in itertools.pairwise(chain):
            assert after["predecessors"] == [before["axiom_id"]]
    saved = json.loads(book.read_text(encoding="utf-8"))
    ledger_file = tmp_path / "ledger" / "axiom_ledger.jsonl"
    assert saved["ledger_bytes"] == ledger_file.stat().st_size
    assert {page["last"] for page in saved["pages"].values()} == {
        chain[-1]["axiom_id"] for chain in found.values()
    }


def test_schedule_grows_from_first_seen_then_repeats_its_last_interval():
    schedule = parse_schedule("1h,1d,7d,30d")
    first = "2026-12-01T00:00:00Z"
    assert next_due(first, "2026-12-01T00:00:05Z", schedule) == "2026-12-01T01:00:00Z"
    assert next_due(first, "2026-12-01T01:00:00Z", schedule) == "2026-12-02T00:00:00Z"
    assert next_due(first, "2026-12-05T00:00:00Z", schedule) == "2026-12-08T00:00:00Z"
    # Late (a crawl that did not run for weeks): the next time ahead, once.
    assert next_due(first, "2026-12-20T00:00:00Z", schedule) == "2026-12-31T00:00:00Z"
    assert next_due(first, "2026-12-31T00:00:00Z", schedule) == "2027-01-30T00:00:00Z"
    assert next_due(first, "2027-03-01T00:00:00Z", schedule) == "2027-03-31T00:00:00Z"


@pytest.mark.parametrize("text", ["", "1h,1h", "1d,1h", "0s", "1w", "1h;1d", "10"])
def test_a_bad_schedule_is_refused(text):
    with pytest.raises(ValueError):
        parse_schedule(text)
