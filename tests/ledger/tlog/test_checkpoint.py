"""tlog-checkpoint bodies, tlog-cosignature/v1 and the tlog-proof file."""

from __future__ import annotations

import base64

import nacl.signing
import pytest

from ledger.tlog import checkpoint as cp
from ledger.tlog import note, proof, rfc6962
from ledger.tlog.cosignature import CosignatureSigner, CosignatureVerifier, cosigned_message
from ledger.tlog.exceptions import (
    CheckpointMalformed,
    CosignatureInvalid,
    InclusionProofInvalid,
    NoteSignatureInvalid,
    TlogKeyError,
    TlogProofMalformed,
)
from ledger.tlog.note import Ed25519Signer, Ed25519Verifier

ORIGIN = "example.com/behind-the-sofa"
SPEC_ROOT = base64.b64decode("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
SPEC_TEXT = f"{ORIGIN}\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"


@pytest.fixture
def log() -> Ed25519Signer:
    return Ed25519Signer(ORIGIN, nacl.signing.SigningKey.generate())


def test_the_spec_example_body_round_trips() -> None:
    parsed = cp.parse_checkpoint(SPEC_TEXT)
    assert parsed == cp.Checkpoint(ORIGIN, 20852163, SPEC_ROOT)
    assert cp.format_checkpoint(parsed) == SPEC_TEXT
    with_ext = cp.Checkpoint(ORIGIN, 0, SPEC_ROOT, ("ext one",))
    assert cp.parse_checkpoint(cp.format_checkpoint(with_ext)) == with_ext


@pytest.mark.parametrize(
    "bad",
    [
        SPEC_TEXT[:-1],  # no final newline
        f"{ORIGIN}\n20852163\n",  # two lines
        f"\n20852163\n{SPEC_TEXT.split(chr(10))[2]}\n",  # empty origin
        SPEC_TEXT.replace("20852163", "020852163"),  # leading zero
        SPEC_TEXT.replace("20852163", "-1"),
        SPEC_TEXT.replace("20852163", "+5"),
        SPEC_TEXT.replace("20852163", "99999999999999999999"),
        SPEC_TEXT.replace("q2I=", "q2I"),  # unpadded
        SPEC_TEXT.replace("CsUYap", "CsUY"),  # not 32 bytes
        SPEC_TEXT + "\n",  # an empty extension line
    ],
)
def test_parse_refuses(bad: str) -> None:
    with pytest.raises(CheckpointMalformed):
        cp.parse_checkpoint(bad)


def test_format_refuses_what_would_not_parse_back() -> None:
    for bad in (
        cp.Checkpoint("", 1, SPEC_ROOT),
        cp.Checkpoint(ORIGIN, -1, SPEC_ROOT),
        cp.Checkpoint(ORIGIN, 1, SPEC_ROOT[:31]),
        cp.Checkpoint(ORIGIN, 1, SPEC_ROOT, ("two\nlines",)),
    ):
        with pytest.raises(CheckpointMalformed):
            cp.format_checkpoint(bad)


def test_signed_checkpoint_opens_only_under_the_log_key_and_origin(log: Ed25519Signer) -> None:
    signed = cp.sign_checkpoint(cp.Checkpoint(ORIGIN, 5, SPEC_ROOT), [log])
    verifier = Ed25519Verifier.from_vkey(log.vkey)
    opened, parsed = cp.open_checkpoint(signed, ORIGIN, [verifier])
    assert opened.size == 5 and parsed.to_bytes() == signed
    with pytest.raises(CheckpointMalformed):
        cp.open_checkpoint(signed, "example.com/other", [verifier])
    other = Ed25519Signer(ORIGIN, nacl.signing.SigningKey.generate())
    with pytest.raises(NoteSignatureInvalid):
        cp.open_checkpoint(signed, ORIGIN, [Ed25519Verifier.from_vkey(other.vkey)])


def test_cosignature_message_is_the_specs() -> None:
    assert cosigned_message(SPEC_TEXT, 1679315147) == (
        b"cosignature/v1\ntime 1679315147\n" + SPEC_TEXT.encode()
    )


def test_cosignature_signs_and_verifies_and_is_counted_by_verify_note(log: Ed25519Signer) -> None:
    witness = CosignatureSigner("witness.example.com/w1", nacl.signing.SigningKey.generate())
    text = cp.format_checkpoint(cp.Checkpoint(ORIGIN, 5, SPEC_ROOT))
    line = witness.sign(text, 1679315147)
    assert witness.vkey.startswith("witness.example.com/w1+")
    verifier = CosignatureVerifier.from_vkey(witness.vkey)
    assert verifier.timestamp(text, line.signature) == 1679315147
    cosigned = note.Note(text, (log.sign(text), line))
    assert note.verify_note(note.parse_note(cosigned.to_bytes()), [verifier]) == [witness.name]
    with pytest.raises(CosignatureInvalid):
        verifier.verify(text.replace("5", "6"), line.signature)
    with pytest.raises(CosignatureInvalid):  # the timestamp is signed too
        verifier.verify(text, (1679315148).to_bytes(8, "big") + line.signature[8:])
    with pytest.raises(CosignatureInvalid):
        verifier.verify(text, line.signature[:-1])


def test_cosigner_key_hash_differs_from_a_note_key_on_the_same_key() -> None:
    key = nacl.signing.SigningKey.generate()
    assert CosignatureSigner("w", key).key_hash != Ed25519Signer("w", key).key_hash
    with pytest.raises(TlogKeyError):
        CosignatureVerifier.from_vkey(Ed25519Signer("w", key).vkey)
    with pytest.raises(TlogKeyError):
        Ed25519Verifier.from_vkey(CosignatureSigner("w", key).vkey)


def test_tlog_proof_round_trips_and_verifies(log: Ed25519Signer) -> None:
    leaves = [rfc6962.leaf_hash(bytes([n])) for n in range(7)]
    nodes = rfc6962.MemoryNodes(leaves)
    signed = cp.sign_checkpoint(cp.Checkpoint(ORIGIN, 7, rfc6962.root_at(7, nodes)), [log])
    made = proof.TlogProof(3, tuple(rfc6962.inclusion_proof(3, 7, nodes)), signed)
    data = proof.format_tlog_proof(made)
    assert data.startswith(b"c2sp.org/tlog-proof@v1\nindex 3\n")
    assert proof.parse_tlog_proof(data) == made
    verifiers = [Ed25519Verifier.from_vkey(log.vkey)]
    assert proof.verify_tlog_proof(made, leaves[3], ORIGIN, verifiers).size == 7
    with pytest.raises(InclusionProofInvalid):
        proof.verify_tlog_proof(made, leaves[4], ORIGIN, verifiers)
    extra = proof.TlogProof(0, (), signed, b"age")
    assert proof.parse_tlog_proof(proof.format_tlog_proof(extra)) == extra


@pytest.mark.parametrize(
    "bad",
    [
        b"c2sp.org/tlog-proof@v2\nindex 0\n\ncheckpoint\n",
        b"c2sp.org/tlog-proof@v1\nindex 01\n\ncheckpoint\n",
        b"c2sp.org/tlog-proof@v1\n\ncheckpoint\n",
        b"c2sp.org/tlog-proof@v1\nindex 0\nAAAA\n\ncheckpoint\n",
        b"c2sp.org/tlog-proof@v1\nindex 0\n",
        b"c2sp.org/tlog-proof@v1\nextra !!\nindex 0\n\ncheckpoint\n",
        b"c2sp.org/tlog-proof@v1\nindex 0\n\n",
    ],
)
def test_tlog_proof_parse_refuses(bad: bytes) -> None:
    with pytest.raises(TlogProofMalformed):
        proof.parse_tlog_proof(bad)
