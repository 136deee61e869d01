"""`crovia audit` passing means the ledger is whole (issue 9): every signature was checked against a
key, every line is an envelope at its own height, no axiom_id is repeated, and the index agrees
with the JSONL row for row. Each refusal exits 1 naming the leaf."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import nacl.signing
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crovia_spider.cli import main
from ledger import jsonl
from ledger.audit import audit
from ledger.canonical import canonical_json
from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, axiom_id_of, sign_envelope
from ledger.exceptions import (
    AnchorMismatch,
    CanonicalizationError,
    DuplicateLeaf,
    EnvelopeMalformed,
    IndexMismatch,
    LineInvalid,
    NoAuditKey,
    SignatureInvalid,
)
from ledger.keys import check_envelope_signature
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


@pytest.fixture
def sealed(filled: Path, key) -> Path:
    """14 leaves sealed at 11 and 14."""
    with Ledger.open(filled, signing_key=key) as ledger:
        ledger.seal()
    return filled


def _lines(directory: Path) -> list[bytes]:
    return (directory / "axiom_ledger.jsonl").read_bytes().splitlines(keepends=True)


def _write_lines(directory: Path, lines: list[bytes]) -> None:
    (directory / "axiom_ledger.jsonl").write_bytes(b"".join(lines))


def _audit_json(directory: Path, capsys: pytest.CaptureFixture, *extra: str) -> tuple[int, dict]:
    code = main(["audit", "--ledger-dir", str(directory), "--json", *extra])
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return code, json.loads(out)


def _resigned(envelope: dict, height: int, key: nacl.signing.SigningKey) -> bytes:
    """What only the key holder can write: `envelope` signed again at anchor height `height`."""
    anchors = [{"chain": ANCHOR_CHAIN, "height": height, **ANCHOR_SEE_RECEIPT}]
    return canonical_json(sign_envelope(envelope, anchors, key)) + b"\n"


def test_a_whole_ledger_reports_what_was_checked(sealed: Path, key, capsys) -> None:
    public = bytes(key.verify_key).hex()
    code, report = _audit_json(sealed, capsys, "--pubkey", public)
    assert code == 0 and report["ok"] is True
    assert (report["leaves"], report["signatures_verified"], report["seals"]) == (14, 14, 2)
    assert report["unsealed_leaves"] == 0 and report["index_rows_checked"] == 14
    assert report["key_pinned"] is True and report["key_ids"] == [sealed_key_id(sealed)]


def sealed_key_id(directory: Path) -> str:
    return json.loads((directory / "seals.jsonl").read_bytes().splitlines()[0])["key_id"]


def test_unsealed_leaves_are_reported_and_verified_under_the_ledgers_key(
    filled: Path, key, capsys
) -> None:
    code, report = _audit_json(filled, capsys)
    assert code == 0 and report["unsealed_leaves"] == 3 and report["signatures_verified"] == 14
    lines = _lines(filled)
    forged = nacl.signing.SigningKey.generate()
    lines[12] = _resigned(json.loads(lines[12]), 12, forged)
    _write_lines(filled, lines)
    with pytest.raises(SignatureInvalid, match="leaf 12"):
        audit(filled)


def _delete_seals_and_edit_leaf_4(sealed: Path) -> None:
    """What someone with write access but no key can do: drop the seals, edit a leaf and
    recompute its axiom_id (its signature no longer verifies)."""
    (sealed / "seals.jsonl").unlink()
    lines = _lines(sealed)
    envelope = json.loads(lines[4])
    envelope["body"]["title"] = "Edited"
    envelope["axiom_id"] = axiom_id_of(envelope)
    lines[4] = canonical_json(envelope) + b"\n"
    _write_lines(sealed, lines)


def test_seals_deleted_and_a_leaf_edited_is_not_a_pass(sealed: Path, capsys) -> None:
    """No seal and no --pubkey: no signature can be checked, so the audit cannot pass."""
    _delete_seals_and_edit_leaf_4(sealed)
    code, report = _audit_json(sealed, capsys)
    assert code == 1 and report["check"] == "audit_key"
    assert "no seal" in report["message"] and "--pubkey" in report["message"]
    with pytest.raises(NoAuditKey):
        audit(sealed)


def test_seals_deleted_with_a_pinned_key_names_the_edited_leaf(sealed: Path, key, capsys) -> None:
    _delete_seals_and_edit_leaf_4(sealed)
    code, report = _audit_json(sealed, capsys, "--pubkey", bytes(key.verify_key).hex())
    assert code == 1 and report["check"] == "envelope_signature" and "leaf 4" in report["message"]


def test_an_empty_ledger_without_a_seal_has_nothing_unchecked(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key):
        pass
    report = audit(ledger_dir)
    assert report.leaves == 0 and report.signatures_verified == 0


def test_a_replayed_line_is_refused_naming_both_leaves(sealed: Path, key, capsys) -> None:
    lines = _lines(sealed)
    _write_lines(sealed, [*lines, lines[3]])
    for pin in ([], ["--pubkey", bytes(key.verify_key).hex()]):
        code, report = _audit_json(sealed, capsys, *pin)
        assert code == 1 and report["check"] == "duplicate_axiom"
        assert "leaf 14" in report["message"] and "leaf 3" in report["message"]


def test_a_repeated_axiom_id_at_the_right_height_is_still_refused(sealed: Path, key) -> None:
    """Even re-signed by the key holder at its new height, a second copy of an axiom is refused."""
    lines = _lines(sealed)
    _write_lines(sealed, [*lines, _resigned(json.loads(lines[3]), 14, key)])
    with pytest.raises(DuplicateLeaf, match=r"leaf 14 repeats the axiom_id of leaf 3"):
        audit(sealed)


@pytest.mark.parametrize("processes", [True, False])
def test_a_refusal_leaves_no_worker_running(sealed: Path, key, processes: bool) -> None:
    """The refusal is raised while the workers hold later batches: they stop with it, not when
    the refused audit's frames are garbage collected."""
    lines = _lines(sealed)
    _write_lines(sealed, [*lines, _resigned(json.loads(lines[3]), 14, key)])
    threads, children = set(threading.enumerate()), set(multiprocessing.active_children())
    with pytest.raises(DuplicateLeaf) as caught:
        audit(sealed, processes=processes)
    assert set(threading.enumerate()) <= threads
    assert set(multiprocessing.active_children()) <= children
    del caught


