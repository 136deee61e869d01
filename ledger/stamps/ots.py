"""OpenTimestamps proofs of a seal, in the `opentimestamps` library's format.

A proof starts at the seal digest (sha256 of the seal's signed bytes, as the OTS client starts at
a file's sha256) and is kept as a standard detached `.ots` file. Calendars answer
`POST /digest` with a timestamp ending in PendingAttestations, and `GET /timestamp/<commitment>`
with its upgrade; `merge_upgrade` grafts an upgrade in and keeps it only if it reaches Bitcoin.
"""

from __future__ import annotations

from dataclasses import dataclass

from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.op import OpSHA256
from opentimestamps.core.serialize import (
    BytesDeserializationContext,
    BytesSerializationContext,
    DeserializationError,
)
from opentimestamps.core.timestamp import DetachedTimestampFile, Timestamp

from ledger.exceptions import OtsInvalid


@dataclass(frozen=True)
class BitcoinClaim:
    """A Bitcoin attestation: the block at `height` must have `digest` as its merkle root
    (internal byte order, as in the 80-byte header).
    """

    height: int
    digest: bytes

    @property
    def merkle_root_hex(self) -> str:
        """The merkle root as block explorers and bitcoind print it (byte-reversed hex)."""
        return self.digest[::-1].hex()


@dataclass(frozen=True)
class ProofSummary:
    """What a proof attests: pending calendars (sorted), Bitcoin claims (by height), and how many
    attestations of other kinds it holds (reported, never trusted).
    """

    pending: tuple[str, ...]
    bitcoin: tuple[BitcoinClaim, ...]
    unknown: int

    @property
    def status(self) -> str:
        return "confirmed" if self.bitcoin else "pending_next_stamp"


def parse_calendar_reply(message: bytes, body: bytes) -> Timestamp:
    """The timestamp a calendar returned for `message`. Raises OtsInvalid for anything else."""
    try:
        ctx = BytesDeserializationContext(body)
        stamp = Timestamp.deserialize(ctx, message)
        ctx.assert_eof()
    except (DeserializationError, ValueError, TypeError) as exc:
        raise OtsInvalid(f"the calendar's answer is not a timestamp: {exc!r}") from None
    if not any(True for _ in stamp.all_attestations()):
        raise OtsInvalid("the calendar's timestamp has no attestation")
    return stamp


def as_pending(stamp: Timestamp, calendar: str) -> Timestamp:
    """`stamp` (a calendar's submit reply) with every attestation that is not pending replaced by
    a PendingAttestation of `calendar` at the same commitment: a calendar's word that a digest is
    already in Bitcoin is not a confirmation. `crovia stamp --upgrade` asks that calendar for the
    commitment's proof, and only a Bitcoin attestation reached that way is kept."""
    for node in _nodes(stamp):
        claimed = [a for a in node.attestations if not isinstance(a, PendingAttestation)]
        for attestation in claimed:
            node.attestations.discard(attestation)
        if claimed:
            try:
                node.attestations.add(PendingAttestation(calendar))
            except (ValueError, TypeError) as exc:
                raise OtsInvalid(f"{calendar!r} cannot name a pending attestation: {exc}") from None
    return stamp


def detached(stamp: Timestamp) -> bytes:
    """`stamp` (on a seal digest) as a standard detached `.ots` file."""
    ctx = BytesSerializationContext()
    DetachedTimestampFile(OpSHA256(), stamp).serialize(ctx)
    return ctx.getbytes()


def load_detached(data: bytes) -> DetachedTimestampFile:
    """Parse a detached `.ots` file strictly (magic, version, digest, ops, no trailing bytes).

    Raises OtsInvalid for anything the library refuses.
    """
    try:
        return DetachedTimestampFile.deserialize(BytesDeserializationContext(data))
    except (DeserializationError, ValueError, TypeError, AssertionError) as exc:
        raise OtsInvalid(f"not a valid .ots proof: {exc!r}") from None


def summarize(stamp: Timestamp) -> ProofSummary:
    """The attestations a proof reaches, by kind."""
    pending: set[str] = set()
    bitcoin: set[BitcoinClaim] = set()
    unknown = 0
    for message, attestation in stamp.all_attestations():
        if isinstance(attestation, PendingAttestation):
            pending.add(attestation.uri)
        elif isinstance(attestation, BitcoinBlockHeaderAttestation):
            bitcoin.add(BitcoinClaim(attestation.height, message))
        else:
            unknown += 1
    return ProofSummary(
        pending=tuple(sorted(pending)),
        bitcoin=tuple(sorted(bitcoin, key=lambda c: (c.height, c.digest))),
        unknown=unknown,
    )


def pending_commitments(stamp: Timestamp) -> list[tuple[bytes, str]]:
    """(commitment, calendar URL) of every PendingAttestation: what to ask the calendars for."""
    return sorted(
        (message, attestation.uri)
        for message, attestation in stamp.all_attestations()
        if isinstance(attestation, PendingAttestation)
    )


def merge_upgrade(stamp: Timestamp, commitment: bytes, calendar: str, upgraded: Timestamp) -> bool:
    """Graft `upgraded` (a calendar's timestamp on `commitment`) into `stamp` if it reaches a
    Bitcoin attestation, dropping that calendar's fulfilled pending attestation. Returns whether
    anything was kept.
    """
    if not any(
        isinstance(a, BitcoinBlockHeaderAttestation) for _, a in upgraded.all_attestations()
    ):
        return False
    kept = False
    for node in _nodes(stamp):
        if node.msg == commitment:
            node.merge(upgraded)
            node.attestations.discard(PendingAttestation(calendar))
            kept = True
    return kept


def _nodes(stamp: Timestamp):
    yield stamp
    for child in stamp.ops.values():
        yield from _nodes(child)
