"""`seal_every=N` cuts a seal every N leaves, whatever the batch size: a batch is split there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.audit import audit
from ledger.exceptions import DuplicateAxiom
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


def seal_counts(ledger_dir: Path) -> list[int]:
    path = ledger_dir / "seals.jsonl"
    lines = path.read_bytes().splitlines() if path.exists() else []
    return [json.loads(line)["leaf_count"] for line in lines]


def test_one_batch_larger_than_n_is_sealed_every_n(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key, seal_every=50) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(177)])
        assert [item.leaf_index for item in issued] == list(range(177))
        assert seal_counts(ledger_dir) == [50, 100, 150]
        ledger.seal()
    assert seal_counts(ledger_dir) == [50, 100, 150, 177]
    assert audit(ledger_dir).seals == 4


def test_small_batches_are_split_where_the_count_reaches_n(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key, seal_every=50) as ledger:
        for start in range(0, 120, 30):
            ledger.issue([sample_envelope(n) for n in range(start, start + 30)])
    assert seal_counts(ledger_dir) == [50, 100]


def test_counting_restarts_after_a_manual_seal(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key, seal_every=10) as ledger:
        ledger.issue([sample_envelope(n) for n in range(4)])
        ledger.seal()
        ledger.issue([sample_envelope(n) for n in range(4, 30)])
    assert seal_counts(ledger_dir) == [4, 14, 24]


def test_a_split_batch_is_still_all_or_nothing(ledger_dir: Path, key) -> None:
    """A duplicate in the part after the boundary: nothing of the batch is written or sealed."""
    with Ledger.open(ledger_dir, signing_key=key, seal_every=5) as ledger:
        ledger.issue([sample_envelope(0)])
        with pytest.raises(DuplicateAxiom):
            ledger.issue([sample_envelope(n) for n in range(1, 12)] + [sample_envelope(0)])
        assert ledger.leaf_count == 1
    assert seal_counts(ledger_dir) == []
    assert len((ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()) == 1
