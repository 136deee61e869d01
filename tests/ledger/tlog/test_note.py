"""C2SP signed notes: the x/mod vector reproduced byte for byte, its cases, strict parsing."""

from __future__ import annotations

import json
from pathlib import Path

import nacl.signing
import pytest

from ledger.tlog import note
from ledger.tlog.exceptions import NoteMalformed, NoteSignatureInvalid, TlogKeyError
from ledger.tlog.note import Ed25519Signer, Ed25519Verifier

VECTOR = json.loads(
    (Path(__file__).resolve().parents[2] / "vectors" / "c2sp" / "signed-note.json").read_text()
)


def test_vector_note_is_reproduced_byte_for_byte() -> None:
    signer = note.parse_signer_key(VECTOR["signer_key"])
    assert signer.vkey == VECTOR["verifier_key"]
    assert note.sign_note(VECTOR["text"], [signer]) == VECTOR["signed_note"].encode("utf-8")


def test_vector_unknown_signer_is_ignored() -> None:
    parsed = note.parse_note(VECTOR["note_with_two_signatures"].encode("utf-8"))
    assert parsed.to_bytes() == VECTOR["note_with_two_signatures"].encode("utf-8")
    known = Ed25519Verifier.from_vkey(VECTOR["verifier_key"])
    assert note.verify_note(parsed, [known]) == ["PeterNeumann"]
    both = [known, Ed25519Verifier.from_vkey(VECTOR["second_verifier_key"])]
    assert note.verify_note(parsed, both) == ["PeterNeumann", "EnochRoot"]
    assert parsed.signatures[1].line() == VECTOR["second_signature_line"]


def test_vector_no_known_key_is_rejected() -> None:
    parsed = note.parse_note(VECTOR["note_with_two_signatures"].encode("utf-8"))
    with pytest.raises(NoteSignatureInvalid) as caught:
        note.verify_note(parsed, [])
    assert caught.value.computed == ["PeterNeumann", "EnochRoot"]


def test_vector_wrong_key_hash_is_not_a_key_for_these_lines() -> None:
    wrong = VECTOR["verifier_key"].replace("+c74f20a3+", "+c74f20a4+")
    with pytest.raises(TlogKeyError):  # its hash does not recompute: refused as a key
        Ed25519Verifier.from_vkey(wrong)
    name, _type, public_key = note.parse_verifier_key(VECTOR["verifier_key"])
    impostor = Ed25519Verifier(name, public_key)
    object.__setattr__(impostor, "key_hash", bytes.fromhex("c74f20a4"))
    parsed = note.parse_note(VECTOR["signed_note"].encode("utf-8"))
    with pytest.raises(NoteSignatureInvalid):
        note.verify_note(parsed, [impostor])


def test_a_known_key_whose_signature_fails_rejects_the_note() -> None:
    text = VECTOR["signed_note"].replace("answer", "Answer").encode("utf-8")
    with pytest.raises(NoteSignatureInvalid):
        note.verify_note(note.parse_note(text), [Ed25519Verifier.from_vkey(VECTOR["verifier_key"])])


def test_same_name_other_key_is_ignored_not_trusted() -> None:
    stranger = Ed25519Signer("PeterNeumann", nacl.signing.SigningKey.generate())
    forged = note.sign_note(VECTOR["text"], [stranger])
    with pytest.raises(NoteSignatureInvalid, match="no known key"):
        note.verify_note(
            note.parse_note(forged), [Ed25519Verifier.from_vkey(VECTOR["verifier_key"])]
        )


GOOD = VECTOR["signed_note"]


@pytest.mark.parametrize(
    "bad",
    [
        GOOD.replace("\n\n", "\n"),  # no blank line
        GOOD[:-1],  # last signature line without newline
        GOOD + "\n",  # a blank line after the signatures
        GOOD.replace("— ", "- "),  # not an em dash
        GOOD.replace("— PeterNeumann ", "—  PeterNeumann "),  # empty name
        GOOD.replace("PeterNeumann x08", "Peter+Neumann x08"),  # '+' in the name
        GOOD.replace("nAM=", "nAM"),  # unpadded base64
        GOOD.replace("nAM=", "nAN="),  # non-canonical base64 (padding bits set)
        GOOD.replace("answer", "ans\twer"),  # a control character
        GOOD.replace(
            "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=",
            "x08g",
        ),
        "If you think\n\n— PeterNeumann \n",  # no signature after the name
    ],
)
def test_parse_refuses(bad: str) -> None:
    with pytest.raises(NoteMalformed):
        note.parse_note(bad.encode("utf-8"))


def test_parse_refuses_invalid_utf8_and_too_many_signatures() -> None:
    with pytest.raises(NoteMalformed, match="UTF-8"):
        note.parse_note(GOOD.encode("utf-8").replace(b"you", b"y\xffu"))
    line = GOOD.split("\n\n")[1]
    with pytest.raises(NoteMalformed, match="too many"):
        note.parse_note((VECTOR["text"] + "\n" + line * (note.MAX_SIGNATURES + 1)).encode())


@pytest.mark.parametrize(
    "vkey",
    [
        "PeterNeumann+c74f20a3",
        "PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T",
        "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ],
)
def test_malformed_vkeys_are_usage_errors(vkey: str) -> None:
    with pytest.raises(TlogKeyError):
        note.parse_verifier_key(vkey)


def test_signing_refuses_a_text_that_is_not_a_note_text() -> None:
    signer = Ed25519Signer("example.com/log", nacl.signing.SigningKey.generate())
    for text in ("no newline", "a\rb\n"):
        with pytest.raises(NoteMalformed):
            note.sign_note(text, [signer])
    with pytest.raises(TlogKeyError):
        Ed25519Signer("has space", nacl.signing.SigningKey.generate())
