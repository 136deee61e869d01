"""bench/cluster_bench.py stays runnable: its smallest size (4 hosts of 2 feeds, one round of 1, 2
and 4 workers; the sequencer's ceiling on 8 feeds of 125 items), every figure printed, and each
run's ledger holding what the crawl should have signed."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.benchrun import run_bench
from tests.cluster.harness import ledger_lines

NUMBER = r"[0-9][0-9,.]*"


@pytest.mark.slow
def test_the_cluster_bench_prints_every_figure(tmp_path: Path) -> None:
    stdout = run_bench("cluster_bench.py", "--quick", "--workdir", str(tmp_path), timeout=600)
    assert re.search(rf"round 1: 1 worker {NUMBER}s, 2 workers {NUMBER}s, 4 workers {NUMBER}s",
                     stdout), stdout  # fmt: skip
    assert "8 feeds of 3 items on 4 loopback hosts, delay 0.5 s a host" in stdout, stdout
    assert re.search(r"closest two requests to one host, any run: [0-9.]+ s apart \(delay 0.5 s:"
                     r" the slot shared by the workers held\)", stdout), stdout  # fmt: skip
    assert re.search(rf"politeness floor: {NUMBER} s with every host at once \({NUMBER} feeds/s\)",
                     stdout), stdout  # fmt: skip
    assert re.search(rf"1 worker: median {NUMBER}s, {NUMBER} feeds/s\n", stdout), stdout
    for workers in (2, 4):
        assert re.search(
            rf"{workers} workers: median {NUMBER}s, {NUMBER} feeds/s, speed-up {NUMBER}x against"
            " 1 worker",
            stdout,
        ), stdout
    assert re.search(
        rf"sequencer on results already in Redis: 1008 leaves \(8 fetch records, 1000 items\) in"
        rf" {NUMBER}s from its start to the run record, {NUMBER} leaves/s end to end",
        stdout,
    ), stdout
    assert re.search(rf"sequencer steady rate: {NUMBER} leaves/s \(leaves 500 to 1000,", stdout)
    assert re.search(
        rf"Ledger.issue alone, same run: 1008 envelopes in {NUMBER}s, {NUMBER}/s; ratio"
        rf" Ledger.issue/sequencer {NUMBER}x",
        stdout,
    ), stdout
    assert re.search(r"load average \(1, 5, 15 min\): [0-9. ]+ on \d+ cores", stdout), stdout

    # Each timed crawl signed every feed once with its items, in one finished run, whatever the
    # number of workers; the sequencer that took the run over signed every result once.
    for workers in (1, 2, 4):
        ledger = tmp_path / f"workers{workers}_round0" / "ledger"
        types = Counter(leaf["axiom_type"] for leaf in ledger_lines(ledger))
        assert types == {"AX.FETCH": 8, "AX.OBS": 24}, (workers, types)
        assert [run["outcome"] for run in run_records(ledger)] == ["finished"]
    ceiling = ledger_lines(tmp_path / "ceiling" / "ledger")
    assert Counter(leaf["axiom_type"] for leaf in ceiling) == {"AX.FETCH": 8, "AX.OBS": 1000}
    assert len({leaf["axiom_id"] for leaf in ceiling}) == 1008
    assert [run["outcome"] for run in run_records(tmp_path / "ceiling" / "ledger")] == ["finished"]


def run_records(ledger: Path) -> list[dict]:
    return [json.loads(line) for line in (ledger / "runs.jsonl").read_text().splitlines()]
