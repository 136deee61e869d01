"""The witness's decisions (C2SP tlog-witness add-checkpoint) and its durable state."""

from __future__ import annotations

from pathlib import Path

import nacl.signing
import pytest

from ledger.exceptions import LedgerLocked
from ledger.monitor import Witness, origin_hash
from ledger.tlog.checkpoint import Checkpoint, sign_checkpoint
from ledger.tlog.cosignature import CosignatureSigner, CosignatureVerifier
from ledger.tlog.note import Ed25519Signer, Ed25519Verifier, parse_note, verify_note
from ledger.tlog.rfc6962 import EMPTY_ROOT, MemoryNodes, consistency_proof, leaf_hash, root_at
from ledger.tlog.witness import WitnessRefusal, format_request, parse_response

ORIGIN = "log.example/crovia"
LOG = Ed25519Signer(ORIGIN, nacl.signing.SigningKey(b"\x01" * 32))
OTHER = Ed25519Signer(ORIGIN, nacl.signing.SigningKey(b"\x02" * 32))
WITNESS = CosignatureSigner("witness.example/w1", nacl.signing.SigningKey(b"\x03" * 32))


def tree(size: int, tag: bytes = b"") -> MemoryNodes:
    return MemoryNodes([leaf_hash(b"%s%d" % (tag, n)) for n in range(size)])


def note(nodes: MemoryNodes, signer: Ed25519Signer = LOG, origin: str = ORIGIN) -> bytes:
    return sign_checkpoint(Checkpoint(origin, nodes.size, root_at(nodes.size, nodes)), [signer])


def request(old: int, nodes: MemoryNodes, **kwargs: object) -> bytes:
    proof = consistency_proof(old, nodes.size, nodes) if old else []
    return format_request(old, proof, note(nodes, **kwargs))


@pytest.fixture
def witness(tmp_path: Path) -> Witness:
    logs = {ORIGIN: [Ed25519Verifier(ORIGIN, LOG.public_key)]}
    opened = Witness(tmp_path / "state", WITNESS, logs, clock=lambda: 1_700_000_000)
    yield opened
    opened.close()


def refused(witness: Witness, body: bytes) -> WitnessRefusal:
    before = witness.checkpoint_note(origin_hash(ORIGIN))
    with pytest.raises(WitnessRefusal) as caught:
        witness.add_checkpoint(body)
    assert witness.checkpoint_note(origin_hash(ORIGIN)) == before  # nothing cosigned or stored
    return caught.value


def test_cosigns_a_first_checkpoint_then_a_consistent_one(witness: Witness) -> None:
    answer = witness.add_checkpoint(request(0, tree(5)))
    lines = parse_response(answer)
    assert [s.name for s in lines] == ["witness.example/w1"]
    cosigned = parse_note(note(tree(5)) + answer)
    verify_note(cosigned, [CosignatureVerifier.from_vkey(WITNESS.vkey)])
    assert (
        CosignatureVerifier.from_vkey(WITNESS.vkey).timestamp(cosigned.text, lines[0].signature)
        == 1_700_000_000
    )
    witness.add_checkpoint(request(5, tree(12)))
    assert witness.latest(ORIGIN).size == 12
    stored = parse_note(witness.checkpoint_note(origin_hash(ORIGIN)))
    assert [s.name for s in stored.signatures] == [ORIGIN, "witness.example/w1"]


def test_the_same_checkpoint_again_is_cosigned(witness: Witness) -> None:
    witness.add_checkpoint(request(0, tree(5)))
    witness.add_checkpoint(format_request(5, [], note(tree(5))))


def test_a_stale_old_size_gets_409_with_the_latest_size(witness: Witness) -> None:
    witness.add_checkpoint(request(0, tree(5)))
    refusal = refused(witness, request(3, tree(9)))
    assert (refusal.status, refusal.body, refusal.content_type) == (409, b"5\n", "text/x.tlog.size")
    assert refused(witness, request(0, tree(9))).status == 409


def test_a_fork_is_refused_with_422(witness: Witness) -> None:
    witness.add_checkpoint(request(0, tree(5)))
    forked = tree(9, b"other")
    proof = consistency_proof(5, 9, forked)
    assert refused(witness, format_request(5, proof, note(forked))).status == 422
    assert refused(witness, format_request(5, [], note(tree(5, b"other")))).status == 422


def test_a_rollback_is_refused(witness: Witness) -> None:
    witness.add_checkpoint(request(0, tree(9)))
    assert refused(witness, format_request(9, [], note(tree(5)))).status == 400
    assert refused(witness, request(4, tree(5))).status == 409


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (lambda: request(0, tree(3), origin="another.example/log"), 404),
        (lambda: request(0, tree(3), signer=OTHER), 403),
        (lambda: b"old 0\n\n" + note(tree(3)).replace(b"\n3\n", b"\n4\n"), 403),
        (lambda: b"0\n\n" + note(tree(3)), 400),
        (lambda: b"old 01\n\n" + note(tree(3)), 400),
        (lambda: b"old 0\n" + note(tree(3)), 400),
        (lambda: b"old 0\nnot base64\n\n" + note(tree(3)), 400),
        (lambda: b"old 1\n" + b"AAAA\n" * 64 + b"\n" + note(tree(3)), 400),
        (lambda: b"old 0\n\nnot a note", 400),
        (lambda: format_request(0, [EMPTY_ROOT], note(tree(3))), 422),
        (
            lambda: format_request(
                0, [], sign_checkpoint(Checkpoint(ORIGIN, 0, b"\x07" * 32), [LOG])
            ),
            422,
        ),
    ],
)
def test_refusals_have_the_spec_status(witness: Witness, body, status: int) -> None:
    assert refused(witness, body()).status == status


def test_the_state_outlives_the_process_and_is_one_writer_only(tmp_path: Path) -> None:
    logs = {ORIGIN: [Ed25519Verifier(ORIGIN, LOG.public_key)]}
    first = Witness(tmp_path / "state", WITNESS, logs)
    first.add_checkpoint(request(0, tree(7)))
    with pytest.raises(LedgerLocked):
        Witness(tmp_path / "state", WITNESS, logs)
    first.close()
    again = Witness(tmp_path / "state", WITNESS, logs)
    assert again.latest(ORIGIN).size == 7
    assert again.checkpoint_note("../etc") is None
    again.close()