def test_a_wrong_anchor_height_is_refused(sealed: Path, key) -> None:
    lines = _lines(sealed)
    lines[5] = _resigned(json.loads(lines[5]), 6, key)
    _write_lines(sealed, lines)
    with pytest.raises(AnchorMismatch, match="leaf 5") as caught:
        audit(sealed, pubkey_hex=bytes(key.verify_key).hex())
    assert (caught.value.expected, caught.value.computed) == (5, 6)


def test_a_seal_is_not_an_envelope(sealed: Path, key, capsys) -> None:
    """A seal's fields plus its own signature verify as an envelope signature: only the shape
    (key set, schema, axiom_type) tells them apart."""
    seal = json.loads((sealed / "seals.jsonl").read_bytes().splitlines()[0])
    fake = {k: v for k, v in seal.items() if k not in ("signature", "sig_algorithm")}
    fake["axiom_id"] = axiom_id_of(fake)
    fake["signature"] = "ed25519:" + seal["signature"]
    check_envelope_signature(fake, key.verify_key)  # the forgery is real: its signature holds
    _write_lines(sealed, [*_lines(sealed), canonical_json(fake) + b"\n"])
    code, report = _audit_json(sealed, capsys)
    assert code == 1 and report["check"] == "envelope_shape" and "leaf 14" in report["message"]
    with pytest.raises(EnvelopeMalformed, match="leaf 14"):
        audit(sealed, pubkey_hex=bytes(key.verify_key).hex())


