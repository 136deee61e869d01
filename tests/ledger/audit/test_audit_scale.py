"""Issue 19, observation 3: `crovia audit` kept a Python set of every leaf's axiom_id (about 110
bytes a leaf: 146 MB at 1M leaves), and read seals.jsonl when it started but checkpoints.jsonl when
it ended, so an audit that overlapped a seal failed falsely ("checkpoints.jsonl line N: no seal").
Now a repeat is found through the index, and the audit reads one snapshot fixed when it starts."""

from __future__ import annotations

import gc
import sqlite3
import subprocess
import sys
import tracemalloc
from pathlib import Path

import nacl.signing
import pytest

from ledger.audit import audit
from ledger.exceptions import DuplicateLeaf
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


def _grow(directory: Path, key: nacl.signing.SigningKey, start: int, count: int) -> None:
    with Ledger.open(directory, signing_key=key) as ledger:
        for first in range(start, start + count, 1000):
            ledger.issue(
                [sample_envelope(n) for n in range(first, min(first + 1000, start + count))]
            )
        ledger.seal()


def test_seals_during_an_audit_change_nothing_in_its_verdict(filled: Path, key) -> None:
    """A writer issues and seals after every batch the audit reads: what the audit reports is the
    ledger as it was when it started, and it passes."""
    _grow(filled, key, 100, 2000)  # several batches, so the writer runs between them
    before = audit(filled, pubkey_hex=bytes(key.verify_key).hex(), processes=False)
    grown = iter(range(10_000, 10_000_000, 7))

    def seal_more(_leaves: int) -> None:
        with Ledger.open(filled, signing_key=key) as ledger:
            ledger.issue([sample_envelope(next(grown)) for _ in range(3)])
            ledger.seal()

    during = audit(filled, progress=seal_more, processes=False)
    assert (during.leaves, during.seals, during.checkpoints) == (
        before.leaves,
        before.seals,
        before.checkpoints,
    )
    assert during.index_rows_checked == before.leaves and during.index_rows_pending == 0
    after = audit(filled)
    assert after.seals > before.seals and after.leaves > before.leaves


def test_seals_during_an_audit_on_worker_processes(filled: Path, key) -> None:
    _grow(filled, key, 100, 1200)
    before = audit(filled, processes=True)
    grown = iter(range(10_000, 10_000_000, 7))

    def seal_more(_leaves: int) -> None:
        with Ledger.open(filled, signing_key=key) as ledger:
            ledger.issue([sample_envelope(next(grown))])
            ledger.seal()

    during = audit(filled, progress=seal_more, processes=True)
    assert (during.leaves, during.seals) == (before.leaves, before.seals)


def test_a_replay_the_index_holds_too_is_refused(filled: Path, key) -> None:
    """Replayed at its right height (only the key holder can) and reindexed: the index then holds
    both rows and agrees with the JSONL, so only the uniqueness check can refuse it."""
    from tests.ledger.audit.test_audit_whole import _lines, _resigned, _write_lines

    lines = _lines(filled)
    _write_lines(filled, [*lines, _resigned(__import__("json").loads(lines[5]), 14, key)])
    subprocess.run(
        [sys.executable, "-m", "crovia_spider", "reindex", "--ledger-dir", str(filled)],
        check=True,
        capture_output=True,
    )
    rows = sqlite3.connect(filled / "index.sqlite").execute("SELECT COUNT(*) FROM leaves")
    assert rows.fetchone()[0] == 15
    for processes in (False, True):
        with pytest.raises(DuplicateLeaf, match=r"leaf 14 repeats the axiom_id of leaf 5"):
            audit(filled, processes=processes)


def _peak(directory: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        audit(directory, processes=False, workers=2)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_ledger(tmp_path: Path, key) -> None:
    """Peak memory the audit allocates on a ledger of 2,000 leaves and of 30,000 (numbered alike,
    so their lines are the same size). The batches in flight when the peak is taken vary from run
    to run with thread timing (up to 2 * workers of 0.5 MB each), so each peak is the least of
    two runs, and the bound is 1 MB (36 bytes a leaf, where the set cost over
    100); bench/scale_bench.py measures the process's RSS per leaf at 100k and 1M leaves."""
    small, large = tmp_path / "small", tmp_path / "large"
    _grow(small, key, 100_000, 2_000)
    _grow(large, key, 100_000, 30_000)
    _peak(small)  # imports and caches warmed once
    growth = min(_peak(large) for _ in range(2)) - min(_peak(small) for _ in range(2))
    assert growth <= 1 << 20, growth
