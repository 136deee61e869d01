"""Rotation on purpose: a record signed by both keys; audit and receipts follow the chain."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nacl.signing
import pytest

from crovia_spider.cli import main
from ledger.audit import audit
from ledger.canonical import canonical_json
from ledger.exceptions import RotationInvalid, RotationRefused, VerificationError, WrongSigningKey
from ledger.keys import (
    ROTATION_DOMAIN,
    build_rotation,
    check_rotation,
    generate_signing_key,
    key_id,
    rotation_signed_bytes,
    verify_chain,
)
from ledger.receipt import verify_receipt
from ledger.seal import seal_sha256
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


def hexkey(key: nacl.signing.SigningKey) -> str:
    return bytes(key.verify_key).hex()


def kid(key: nacl.signing.SigningKey) -> str:
    return key_id(bytes(key.verify_key))


@pytest.fixture
def new_key() -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey.generate()


@pytest.fixture
def rotated(ledger_dir: Path, key, new_key) -> dict:
    """5 leaves by `key` (3 sealed), a rotation to `new_key`, 4 leaves by it, sealed."""
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        old_ids = [i.axiom_id for i in ledger.issue([sample_envelope(n) for n in range(3)])]
        ledger.seal()
        old_ids += [i.axiom_id for i in ledger.issue([sample_envelope(n) for n in range(3, 5)])]
        record = ledger.rotate_key(new_key)
        new_ids = [i.axiom_id for i in ledger.issue([sample_envelope(n) for n in range(5, 9)])]
        last = ledger.seal()
    with Ledger.open(ledger_dir) as reader:
        receipts = {axiom_id: reader.receipt(axiom_id) for axiom_id in old_ids + new_ids}
    return {"record": record, "old": old_ids, "new": new_ids, "seal": last, "receipts": receipts}


def test_the_record_is_signed_by_both_keys_over_a_domain_separated_message(key, new_key) -> None:
    record = build_rotation(old_key=key, new_key=new_key, leaf_count=7, prev_seal=None)
    check_rotation(record, "here")
    signed = rotation_signed_bytes(record)
    assert signed.startswith(ROTATION_DOMAIN) and not signed.startswith(b"{")
    assert (record["old_key_id"], record["new_key_id"]) == (kid(key), kid(new_key))
    assert (record["leaf_count"], record["prev_seal_sha256"]) == (7, "")
    for side in ("old", "new"):
        signature = bytes.fromhex(record[f"{side}_signature"])
        verify_key = nacl.signing.VerifyKey(bytes.fromhex(record[f"{side}_public_key_hex"]))
        verify_key.verify(signed, signature)
        with pytest.raises(nacl.exceptions.BadSignatureError):  # never an envelope or a seal's
            verify_key.verify(signed[len(ROTATION_DOMAIN) :], signature)


def test_every_change_to_a_record_is_refused(key, new_key) -> None:
    record = build_rotation(old_key=key, new_key=new_key, leaf_count=7, prev_seal=None)
    changes = {name: "0" * len(str(value)) for name, value in record.items()}
    changes |= {"leaf_count": 8, "schema": "crovia.seal.v1", "prev_seal_sha256": "0" * 64}
    changes |= {"rotated_at": "2020-01-01T00:00:00Z"}
    for name, value in changes.items():
        changed = {**record, name: value}
        with pytest.raises(RotationInvalid):
            check_rotation(changed, "changed")
    for side in ("old_signature", "new_signature"):
        raw = bytearray(bytes.fromhex(record[side]))
        raw[5] ^= 1
        with pytest.raises(RotationInvalid, match=side):
            check_rotation({**record, side: raw.hex()}, "flipped")
    with pytest.raises(RotationInvalid, match="keys"):
        check_rotation({**record, "extra": 1}, "extra")


def test_a_chain_must_start_at_the_first_key_and_link(key, new_key) -> None:
    third = nacl.signing.SigningKey.generate()
    first = build_rotation(old_key=key, new_key=new_key, leaf_count=3, prev_seal=None)
    second = build_rotation(old_key=new_key, new_key=third, leaf_count=5, prev_seal=None)
    chain = verify_chain(hexkey(key), [first, second])
    assert chain.keys == (hexkey(key), hexkey(new_key), hexkey(third))
    assert [chain.key_for_leaf(i) for i in (0, 2, 3, 4, 5, 99)] == [
        hexkey(key),
        hexkey(key),
        hexkey(new_key),
        hexkey(new_key),
        hexkey(third),
        hexkey(third),
    ]
    with pytest.raises(RotationInvalid, match="old_public_key_hex"):
        verify_chain(hexkey(third), [first])
    with pytest.raises(RotationInvalid, match="rotation 1"):
        verify_chain(hexkey(key), [second])
    back = build_rotation(old_key=third, new_key=key, leaf_count=9, prev_seal=None)
    with pytest.raises(RotationInvalid, match="had before"):
        verify_chain(hexkey(key), [first, second, back])
    early = build_rotation(old_key=third, new_key=key, leaf_count=4, prev_seal=None)
    with pytest.raises(RotationInvalid):
        verify_chain(hexkey(key), [first, second, early])


def test_rotating_seals_first_then_hands_over(rotated, ledger_dir: Path, key, new_key) -> None:
    record = rotated["record"]
    seals = [json.loads(line) for line in (ledger_dir / "seals.jsonl").read_bytes().splitlines()]
    assert [s["leaf_count"] for s in seals] == [3, 5, 9]  # leaves 3-4 sealed by the old key first
    assert [s["public_key_hex"] for s in seals] == [hexkey(key)] * 2 + [hexkey(new_key)]
    assert record["leaf_count"] == 5 and record["prev_seal_sha256"] == seal_sha256(seals[1])
    stored = (ledger_dir / "rotations.jsonl").read_bytes()
    assert stored == canonical_json(record) + b"\n"
    lines = (ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()
    assert len(lines) == 9
    with pytest.raises(WrongSigningKey) as caught:
        Ledger.open(ledger_dir, signing_key=key)
    assert kid(key) in str(caught.value) and kid(new_key) in str(caught.value)
    with Ledger.open(ledger_dir, signing_key=new_key) as ledger:
        ledger.issue([sample_envelope(9)])


def test_a_rotation_passes_audit_pinned_to_either_key(rotated, ledger_dir: Path, key, new_key):
    for pin in (None, hexkey(key), hexkey(new_key)):
        report = audit(ledger_dir, pubkey_hex=pin)
        assert (report.leaves, report.seals, report.key_rotations) == (9, 3, 1)
    stranger = nacl.signing.SigningKey.generate()
    with pytest.raises(VerificationError) as caught:
        audit(ledger_dir, pubkey_hex=hexkey(stranger))
    assert caught.value.check == "pinned_key"


def test_receipts_on_both_sides_verify_pinned_to_either_key(rotated, key, new_key) -> None:
    for receipt in rotated["receipts"].values():
        assert receipt["key_rotations"] == [rotated["record"]]
        assert receipt["seal"]["public_key_hex"] == hexkey(new_key)
        for pin in ({"pubkey_hex": hexkey(key)}, {"pubkey_hex": hexkey(new_key)}):
            verdict = verify_receipt(receipt, **pin)
            assert verdict.key_pinned and verdict.key_rotations == 1
            assert "key_rotation" in verdict.checks
        assert verify_receipt(receipt, key_id=kid(key)).key_pinned
        with pytest.raises(VerificationError) as caught:
            verify_receipt(receipt, pubkey_hex="ab" * 32)
        assert caught.value.check == "pinned_key"


def test_a_receipt_without_its_rotations_or_with_a_changed_one_fails(rotated) -> None:
    old_receipt = rotated["receipts"][rotated["old"][0]]
    bare = {k: v for k, v in old_receipt.items() if k != "key_rotations"}
    with pytest.raises(VerificationError) as caught:  # the old key's envelope, the new key's seal
        verify_receipt(bare)
    assert caught.value.check == "envelope_signature"
    for change in ({"leaf_count": 0}, {"leaf_count": 99}, {"old_signature": "00" * 64}):
        changed = copy.deepcopy(old_receipt)
        changed["key_rotations"][0].update(change)
        with pytest.raises(VerificationError) as caught:
            verify_receipt(changed)
        assert caught.value.check in ("key_rotation", "envelope_signature")
    empty = {**old_receipt, "key_rotations": []}
    with pytest.raises(VerificationError, match="key_rotations"):
        verify_receipt(empty)


def test_a_receipt_before_any_rotation_keeps_the_reference_shape(filled: Path, key) -> None:
    with Ledger.open(filled) as reader:
        axiom_id = json.loads((filled / "axiom_ledger.jsonl").read_bytes().splitlines()[0])
        receipt = reader.receipt(axiom_id["axiom_id"])
    assert "key_rotations" not in receipt


def test_rotation_refuses_a_key_the_ledger_had(rotated, ledger_dir: Path, key, new_key) -> None:
    with Ledger.open(ledger_dir, signing_key=new_key) as ledger:
        for again in (key, new_key):
            with pytest.raises(RotationRefused):
                ledger.rotate_key(again)
    assert len((ledger_dir / "rotations.jsonl").read_bytes().splitlines()) == 1


def test_audit_fails_when_the_rotation_record_is_edited_or_removed(rotated, ledger_dir: Path):
    rotations = ledger_dir / "rotations.jsonl"
    original = rotations.read_bytes()
    record = json.loads(original)
    rotations.write_bytes(canonical_json({**record, "leaf_count": 4}) + b"\n")
    with pytest.raises(VerificationError) as caught:
        audit(ledger_dir)
    assert caught.value.check == "key_rotation"
    rotations.unlink()
    with pytest.raises(VerificationError):
        audit(ledger_dir)


def test_a_rotation_of_an_empty_ledger_and_twice_in_a_row(ledger_dir: Path, key, new_key) -> None:
    third = nacl.signing.SigningKey.generate()
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        first = ledger.rotate_key(new_key)
        ledger.issue([sample_envelope(0), sample_envelope(1)])
        ledger.rotate_key(third)
        issued = ledger.issue([sample_envelope(2)])
        ledger.seal()
        receipt = ledger.receipt(issued[0].axiom_id)
    assert (first["leaf_count"], first["prev_seal_sha256"]) == (0, "")
    assert audit(ledger_dir, pubkey_hex=hexkey(key)).key_rotations == 2
    assert len(receipt["key_rotations"]) == 2
    assert verify_receipt(receipt, pubkey_hex=hexkey(key)).key_rotations == 2


def test_the_cli_rotates_and_verify_says_it_followed_the_chain(tmp_path: Path, capsys) -> None:
    old_file, new_file = tmp_path / "old.key", tmp_path / "new.key"
    old, new = generate_signing_key(old_file), generate_signing_key(new_file)
    ledger_dir = tmp_path / "ledger"
    with Ledger.open(ledger_dir, signing_key=old) as ledger:
        axiom_id = ledger.issue([sample_envelope(0)])[0].axiom_id
    args = ["rotate-key", "--new-key", str(new_file), "--ledger-dir", str(ledger_dir)]
    assert main([*args, "--key", str(new_file)]) == 2  # not the ledger's key (unsealed: leaf 0)
    assert kid(new) in capsys.readouterr().err
    assert main([*args, "--key", str(old_file)]) == 0
    out = capsys.readouterr().out
    assert kid(old) in out and kid(new) in out and str(new_file) in out
    with Ledger.open(ledger_dir, signing_key=new) as ledger:
        ledger.issue([sample_envelope(1)])
    assert main(["seal", "--ledger-dir", str(ledger_dir), "--key", str(new_file)]) == 0
    capsys.readouterr()
    receipt = tmp_path / "receipt.json"
    prove = ["prove", axiom_id, "--ledger-dir", str(ledger_dir), "--out", str(receipt)]
    assert main(prove) == 0
    assert main(["verify", str(receipt), "--pubkey", hexkey(old)]) == 0
    assert "1 key rotation" in capsys.readouterr().out
    assert main(["audit", "--ledger-dir", str(ledger_dir), "--pubkey", hexkey(old)]) == 0
    assert "followed 1 key rotation" in capsys.readouterr().out
    assert main([*args, "--key", str(old_file)]) == 2  # the old key is no longer the ledger's