@pytest.mark.parametrize(
    ("field", "value"),
    [("schema", "crovia.axiom.v2"), ("axiom_type", "AX.SEAL"), ("extra", "x")],
)
def test_a_signed_line_of_another_shape_is_refused(
    sealed: Path, key, field: str, value: str
) -> None:
    lines = _lines(sealed)
    envelope = json.loads(lines[2])
    envelope[field] = value
    lines[2] = _resigned(envelope, 2, key)
    _write_lines(sealed, lines)
    with pytest.raises(EnvelopeMalformed, match=rf"leaf 2: .*{field}"):
        audit(sealed)


def _index(directory: Path, sql: str, *params: object) -> None:
    with sqlite3.connect(directory / "index.sqlite") as db:
        db.execute(sql, params)


def test_a_deleted_index_row_is_refused(sealed: Path, capsys) -> None:
    _index(sealed, "DELETE FROM leaves WHERE leaf_index=?", 5)
    code, report = _audit_json(sealed, capsys)
    assert code == 1 and report["check"] == "index" and "leaf 5" in report["message"]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("vendor", "someone_else"),
        ("axiom_id", "axm_" + "0" * 64),
        ("axiom_key", 7),
        ("offset", 0),
        ("target_id", "https://example.org/"),
        ("identity", "0" * 64),
        ("identity_key", 7),
    ],
)
def test_an_index_row_that_disagrees_is_refused(sealed: Path, column: str, value) -> None:
    _index(sealed, f"UPDATE leaves SET {column}=? WHERE leaf_index=?", value, 9)
    with pytest.raises(IndexMismatch, match="leaf 9"):
        audit(sealed)


def test_index_rows_beyond_the_ledger_and_a_missing_index_are_refused(sealed: Path) -> None:
    _index(
        sealed,
        "INSERT INTO leaves SELECT leaf_index + 100, axiom_key, target_key, identity_key, identity,"
        " axiom_id, target_id, fingerprint, receipt_hash, run_hash, vendor, offset, length"
        " FROM leaves WHERE leaf_index=0",
    )
    with pytest.raises(IndexMismatch, match="beyond"):
        audit(sealed)
    (sealed / "index.sqlite").unlink()
    with pytest.raises(IndexMismatch, match="crovia reindex"):
        audit(sealed)
    assert main(["reindex", "--ledger-dir", str(sealed)]) == 0
    assert audit(sealed).index_rows_checked == 14


def test_a_line_appended_after_sealing_with_another_key_fails(sealed: Path, capsys) -> None:
    other = nacl.signing.SigningKey.generate()
    _write_lines(sealed, [*_lines(sealed), _resigned(sample_envelope(40), 14, other)])
    code, report = _audit_json(sealed, capsys)
    assert code == 1 and report["check"] == "envelope_signature" and "leaf 14" in report["message"]


@pytest.mark.parametrize(("field", "value"), [("schema", "crovia.seal.v1"), ("extra", "x")])
def test_the_writer_refuses_what_audit_would(ledger_dir: Path, key, field: str, value) -> None:
    """A non-envelope is refused before anything is written, not found later by the audit."""
    from ledger.exceptions import InvalidRecord

    bad = sample_envelope(1)
    bad[field] = value
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(0)])
        with pytest.raises(InvalidRecord, match=field):
            ledger.issue([sample_envelope(2), bad])
        assert ledger.leaf_count == 1


