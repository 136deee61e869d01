"""A ledger line too long for a tlog-tiles entry bundle is refused when it is issued."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nacl.signing
import pytest

from ledger.envelope import new_envelope
from ledger.exceptions import EntryTooLarge
from ledger.keys import sign_range
from ledger.store import Ledger
from ledger.tlog.tiles import MAX_ENTRY
from tests.vectors.make_vectors import sample_envelope, sample_record

KEY = nacl.signing.SigningKey(b"\x07" * 32)


def envelope_of_line_length(length: int, number: int, leaf_index: int) -> dict[str, Any]:
    """An envelope whose ledger line (without newline) at `leaf_index` is `length` bytes."""

    def build(padding: int) -> dict[str, Any]:
        record = sample_record(number)
        record["source_url"] += "x" * padding  # source_url appears once in the line
        return new_envelope(record, issued_at="2026-06-18T04:43:37Z")

    base = len(sign_range([build(0)], leaf_index, KEY)[0][1]) - 1
    envelope = build(length - base)
    assert len(sign_range([envelope], leaf_index, KEY)[0][1]) - 1 == length
    return envelope


def test_a_line_of_65535_bytes_is_issued(tmp_path: Path) -> None:
    with Ledger.open(tmp_path / "ledger", signing_key=KEY) as ledger:
        ledger.issue([sample_envelope(0), envelope_of_line_length(MAX_ENTRY, 1, 1)])
        assert ledger.leaf_count == 2


def test_a_line_of_65536_bytes_refuses_its_whole_batch_naming_the_leaf(tmp_path: Path) -> None:
    with Ledger.open(tmp_path / "ledger", signing_key=KEY) as ledger:
        ledger.issue([sample_envelope(0)])
        before = ledger.jsonl_path.read_bytes()
        batch = [sample_envelope(1), envelope_of_line_length(MAX_ENTRY + 1, 2, 2)]
        with pytest.raises(EntryTooLarge, match="leaf 2 is 65536 bytes"):
            ledger.issue(batch)
        assert ledger.leaf_count == 1
        assert ledger.jsonl_path.read_bytes() == before
        ledger.issue([sample_envelope(1)])  # the writer goes on: nothing was half-written
        assert ledger.leaf_count == 2
