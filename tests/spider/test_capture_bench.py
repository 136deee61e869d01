"""bench/capture_bench.py stays runnable: 30 pages, one round, every figure printed, and both
sides kept what they fetched (our ledger 30 capture records, the peer's WARC 30 responses)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.benchrun import run_bench


@pytest.mark.slow
def test_the_capture_bench_prints_both_times_and_a_ratio(tmp_path: Path) -> None:
    args = ["--pages", "30", "--rounds", "1", "--workdir", str(tmp_path)]
    stdout = run_bench("capture_bench.py", *args, timeout=300)
    assert re.search(r"seeding crawl \(listing page, 30 items, their first captures\): [0-9.]+s",
                     stdout), stdout  # fmt: skip
    assert re.search(r"round 1: peer [0-9.]+s  ours [0-9.]+s  ratio [0-9.]+", stdout), stdout
    assert re.search(r"median peer [0-9.]+s \([0-9,]+ pages/s\), median ours [0-9.]+s", stdout)
    assert re.search(r"median ratio ours/peer: [0-9.]+ \(goal <= 1.3: (ok|over)\)", stdout)
    assert re.search(r"kept per capture: body [0-9,]+ B gzipped \(gzip ratio [0-9.]+\)", stdout)
    assert "last round: our ledger 30 capture records (all unchanged), the peer's WARC 30" in stdout
    assert "load average (1, 5, 15 min):" in stdout
    # What each side kept, read back here: 30 captures seeded and 30 timed; 30 WARC responses.
    with (tmp_path / "ours0" / "ledger" / "axiom_ledger.jsonl").open() as lines:
        leaves = [json.loads(line) for line in lines]
    outcomes = [e["body"]["outcome"] for e in leaves if e["axiom_type"] == "AX.CAPTURE"]
    assert outcomes == ["first"] * 30 + ["unchanged"] * 30
    with (tmp_path / "peer0" / "pages.warc.gz").open("rb") as warc:
        kinds = [record.rec_type for record in ArchiveIterator(warc)]
    assert kinds.count("response") == 30 and kinds.count("request") == 30