@pytest.mark.parametrize("processes", [True, False])
def test_rows_a_live_writer_has_not_committed_are_pending_not_failed(
    sealed: Path, key, processes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines durable, rows not yet committed: what an audit during a crawl can meet."""
    from ledger.audit import processes as worker_processes

    monkeypatch.setattr(worker_processes, "_BLOCK_BYTES", 4096)  # blocks before and at the gap
    _index(sealed, "DELETE FROM leaves WHERE leaf_index>=?", 12)
    with Ledger.open(sealed, writer=True):  # recovery re-adds the rows, as a writer would
        pass
    with Ledger.open(sealed, signing_key=key):
        _index(sealed, "DELETE FROM leaves WHERE leaf_index>=?", 12)
        report = audit(sealed, processes=processes)
        assert (report.index_rows_checked, report.index_rows_pending) == (12, 2)
    with pytest.raises(IndexMismatch, match="leaf 12: no index row for leaves 12 to 13"):
        audit(sealed, processes=processes)


def test_leaves_appended_during_the_audit_are_not_held_against_it(sealed: Path, key) -> None:
    def append_more(_leaves: int) -> None:
        with Ledger.open(sealed, signing_key=key) as ledger:
            ledger.issue([sample_envelope(n) for n in range(50, 53)])

    report = audit(sealed, progress=append_more)
    assert report.leaves == 14 and report.index_rows_checked == 14
    assert audit(sealed).leaves == 17


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(value=JSON_VALUES)
def test_every_line_that_is_not_signable_is_refused(value) -> None:
    # The audit's parse of a line refuses exactly what check_signable refuses (floats, integers
    # past 64 bits read as floats), in any position, inside any structure.
    from ledger.audit.leaves import _parse
    from ledger.canonical import check_signable

    try:
        line = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # NaN and infinities are not JSON
        return
    try:
        check_signable(orjson.loads(line))
    except CanonicalizationError:
        with pytest.raises(LineInvalid, match="leaf 7: not signable JSON"):
            _parse(line, 7)
        return
    if type(orjson.loads(line)) is dict:
        assert _parse(line, 7) == orjson.loads(line)


@pytest.mark.parametrize("processes", [True, False])
def test_worker_processes_and_threads_check_alike(sealed: Path, key, processes: bool) -> None:
    # A large ledger is audited on worker processes (ledger/audit/processes.py); small ones on
    # threads. Both must pass the same ledger and name the same leaf of a bad one.
    whole = audit(sealed, pubkey_hex=bytes(key.verify_key).hex(), processes=processes)
    assert (whole.leaves, whole.seals, whole.index_rows_checked) == (14, 2, 14)
    lines = _lines(sealed)
    envelope = json.loads(lines[9])
    envelope["signature"] = envelope["signature"][:-2] + (
        "00" if envelope["signature"][-2:] != "00" else "11"
    )
    lines[9] = canonical_json(envelope) + b"\n"
    lines.append(b'{"torn')  # a torn tail is never read as a line
    _write_lines(sealed, lines)
    with pytest.raises(SignatureInvalid, match="leaf 9") as caught:
        audit(sealed, pubkey_hex=bytes(key.verify_key).hex(), processes=processes)
    assert caught.value.check == "envelope_signature"


def test_index_rows_checked_a_batch_at_once_agree_with_leaf_by_leaf(
    sealed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`IndexChecker.check_run` (a batch's rows in one comparison, refilling its buffer across
    fetches) accepts exactly what `check` accepts leaf by leaf, and a refusal leaves the cursor
    where it was, so `check` then names the leaf that differs."""
    from ledger.audit import index as index_module
    from ledger.store.index import row_for, stored_values

    monkeypatch.setattr(index_module, "_FETCH_ROWS", 3)  # batches straddle every refill
    rows = [
        stored_values(row_for(orjson.loads(line), n, offset, len(line)))
        for n, (offset, line) in enumerate(jsonl.iter_lines(sealed / "axiom_ledger.jsonl"))
    ]
    checker = index_module.IndexChecker(sealed / "index.sqlite")
    assert [checker.check_run(n, rows[n : n + 4]) for n in (0, 4, 8)] == [True] * 3
    assert checker.checked == 12
    changed = [*rows[12:13], (*rows[13][:6], "another vendor", *rows[13][7:])]
    assert not checker.check_run(12, changed)
    assert not checker.check_run(12, [*rows[12:14], rows[13]])  # past the last row
    checker.check(12, rows[12])
    with pytest.raises(IndexMismatch, match=r"leaf 13: .* in \['vendor'\]"):
        checker.check(13, changed[1])
    checker.close()
