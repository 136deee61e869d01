"""The audit's per-line shortcuts must give what the plain checks give (issue 19: an audit of a
ledger made by real crawls within one core's signature time):
- the signed bytes cut out of a canonical line, instead of encoding the envelope again, equal
  `signed_bytes`, whatever members an attacker adds or nests;
- a worker process answers a block that passed, index rows included, with its leaf hashes only,
  and the parent still finds every index row that is missing, edited or extra."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger import jsonl
from ledger.audit import audit, processes
from ledger.audit.keys import audit_keys
from ledger.audit.leaves import signed_from_line
from ledger.audit.seals import parse_seals
from ledger.canonical import canonical_json
from ledger.envelope import signed_bytes
from ledger.exceptions import IndexMismatch
from ledger.store import Ledger

SIGNATURE = "ed25519:" + "ab" * 64
AXIOM_ID = "axm_" + "0" * 64
values = st.sampled_from(["v", SIGNATURE, AXIOM_ID, ",", '"signature":'])
keys = st.sampled_from(["anchors", "axiom_id", "signature", "a", "body", "signaturf", "zk"])
inner = st.recursive(
    values | st.integers(0, 3),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)
envelopes = st.builds(
    lambda named, extra: {**extra, **named},
    st.fixed_dictionaries(
        {}, optional={"anchors": inner, "axiom_id": values | inner, "signature": values | inner}
    ),
    st.dictionaries(keys, inner, max_size=5),
)


@given(envelopes)
def test_signed_bytes_cut_from_the_line_equal_the_encoded_ones(envelope: dict) -> None:
    # Members repeated inside nested objects, at the top level in another order, missing, or
    # not strings: the cut must never differ from encoding the envelope without the two keys.
    assert signed_from_line(envelope, canonical_json(envelope)) == signed_bytes(envelope)


def test_a_ledger_lines_signed_bytes_are_cut_from_the_line_itself(sealed: Path) -> None:
    # The bytes come from the line, not from encoding the envelope again: an envelope changed
    # after its line was written still gives the line's signed bytes.
    for _offset, line in jsonl.iter_lines(sealed / "axiom_ledger.jsonl"):
        envelope = orjson.loads(line)
        expected = signed_bytes(envelope)
        envelope["body"] = {"changed": "after the line was written"}
        assert signed_from_line(envelope, line) == expected != signed_bytes(envelope)


@pytest.fixture
def sealed(filled: Path, key) -> Path:
    """14 leaves sealed at 11 and 14."""
    with Ledger.open(filled, signing_key=key) as ledger:
        ledger.seal()
    return filled


def _answers(directory: Path, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What the workers answer for each block of a few lines."""
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 4096)
    seals = parse_seals(list(jsonl.iter_lines(directory / "seals.jsonl")))
    keys = audit_keys(directory, None, seals, True)
    return list(processes.checked_blocks(directory / "axiom_ledger.jsonl", keys, directory, 2))


def _index(directory: Path, sql: str, *params: object) -> None:
    with sqlite3.connect(directory / "index.sqlite") as db:
        db.execute(sql, params)


def test_a_block_that_passed_comes_back_as_its_leaf_hashes(
    sealed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = _answers(sealed, monkeypatch)
    assert len(answers) > 3 and all(type(a) is processes.PassedBlock for a in answers)
    lines = [line for _offset, line in jsonl.iter_lines(sealed / "axiom_ledger.jsonl")]
    from ledger import merkle

    assert b"".join(a.leaf_hashes for a in answers) == b"".join(map(merkle.leaf_hash, lines))
    assert [a.first for a in answers] == sorted({a.first for a in answers})
    report = audit(sealed, processes=True)
    assert (report.leaves, report.index_rows_checked) == (14, 14)


def test_a_block_whose_row_differs_comes_back_whole_and_the_parent_names_the_leaf(
    sealed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _index(sealed, "UPDATE leaves SET vendor='someone_else' WHERE leaf_index=9")
    answers = _answers(sealed, monkeypatch)
    whole = [a for a in answers if type(a) is list]
    assert len(whole) == 1 and 9 in [facts.height for facts in whole[0]]
    with pytest.raises(IndexMismatch, match=r"leaf 9: .* in \['vendor'\]"):
        audit(sealed, processes=True)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("DELETE FROM leaves WHERE leaf_index=6", "leaf 6: no index row"),
        # A row under a leaf index no line has: never in a block's range, still found.
        (
            "INSERT INTO leaves SELECT -1, axiom_key, target_key, identity_key, identity,"
            " axiom_id, target_id, fingerprint, receipt_hash, run_hash, vendor, offset, length"
            " FROM leaves WHERE leaf_index=3",
            "leaf 0: no index row",
        ),
        (
            "INSERT INTO leaves SELECT 40, axiom_key, target_key, identity_key, identity,"
            " axiom_id, target_id, fingerprint, receipt_hash, run_hash, vendor, offset, length"
            " FROM leaves WHERE leaf_index=3",
            "beyond the ledger",
        ),
        ("DELETE FROM leaves WHERE leaf_index>=12", "leaf 12: no index row for leaves 12 to 13"),
    ],
)
def test_rows_missing_or_extra_are_found_around_blocks_that_passed(
    sealed: Path, monkeypatch: pytest.MonkeyPatch, sql: str, message: str
) -> None:
    _index(sealed, sql)
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 4096)
    with pytest.raises(IndexMismatch, match=message):
        audit(sealed, processes=True)
