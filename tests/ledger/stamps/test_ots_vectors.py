"""The OpenTimestamps proof files of tests/vectors/ots/ parse as PROVENANCE.md there says."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ledger.exceptions import OtsInvalid
from ledger.stamps import ots

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "ots"


@pytest.mark.parametrize("proof", sorted(VECTORS.glob("*.ots")), ids=lambda p: p.name)
def test_each_valid_proof_parses_and_starts_at_its_files_sha256(proof):
    detached = ots.load_detached(proof.read_bytes())
    subject = proof.with_suffix("")
    assert detached.file_digest == hashlib.sha256(subject.read_bytes()).digest()
    assert ots.detached(detached.timestamp) == proof.read_bytes(), "re-serialises byte for byte"


def test_hello_world_reports_bitcoin_block_358391():
    detached = ots.load_detached((VECTORS / "hello-world.txt.ots").read_bytes())
    summary = ots.summarize(detached.timestamp)
    assert [claim.height for claim in summary.bitcoin] == [358391]
    assert summary.status == "confirmed" and summary.pending == ()


def test_pending_proofs_name_their_calendars_and_unknown_notaries_are_counted():
    incomplete = ots.summarize(
        ots.load_detached((VECTORS / "incomplete.txt.ots").read_bytes()).timestamp
    )
    assert incomplete.status == "pending_next_stamp" and len(incomplete.pending) == 1
    two = ots.summarize(
        ots.load_detached((VECTORS / "two-calendars.txt.ots").read_bytes()).timestamp
    )
    assert len(two.pending) == 2 and not two.bitcoin
    unknown = ots.summarize(
        ots.load_detached((VECTORS / "unknown-notary.txt.ots").read_bytes()).timestamp
    )
    assert unknown.unknown == 1


@pytest.mark.parametrize("proof", sorted((VECTORS / "invalid").glob("*.ots")), ids=lambda p: p.name)
def test_each_invalid_proof_is_refused(proof):
    with pytest.raises(OtsInvalid):
        ots.load_detached(proof.read_bytes())


def test_a_truncated_or_extended_proof_is_refused():
    data = (VECTORS / "hello-world.txt.ots").read_bytes()
    for broken in (data[:-1], data + b"\x00", data[:40]):
        with pytest.raises(OtsInvalid):
            ots.load_detached(broken)


def _tree_view(data: bytes) -> tuple[object, ...]:
    """What the library's tree says of a proof: where it starts, what it attests."""
    detached = ots.load_detached(data)
    return detached.file_digest, ots.summarize(detached.timestamp)


def _scan_view(data: bytes) -> tuple[object, ...]:
    scanned = ots.scan_detached(data)
    return scanned.file_digest, scanned.summary


@pytest.mark.parametrize(
    "proof",
    sorted(VECTORS.glob("*.ots")) + sorted((VECTORS / "invalid").glob("*.ots")),
    ids=lambda p: p.name,
)
def test_the_walk_and_the_librarys_tree_read_every_vector_alike(proof):
    """A verifier reads a proof without its tree (`scan_detached`); the stamper builds the tree.
    Both accept the same proofs and find the same attestations, for every vector and every cut
    or one-byte change of the valid ones."""
    data = proof.read_bytes()
    variants = [data]
    if proof.parent == VECTORS:
        variants += [data[:cut] for cut in range(0, len(data), 7)]
        variants += [
            data[:at] + bytes([data[at] ^ 0x41]) + data[at + 1 :] for at in range(len(data))
        ]
    for variant in variants:
        try:
            expected: object = _tree_view(variant)
        except OtsInvalid:
            expected = OtsInvalid
        try:
            got: object = _scan_view(variant)
        except OtsInvalid:
            got = OtsInvalid
        assert got == expected, variant.hex()
