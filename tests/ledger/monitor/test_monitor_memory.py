"""The monitor streams an increment (issue 19, obs 4): what a run holds does not grow with the
entries it checks but by a few bytes per entry (32 bytes per 256, for the tile roots). Measured
with tracemalloc between a first run over 2,048 entries and one over 12,288; the 1,000,000-entry
peak RSS is bench/monitor_bench.py's figure."""

from __future__ import annotations

import tracemalloc

from ledger.monitor import DirectorySource, MonitorState, monitor
from ledger.publish import publish
from tests.ledger.conftest import Log


def first_run_peak(log: Log) -> int:
    tracemalloc.start()
    try:
        report, _ = monitor(
            DirectorySource(log.pub), log.vkey, MonitorState.empty(log.origin), workers=1
        )
        assert report.entries == report.size
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_first_run_holds_a_few_bytes_per_entry(log: Log) -> None:
    log.grow(2048)
    publish(log.ledger_dir, log.pub)
    small = first_run_peak(log)
    log.grow(10240)
    publish(log.ledger_dir, log.pub)
    large = first_run_peak(log)
    assert (large - small) / 10240 < 32  # the whole increment held was about 260 bytes each
