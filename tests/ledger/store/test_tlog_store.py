"""The ledger as a transparency log: the second tree, seal roots, checkpoints, the seal chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.audit import audit
from ledger.keys import key_id
from ledger.seal import seal_signed_bytes
from ledger.store import CheckpointStore, Ledger, LogOriginChanged, note_verifier_key
from ledger.tlog import rfc6962
from ledger.tlog.checkpoint import open_checkpoint
from ledger.tlog.exceptions import (
    CheckpointMismatch,
    Rfc6962RootMismatch,
    SealChainBroken,
)
from ledger.tlog.note import Ed25519Verifier
from tests.vectors.make_vectors import sample_envelope


def _leaf_hashes(directory: Path) -> list[bytes]:
    lines = (directory / "axiom_ledger.jsonl").read_bytes().splitlines()
    return [rfc6962.leaf_hash(line) for line in lines]


@pytest.fixture
def sealed(ledger_dir: Path, key) -> Path:
    """Three seals at 5, 12 and 21 leaves."""
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        for end in (5, 12, 21):
            ledger.issue([sample_envelope(n) for n in range(ledger.leaf_count, end)])
            ledger.seal()
    return ledger_dir


def _seal_lines(directory: Path) -> list[bytes]:
    return (directory / "seals.jsonl").read_bytes().splitlines(keepends=True)


def test_each_seal_signs_the_rfc6962_root_of_its_leaves(sealed: Path) -> None:
    leaves = _leaf_hashes(sealed)
    seals = [json.loads(line) for line in _seal_lines(sealed)]
    assert [s["leaf_count"] for s in seals] == [5, 12, 21]
    for seal in seals:
        assert seal["rfc6962_root"] == rfc6962.root_of(leaves[: seal["leaf_count"]]).hex()
        assert seal["rfc6962_root"] != seal["merkle_root"]  # sizes not powers of two: trees differ


def test_each_seal_writes_a_checkpoint_signed_under_the_origin(sealed: Path, key) -> None:
    public = bytes(key.verify_key)
    origin = f"crovia.local/{key_id(public)}"
    verifier = Ed25519Verifier.from_vkey(note_verifier_key(public, origin))
    stored = list(CheckpointStore(sealed))
    assert [c.leaf_count for c in stored] == [5, 12, 21]
    for entry, line in zip(stored, _seal_lines(sealed), strict=True):
        checkpoint, _note = open_checkpoint(entry.note, origin, [verifier])
        assert checkpoint.root.hex() == json.loads(line)["rfc6962_root"]
        assert entry.note.startswith(origin.encode() + b"\n")


def test_the_reader_gives_roots_and_proofs_at_every_size(sealed: Path) -> None:
    leaves = _leaf_hashes(sealed)
    with Ledger.open(sealed) as reader:
        assert reader.rfc6962_root(0) == rfc6962.EMPTY_ROOT
        for size in range(1, 22):
            root = rfc6962.root_of(leaves[:size])
            assert reader.rfc6962_root(size) == root
            for index in (0, size // 2, size - 1):
                proof = reader.rfc6962_inclusion(index, size)
                rfc6962.verify_inclusion(index, size, leaves[index], proof, root)
            for old in (1, size // 3 or 1, size):
                proof = reader.rfc6962_consistency(old, size)
                old_root = rfc6962.root_of(leaves[:old])
                rfc6962.verify_consistency(old, size, old_root, root, proof)
        with pytest.raises(ValueError):
            reader.rfc6962_consistency(3, 22)


def test_origin_setting_and_a_change_of_it_is_refused(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key, log_origin="example.org/news") as ledger:
        ledger.issue([sample_envelope(0)])
        ledger.seal()
    assert CheckpointStore(ledger_dir).last().note.startswith(b"example.org/news\n1\n")
    with (
        pytest.raises(LogOriginChanged, match=r"CROVIA_LOG_ORIGIN=example\.org/news"),
        Ledger.open(ledger_dir, signing_key=key, log_origin="example.org/other"),
    ):
        pass


def test_audit_passes_a_clean_log(sealed: Path, key) -> None:
    audit(sealed, pubkey_hex=bytes(key.verify_key).hex())


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (lambda lines: [lines[0], lines[2]], 2),  # the middle seal deleted
        (lambda lines: [lines[1], lines[0], lines[2]], 1),  # reordered
        (lambda lines: [lines[0], lines[0], lines[1], lines[2]], 2),  # a seal replayed
    ],
)
def test_audit_names_the_first_broken_link(sealed: Path, change, line: int) -> None:
    seals = sealed / "seals.jsonl"
    seals.write_bytes(b"".join(change(_seal_lines(sealed))))
    with pytest.raises(SealChainBroken, match=rf"seals\.jsonl line {line} "):
        audit(sealed)
    assert main(["audit", "--ledger-dir", str(sealed)]) == 1


def test_audit_refuses_a_resigned_seal_with_another_rfc6962_root(sealed: Path, key) -> None:
    lines = _seal_lines(sealed)
    last = json.loads(lines[-1])
    last["rfc6962_root"] = last["merkle_root"]
    last["signature"] = key.sign(seal_signed_bytes(last)).signature.hex()
    (sealed / "seals.jsonl").write_bytes(b"".join(lines[:-1]) + json.dumps(last).encode() + b"\n")
    with pytest.raises(Rfc6962RootMismatch, match=r"seals\.jsonl line 3"):
        audit(sealed)


def test_audit_refuses_a_checkpoint_that_is_not_its_seals(sealed: Path, key) -> None:
    path = sealed / "tlog" / "checkpoints.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[2])
    audit(sealed)  # a missing checkpoint is allowed: the seals prove the roots
    record = json.loads(lines[1])
    record["checkpoint"] = record["checkpoint"].replace("\n12\n", "\n13\n")
    path.write_bytes(lines[0] + json.dumps(record).encode() + b"\n")
    with pytest.raises(CheckpointMismatch, match="line 2"):
        audit(sealed)
    path.write_bytes(lines[0] + b"not json\n")
    with pytest.raises(CheckpointMismatch, match="line 2"):
        audit(sealed)
