"""The monitor streams an increment (issue 19, obs 4): what a run holds does not grow with the
entries it checks but by a few bytes per entry (32 bytes per 256, for the tile roots), plus the
bundles in its read-ahead window (2 * workers + 1 decoded, one being read). How many of those are
held at the peak depends on thread timing, so each peak is the least of three runs and the window
is the tolerance. Measured with
tracemalloc between a first run over 2,048 entries and one over 12,288; the 1,000,000-entry peak
RSS is bench/monitor_bench.py's figure."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from ledger.monitor import DirectorySource, MonitorState, monitor
from ledger.publish import publish
from tests.ledger.conftest import Log

WORKERS = 1
WINDOW = 2 * WORKERS + 2  # bundles: decoded and waiting, plus the one being read


def first_run_peak(log: Log) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        report, _ = monitor(
            DirectorySource(log.pub), log.vkey, MonitorState.empty(log.origin), workers=WORKERS
        )
        assert report.entries == report.size
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def largest_bundle(pub: Path) -> int:
    return max(path.stat().st_size for path in (pub / "tile" / "entries").iterdir())


def test_a_first_run_holds_a_few_bytes_per_entry(log: Log) -> None:
    log.grow(2048)
    publish(log.ledger_dir, log.pub)
    small = min(first_run_peak(log) for _ in range(3))
    log.grow(10240)
    publish(log.ledger_dir, log.pub)
    large = min(first_run_peak(log) for _ in range(3))
    window = WINDOW * largest_bundle(log.pub)
    # held all at once, the increment's 40 bundles would be about 22 MB
    assert large - small < 32 * 10240 + window


def test_a_run_holds_its_window_not_its_read_limits(log: Log) -> None:
    """A bundle may be 16 MiB (256 entries of 64 KiB); reading one that is 0.5 MiB must not
    allocate the limit first."""
    log.grow(2048)
    publish(log.ledger_dir, log.pub)
    assert first_run_peak(log) < WINDOW * largest_bundle(log.pub) + (2 << 20)
