"""OpenTimestamps proofs of a seal, in the `opentimestamps` library's format.

A proof starts at the seal digest (sha256 of the seal's signed bytes, as the OTS client starts at
a file's sha256) and is kept as a standard detached `.ots` file. Calendars answer
`POST /digest` with a timestamp ending in PendingAttestations, and `GET /timestamp/<commitment>`
with its upgrade; `merge_upgrade` grafts an upgrade in and keeps it only if it reaches Bitcoin.

Bounds (issue 19): a proof is parsed by the library's own deserializer, inside a context that
holds it to explicit limits, so what a hostile proof costs stays within a small multiple of its
size (docs/stamps.md, "Limits on OpenTimestamps proofs"):
- total bytes: a calendar's answer at most MAX_REPLY_BYTES (16 KiB), a detached proof (stored, or
  in a receipt) at most MAX_PROOF_BYTES (that of 16 answers), refused before parsing;
- operations: at most one tag (operation, attestation, fork) per 8 bytes, beyond a small slack
  (32 for an answer; an honest proof spends about 17 bytes per operation);
- depth: at most MAX_DEPTH nested operations (the library's recursion limit);
- messages: the messages the operations compute (each up to 4 KiB, however few bytes the
  operation took) at most 8 bytes per byte, beyond a slack of 4 KiB per answer.
A detached proof's slack is that of 16 answers (each calendar adds at most two to a stored proof),
so whatever the stamper merged from answers within bounds loads again. A proof over a bound
raises OtsInvalid naming it; the stamper records a calendar answer refused so (ledger/stamps/
stamper.py), so no later `prove` or `verify` of the seal pays for it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.op import OpSHA256
from opentimestamps.core.serialize import (
    BytesDeserializationContext,
    BytesSerializationContext,
    DeserializationError,
    RecursionLimitError,
)
from opentimestamps.core.timestamp import DetachedTimestampFile, Timestamp

from ledger.exceptions import OtsInvalid

MAX_REPLY_BYTES = 16 * 1024  # a calendar's answer; a Bitcoin upgrade is ~1 KiB per calendar
OPERATION_BYTES = 8  # at least this many bytes of proof per operation (tag), beyond the slack
MESSAGE_FACTOR = 8  # computed message bytes per byte of proof, beyond the slack
MAX_DEPTH = 256  # the library's own recursion limit for detached files
# Each calendar adds at most two answers to a stored proof (its submit, then one upgrade that
# reaches Bitcoin and ends its pending attestation), each within the answer bounds; a detached
# proof's bounds are those of this many answers together, so what the stamper merged always
# loads again (the slack is additive, the per-byte rates the same).
MAX_CALENDAR_ANSWERS = 16
_REPLY_SLACK = (32, 4096)  # operations, message bytes
MAX_PROOF_BYTES = MAX_CALENDAR_ANSWERS * MAX_REPLY_BYTES + 4096  # with the file's header
_PROOF_SLACK = (MAX_CALENDAR_ANSWERS * (_REPLY_SLACK[0] + 1), MAX_CALENDAR_ANSWERS * 4096 + 4096)

_DESERIALIZE = Timestamp.deserialize.__func__.__code__


class _BoundedContext(BytesDeserializationContext):
    """The library's byte context, counting what the library's parser builds from it.

    Every tag (operation, attestation marker, fork) is read with `read_bytes(1)`; the first tag of
    each timestamp node is read by `Timestamp.deserialize` right after it made the node, whose
    message is then counted. A limit passed raises OtsInvalid out of the parser at once.
    """

    def __init__(self, data: bytes, what: str, limit: int, slack: tuple[int, int]) -> None:
        if len(data) > limit:
            raise OtsInvalid(f"{what} is longer than {limit} bytes", computed=len(data))
        super().__init__(data)
        self.what = what
        self.operations = 0
        self.max_operations = slack[0] + len(data) // OPERATION_BYTES
        self.message_bytes = 0
        self.max_message_bytes = slack[1] + MESSAGE_FACTOR * len(data)
        self._nodes: set[int] = set()

    def read_bytes(self, expected_length: Any = None) -> bytes:
        if expected_length == 1:
            self._count(sys._getframe(1))
        return super().read_bytes(expected_length)

    def _count(self, caller: Any) -> None:
        self.operations += 1
        if self.operations > self.max_operations:
            raise OtsInvalid(
                f"{self.what} has more operations than its size allows",
                expected=f"<= {self.max_operations}",
                computed=self.operations,
            )
        if caller.f_code is not _DESERIALIZE:
            return
        node = caller.f_locals.get("self")
        if node is None or id(node) in self._nodes:
            return
        self._nodes.add(id(node))
        self.message_bytes += len(node.msg)
        if self.message_bytes > self.max_message_bytes:
            raise OtsInvalid(
                f"{self.what} computes more message bytes than its size allows",
                expected=f"<= {self.max_message_bytes}",
                computed=self.message_bytes,
            )


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
    """The timestamp a calendar returned for `message`, within the bounds above. Raises OtsInvalid
    for anything else."""
    try:
        ctx = _BoundedContext(body, "the calendar's answer", MAX_REPLY_BYTES, _REPLY_SLACK)
        stamp = Timestamp.deserialize(ctx, message, _recursion_limit=MAX_DEPTH)
        ctx.assert_eof()
    except RecursionLimitError:
        raise OtsInvalid(f"the calendar's answer is more than {MAX_DEPTH} deep") from None
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
    """Parse a detached `.ots` file strictly (magic, version, digest, ops, no trailing bytes),
    within the bounds above.

    Raises OtsInvalid for anything the library refuses, and for a proof over a bound.
    """
    try:
        return DetachedTimestampFile.deserialize(
            _BoundedContext(data, "the proof", MAX_PROOF_BYTES, _PROOF_SLACK)
        )
    except RecursionLimitError:
        raise OtsInvalid(f"the proof is more than {MAX_DEPTH} deep") from None
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
