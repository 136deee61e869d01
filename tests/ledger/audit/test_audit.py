"""`crovia audit`: a sound ledger passes; a changed byte in any leaf or seal fails, naming it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import nacl.signing
import pytest

from crovia_spider.cli import main
from ledger.audit import audit
from ledger.canonical import canonical_json
from ledger.exceptions import (
    AnchorMismatch,
    NoAuditKey,
    RootMismatch,
    SealInvalid,
    SignatureInvalid,
    UntrustedKey,
)
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


@pytest.fixture
def sealed(filled: Path, key) -> Path:
    with Ledger.open(filled, signing_key=key) as ledger:
        ledger.seal()
    return filled


def test_a_sound_ledger_passes(sealed: Path, key, capsys: pytest.CaptureFixture) -> None:
    public = bytes(key.verify_key).hex()
    report = audit(sealed, pubkey_hex=public.upper())
    assert (report.leaves, report.seals, report.torn_tail) == (14, 2, False)
    assert report.key_pinned and report.public_key_hex == public
    assert main(["audit", "--ledger-dir", str(sealed), "--pubkey", public]) == 0
    out = capsys.readouterr().out
    assert out.startswith("audit ok: 14 leaves, 2 seals") and out.count("\n") == 1


def test_unpinned_says_the_seals_key_proves_no_signer(tmp_path: Path, capsys) -> None:
    """A ledger re-signed wholesale under another key passes unpinned, so the output says so."""
    genuine, forged = nacl.signing.SigningKey.generate(), nacl.signing.SigningKey.generate()
    resigned = tmp_path / "resigned"
    with Ledger.open(resigned, signing_key=forged) as ledger:
        ledger.issue([sample_envelope(n) for n in range(4)])
        ledger.seal()
    assert main(["audit", "--ledger-dir", str(resigned)]) == 0
    out = capsys.readouterr().out
    assert f"public key {bytes(forged.verify_key).hex()} (not pinned)" in out
    assert "no key was pinned" in out and "--pubkey" in out
    assert main(["audit", "--ledger-dir", str(resigned), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["key_pinned"] is False and report["signatures_verified"] == 4
    pinned = ["audit", "--ledger-dir", str(resigned), "--pubkey", bytes(genuine.verify_key).hex()]
    assert main(pinned) == 1
    assert "check pinned_key failed" in capsys.readouterr().err


def _line_starts(path: Path) -> list[int]:
    starts, offset = [], 0
    for line in path.read_bytes().splitlines(keepends=True):
        starts.append(offset)
        offset += len(line)
    return starts


@pytest.mark.parametrize("leaf", [0, 5, 10, 13])
def test_a_changed_byte_in_any_leaf_is_named(
    sealed: Path, leaf: int, capsys: pytest.CaptureFixture
) -> None:
    jsonl = sealed / "axiom_ledger.jsonl"
    data = bytearray(jsonl.read_bytes())
    starts = [*_line_starts(jsonl), len(data)]
    chooser = random.Random(leaf)
    for _ in range(3):
        position = chooser.randrange(starts[leaf] + 1, starts[leaf + 1] - 2)
        changed = bytearray(data)
        changed[position] = ord("7") if changed[position] != ord("7") else ord("8")
        jsonl.write_bytes(bytes(changed))
        assert main(["audit", "--ledger-dir", str(sealed)]) == 1
        err = capsys.readouterr().err
        assert f"leaf {leaf}" in err, err
    jsonl.write_bytes(bytes(data))
    assert main(["audit", "--ledger-dir", str(sealed)]) == 0


def test_a_swapped_pair_of_lines_is_named_by_its_signed_anchor(sealed: Path) -> None:
    jsonl = sealed / "axiom_ledger.jsonl"
    lines = jsonl.read_bytes().splitlines(keepends=True)
    lines[2], lines[3] = lines[3], lines[2]
    jsonl.write_bytes(b"".join(lines))
    with pytest.raises(AnchorMismatch, match=r"leaf 2: .*height") as caught:
        audit(sealed)
    assert (caught.value.expected, caught.value.computed) == (2, 3)


def test_a_changed_seal_is_named(sealed: Path, capsys: pytest.CaptureFixture) -> None:
    seals = sealed / "seals.jsonl"
    lines = seals.read_bytes().splitlines(keepends=True)
    second = json.loads(lines[1])
    second["run_id"] = "forged"
    lines[1] = json.dumps(second, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    seals.write_bytes(b"".join(lines))
    assert main(["audit", "--ledger-dir", str(sealed)]) == 1
    assert "seals.jsonl line 2" in capsys.readouterr().err


def test_a_seal_beyond_the_ledger_is_refused(sealed: Path) -> None:
    jsonl = sealed / "axiom_ledger.jsonl"
    lines = jsonl.read_bytes().splitlines(keepends=True)
    jsonl.write_bytes(b"".join(lines[:12]))
    with pytest.raises(SealInvalid, match=r"seals\.jsonl line 2"):
        audit(sealed)


def test_another_key_is_untrusted(sealed: Path) -> None:
    with pytest.raises(UntrustedKey):
        audit(sealed, pubkey_hex="00" * 32)


def test_without_seal_or_key_no_signature_is_checked_so_it_fails(
    ledger_dir: Path, key, capsys
) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(3)])
    with pytest.raises(NoAuditKey, match="no seal and no --pubkey"):
        audit(ledger_dir)
    assert main(["audit", "--ledger-dir", str(ledger_dir), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["check"] == "audit_key"
    report = audit(ledger_dir, pubkey_hex=bytes(key.verify_key).hex())
    assert report.signatures_verified == report.unsealed_leaves == 3 and report.key_pinned


@pytest.mark.parametrize(
    ("line", "reason"),
    [(b"{not json", "not JSON"), (b'{"leaf_count":3}', "a seal's fields"), (b"[]", "fields")],
)
def test_a_malformed_seal_line_is_named(sealed: Path, line: bytes, reason: str) -> None:
    with open(sealed / "seals.jsonl", "ab") as out:
        out.write(line + b"\n")
    with pytest.raises(SealInvalid, match=rf"seals\.jsonl line 3 .*{reason}"):
        audit(sealed)


def test_audit_holds_a_signature_to_the_verifiers_format(ledger_dir: Path, key) -> None:
    """Upper-case signature hex still verifies as bytes, but a receipt with it fails `verify`:
    audit shares the verifier's check, so a ledger line must pass the same rule."""
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(0)])
    path = ledger_dir / "axiom_ledger.jsonl"
    envelope = json.loads(path.read_bytes())
    envelope["signature"] = "ed25519:" + envelope["signature"].removeprefix("ed25519:").upper()
    path.write_bytes(canonical_json(envelope) + b"\n")
    with pytest.raises(SignatureInvalid, match=r"leaf 0: envelope\.signature is not"):
        audit(ledger_dir, pubkey_hex=bytes(key.verify_key).hex())


def test_a_sealed_leaf_rewritten_even_by_the_key_holder_fails_at_the_seal_root(
    sealed: Path, key
) -> None:
    """Re-signed at its own height and reindexed, so only the seal's root can tell."""
    from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, sign_envelope

    jsonl = sealed / "axiom_ledger.jsonl"
    lines = jsonl.read_bytes().splitlines(keepends=True)
    anchors = [{"chain": ANCHOR_CHAIN, "height": 2, **ANCHOR_SEE_RECEIPT}]
    lines[2] = canonical_json(sign_envelope(sample_envelope(99), anchors, key)) + b"\n"
    jsonl.write_bytes(b"".join(lines))
    assert main(["reindex", "--ledger-dir", str(sealed)]) == 0
    with pytest.raises(RootMismatch, match=r"seals\.jsonl line 1"):
        audit(sealed)
