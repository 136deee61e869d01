"""The monitor against real published logs: increments pass; every way of cheating fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import nacl.signing
import orjson
import pytest

from ledger.envelope import sign_envelope
from ledger.exceptions import (
    EntryInvalid,
    LogForked,
    LogRolledBack,
    QuorumNotMet,
    SealInvalid,
    SignatureInvalid,
    TileMalformed,
    UntrustedKey,
)
from ledger.monitor import DirectorySource, MonitorState, Witness, check_shape, monitor
from ledger.publish import publish
from ledger.store import Ledger
from ledger.tlog.cosignature import CosignatureSigner
from ledger.tlog.exceptions import NoteSignatureInvalid, SealChainBroken
from ledger.tlog.witness import format_request
from tests.ledger.conftest import Log


def run(log: Log, state: MonitorState | None = None, **kwargs):
    state = state or MonitorState.empty(log.origin)
    return monitor(DirectorySource(log.pub), log.vkey, state, **kwargs)


@pytest.fixture
def seen(log: Log) -> MonitorState:
    """A log of 300 leaves (two seals) published and verified once."""
    log.grow(100)
    log.grow(200)
    publish(log.ledger_dir, log.pub)
    report, state = run(log)
    assert (report.size, report.entries, report.seals) == (300, 300, 2)
    return state


def test_increments_pass_and_a_rerun_adds_nothing(log: Log, seen: MonitorState) -> None:
    log.grow(500)
    log.grow(7)
    publish(log.ledger_dir, log.pub)
    report, state = run(log, seen)
    assert (report.previous_size, report.size, report.entries, report.seals) == (300, 807, 507, 2)
    assert (state.size, state.seals) == (807, 4)
    report, again = run(log, state)
    assert report.entries == 0 and again == state


def test_a_rollback_is_refused_naming_the_sizes(log: Log, seen: MonitorState, tmp_path) -> None:
    shutil.copytree(log.pub, tmp_path / "old")
    log.grow(50)
    publish(log.ledger_dir, log.pub)
    _, newer = run(log, seen)
    shutil.rmtree(log.pub)
    shutil.copytree(tmp_path / "old", log.pub)
    with pytest.raises(LogRolledBack, match="size 300, smaller than size 350"):
        run(log, newer)


def test_another_history_at_the_same_size_is_a_fork(log: Log, seen, tmp_path) -> None:
    other = Log(tmp_path / "other", log.pub, log.key)
    other.grow(300, tag=1)
    publish(other.ledger_dir, log.pub, full=True)
    with pytest.raises(LogForked, match="two roots for size 300"):
        run(log, seen)


def test_an_old_leaf_rewritten_and_re_signed_is_a_fork(log: Log, seen, tmp_path) -> None:
    rewritten = Log(tmp_path / "rewritten", log.pub, log.key)
    lines = (log.ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()
    with Ledger.open(rewritten.ledger_dir, signing_key=log.key) as ledger:
        envelopes = [_unsigned(line) for line in lines]
        envelopes[42]["body"]["title"] = "a quietly edited title"
        ledger.issue(envelopes[:100])
        ledger.seal()
        ledger.issue([*envelopes[100:], _unsigned(lines[0], "extra")])
        ledger.seal()
    publish(rewritten.ledger_dir, log.pub, full=True)
    with pytest.raises(LogForked, match="does not extend size 300"):
        run(log, seen)


def _unsigned(line: bytes, title: str | None = None) -> dict:
    envelope = orjson.loads(line)
    for name in ("anchors", "axiom_id", "signature"):
        del envelope[name]
    if title:
        envelope["body"]["title"] = title
    return envelope


def grown_and_published(log: Log, count: int = 100) -> None:
    log.grow(count)
    publish(log.ledger_dir, log.pub)


def test_a_changed_tile_fails_naming_it(log: Log, seen) -> None:
    grown_and_published(log)
    tile = log.pub / "tile/0/001.p/144"
    data = bytearray(tile.read_bytes())
    data[40] ^= 1
    tile.write_bytes(bytes(data))
    with pytest.raises(
        TileMalformed,
        match=r"tile/0/001\.p/144 \(leaves 256-399\) hash 1 \(leaf 257\) is not what the entries"
        r" hash to, checking from size 300 to size 400",
    ):
        run(log, seen)


def test_a_changed_old_tile_that_the_root_rests_on_fails(log: Log, seen) -> None:
    grown_and_published(log, 300)  # size 600: tile/1/000.p/2 holds the full level-0 tiles' roots
    tile = log.pub / "tile/1/000.p/2"
    tile.write_bytes(b"\x00" * 32 + tile.read_bytes()[32:])
    with pytest.raises(TileMalformed, match=r"another root at size 600|tile/1/000"):
        run(log, seen)


def test_a_missing_tile_fails(log: Log, seen) -> None:
    grown_and_published(log)
    (log.pub / "tile/entries/001.p/144").unlink()
    with pytest.raises(TileMalformed, match="required by the checkpoint but not published"):
        run(log, seen)


def test_an_entry_signed_by_another_key_fails_naming_the_leaf(log: Log, seen) -> None:
    grown_and_published(log)
    lines = (log.ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()
    forged = sign_envelope(
        _unsigned(lines[350]),
        [{"chain": "crovia.axiom_ledger", "height": 350, **_see()}],
        nacl.signing.SigningKey.generate(),
    )
    bundle = (log.pub / "tile/entries/001.p/144").read_bytes()
    line = orjson.dumps(forged, option=orjson.OPT_SORT_KEYS)
    bundle = bundle.replace(lines[350], line).replace(
        len(lines[350]).to_bytes(2, "big") + line, len(line).to_bytes(2, "big") + line
    )
    (log.pub / "tile/entries/001.p/144").write_bytes(bundle)
    with pytest.raises(SignatureInvalid, match="leaf 350"):
        run(log, seen)


def _see() -> dict:
    from ledger.envelope import ANCHOR_SEE_RECEIPT

    return dict(ANCHOR_SEE_RECEIPT)


def test_a_dropped_seal_breaks_the_chain(log: Log, seen) -> None:
    log.grow(10)
    log.grow(10)
    publish(log.ledger_dir, log.pub)
    (log.pub / "seals/003").replace(log.pub / "seals/002")
    with pytest.raises(SealChainBroken, match="seals/002 does not name the seal before it"):
        run(log, seen)
    (log.pub / "seals/002").unlink()
    with pytest.raises(SealInvalid, match="seals/002 is not published"):
        run(log, seen)


def test_a_wrong_key_is_refused(log: Log, seen) -> None:
    from ledger.store import note_verifier_key

    impostor = bytes(nacl.signing.SigningKey.generate().verify_key)
    # issue 16: named as the pin it fails, with the note key that did sign
    with pytest.raises(UntrustedKey, match="neither the pinned key") as caught:
        monitor(DirectorySource(log.pub), note_verifier_key(impostor, log.origin), seen)
    assert log.vkey.split("+")[1] in str(caught.value)


def test_entry_shape_checks() -> None:
    from tests.vectors.make_vectors import sample_envelope

    key = nacl.signing.SigningKey(b"\x05" * 32)
    anchors = [{"chain": "crovia.axiom_ledger", "height": 7, **_see()}]
    envelope = sign_envelope(sample_envelope(1), anchors, key)
    check_shape(envelope, 7)
    with pytest.raises(EntryInvalid, match="leaf 8: anchors"):
        check_shape(envelope, 8)
    for change in ({"schema": "other"}, {"zk_mode": None, "extra": 1}):
        with pytest.raises(EntryInvalid, match="leaf 7"):
            check_shape({**envelope, **change}, 7)
    envelope["body"]["spider_record"]["source_status"] = "200"
    with pytest.raises(EntryInvalid, match="spider_record"):
        check_shape(envelope, 7)


def test_a_quorum_of_cosignatures_is_enforced(log: Log, seen, tmp_path: Path) -> None:
    from ledger.tlog.note import Ed25519Verifier

    signer = CosignatureSigner("w.example/1", nacl.signing.SigningKey.generate())
    logs = {log.origin: [Ed25519Verifier.from_vkey(log.vkey)]}
    witness = Witness(tmp_path / "witness", signer, logs)
    note = (log.pub / "checkpoint").read_bytes()
    with pytest.raises(QuorumNotMet, match="0 valid witness cosignature"):
        run(log, seen, witnesses=[signer.vkey], quorum=1)
    (log.pub / "checkpoint").write_bytes(note + witness.add_checkpoint(format_request(0, [], note)))
    report, _ = run(log, seen, witnesses=[signer.vkey], quorum=1)
    assert report.cosigners == ("w.example/1",)
    tampered = bytearray((log.pub / "checkpoint").read_bytes())
    tampered[-10] = ord("A") if tampered[-10] != ord("A") else ord("B")
    (log.pub / "checkpoint").write_bytes(bytes(tampered))
    with pytest.raises(NoteSignatureInvalid):
        run(log, seen, witnesses=[signer.vkey], quorum=1)
    witness.close()
