"""OpenTimestamps proofs of a seal, in the `opentimestamps` library's format.

A proof starts at the seal digest (sha256 of the seal's signed bytes, as the OTS client starts at
a file's sha256) and is kept as a standard detached `.ots` file. Calendars answer
`POST /digest` with a timestamp ending in PendingAttestations, and `GET /timestamp/<commitment>`
with its upgrade; `merge_upgrade` grafts an upgrade in and keeps it only if it reaches Bitcoin.

Bounds: a proof from elsewhere (a receipt's, a stored one, a calendar's answer) is first read by
`scan`, a walk over its bytes that uses the library's own readers of operations and attestations
but keeps no tree: it holds only the messages of the nodes still open (those with a fork left to
read), so a proof's cost stays within a small multiple of its size (docs/stamps.md, "Limits on
OpenTimestamps proofs"). The walk holds the proof to explicit limits:
- total bytes: a calendar's answer at most MAX_REPLY_BYTES (16 KiB), a detached proof (stored, or
  in a receipt) at most MAX_PROOF_BYTES (that of 16 answers), refused before parsing;
- operations: at most one tag (operation, attestation, fork) per 8 bytes, beyond a small slack
  (32 for an answer; an honest proof spends about 17 bytes per operation);
- depth: at most MAX_DEPTH nested operations (the library's recursion limit);
- messages: the messages the operations compute (each up to 4 KiB, however few bytes the
  operation took) at most 8 bytes per byte, beyond a slack of 4 KiB per answer;
- one node never repeats an operation or an attestation (the library's own writer never does; its
  reader would silently keep only the last of two equal operations).
Verifying a receipt and summarising a stored proof need nothing more (`scan_detached`). The
stamper, which must graft a calendar's answers into a proof and write it back, then builds the
library's tree, at about 1.3 KB an operation whatever the bytes: only for an answer of at most
MAX_REPLY_OPERATIONS tags, and a stored proof of at most MAX_PROOF_OPERATIONS (16 answers' worth).
A proof over a bound raises OtsInvalid naming it; the stamper records a calendar answer refused so
(ledger/stamps/stamper.py), so no later `prove` or `verify` of the seal pays for it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from opentimestamps.core.notary import (
    BitcoinBlockHeaderAttestation,
    PendingAttestation,
    TimeAttestation,
)
from opentimestamps.core.op import CryptOp, MsgValueError, Op, OpSHA256
from opentimestamps.core.serialize import (
    BytesDeserializationContext,
    BytesSerializationContext,
    DeserializationError,
    RecursionLimitError,
    UnsupportedMajorVersion,
)
from opentimestamps.core.timestamp import DetachedTimestampFile, Timestamp

from ledger.exceptions import OtsInvalid
from ledger.stamps.plain_words import readable

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

# The library's tree costs about 1.3 KB an operation, whatever the bytes: it is built only for an
# answer of at most this many tags (an honest Bitcoin upgrade has 40 to 90), and a stored proof of
# at most 16 answers' worth (and a fork marker each where they were merged).
MAX_REPLY_OPERATIONS = 192
MAX_PROOF_OPERATIONS = MAX_CALENDAR_ANSWERS * (MAX_REPLY_OPERATIONS + 1) + 1
_NOT_A_PROOF = "not a valid .ots proof"
_FORK = b"\xff"
_ATTESTATION = b"\x00"


class _BoundedContext(BytesDeserializationContext):
    """The library's byte context, holding a walk over it to the bounds above.

    Every tag (operation, attestation marker, fork, the detached file's hash operation) is read
    with `read_bytes(1)` and counted; the walk counts each message it computes (`computed`). A
    limit passed raises OtsInvalid at once.
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

    def read_bytes(self, expected_length: Any = None) -> bytes:
        if expected_length == 1:
            self.operations += 1
            if self.operations > self.max_operations:
                raise OtsInvalid(
                    f"{self.what} has more operations than its size allows",
                    expected=f"<= {self.max_operations}",
                    computed=self.operations,
                )
        return super().read_bytes(expected_length)

    def computed(self, message: bytes) -> None:
        self.message_bytes += len(message)
        if self.message_bytes > self.max_message_bytes:
            raise OtsInvalid(
                f"{self.what} computes more message bytes than its size allows",
                expected=f"<= {self.max_message_bytes}",
                computed=self.message_bytes,
            )


class _Scan:
    """What a walk found: pending calendars, Bitcoin claims, other attestations (counted)."""

    def __init__(self) -> None:
        self.pending: set[str] = set()
        self.bitcoin: set[BitcoinClaim] = set()
        self.unknown = 0

    def attested(self, message: bytes, attestation: TimeAttestation) -> None:
        if isinstance(attestation, PendingAttestation):
            self.pending.add(attestation.uri)
        elif isinstance(attestation, BitcoinBlockHeaderAttestation):
            self.bitcoin.add(BitcoinClaim(attestation.height, message))
        else:
            self.unknown += 1

    def summary(self) -> ProofSummary:
        return ProofSummary(
            pending=tuple(sorted(self.pending)),
            bitcoin=tuple(sorted(self.bitcoin, key=lambda c: (c.height, c.digest))),
            unknown=self.unknown,
        )


def _walk(ctx: _BoundedContext, message: bytes, found: _Scan) -> None:
    """Read one serialized timestamp on `message` from `ctx` as `Timestamp.deserialize` reads it
    (the same tags, operations and attestations, read by the library), without building it: only
    the nodes still open are held, each with its message, its depth and what it has had."""
    ctx.computed(message)
    # Open nodes: [message, depth, the operations and attestations of its branches read so far].
    stack: list[list[Any]] = [[message, 0, None]]
    while stack:
        node = stack[-1]
        tag = ctx.read_bytes(1)
        if tag == _FORK:
            tag = ctx.read_bytes(1)
        else:
            stack.pop()  # the node's last branch
        if tag == _ATTESTATION:
            branch: Any = TimeAttestation.deserialize(ctx)
        else:
            branch = Op.deserialize_from_tag(ctx, tag)
        seen = node[2]
        if seen is None:
            seen = node[2] = set()
        elif branch in seen:
            kind = "an attestation" if tag == _ATTESTATION else "an operation"
            raise OtsInvalid(f"{ctx.what} repeats {kind} in one node")
        seen.add(branch)
        if tag == _ATTESTATION:
            found.attested(node[0], branch)
            continue
        try:
            result = branch(node[0])
        except MsgValueError as exc:
            name = type(branch).__name__  # not its repr: an argument may be 4 KiB
            raise DeserializationError(f"message invalid for {name}: {exc}") from None
        if node[1] + 1 >= MAX_DEPTH:
            raise RecursionLimitError("more than the recursion limit")
        ctx.computed(result)
        stack.append([result, node[1] + 1, None])


@dataclass(frozen=True)
class Scanned:
    """A detached proof as `scan_detached` read it."""

    file_hash_op: Op
    file_digest: bytes
    summary: ProofSummary
    operations: int  # tags read, the file's hash operation included


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
    what = "the calendar's answer"
    refused = f"{what} is not a timestamp"
    ctx = _BoundedContext(body, what, MAX_REPLY_BYTES, _REPLY_SLACK)
    found = _Scan()
    _read(what, refused, lambda: (_walk(ctx, message, found), ctx.assert_eof()))
    if not (found.pending or found.bitcoin or found.unknown):
        raise OtsInvalid("the calendar's timestamp has no attestation")
    _tree_allowed(what, ctx.operations, MAX_REPLY_OPERATIONS)
    plain = BytesDeserializationContext(body)
    return _read(
        what, refused, lambda: Timestamp.deserialize(plain, message, _recursion_limit=MAX_DEPTH)
    )


def check_names_calendar(stamp: Timestamp, calendar: str) -> Timestamp:
    """`stamp` (a calendar's answer), if every PendingAttestation in it names `calendar`, the
    calendar asked, exactly. A calendar that answers with another calendar's promise (an
    aggregator's, or anyone's) would have us keep, publish and later ask a calendar the operator
    never named. Raises OtsInvalid naming the others."""
    others = sorted(
        {
            attestation.uri
            for _, attestation in stamp.all_attestations()
            if isinstance(attestation, PendingAttestation) and attestation.uri != calendar
        }
    )
    if others:
        raise OtsInvalid(
            "the calendar's answer has a pending attestation naming another calendar",
            expected=calendar,
            computed=others,
        )
    return stamp


def check_submitted_to(summary: ProofSummary, ots_url: object) -> None:
    """A pending proof must be pending at the calendar the receipt says the seal was submitted to
    (`bitcoin_anchor.ots_url`): a proof pending only at calendars the receipt does not name is
    refused (docs/stamps.md, "Calendars"). Raises OtsInvalid."""
    if summary.status == "pending_next_stamp" and ots_url not in summary.pending:
        raise OtsInvalid(
            "the proof is not pending at the calendar the receipt was submitted to (ots_url)",
            expected=list(summary.pending),
            computed=ots_url,
        )


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
                raise OtsInvalid(
                    f"{calendar!r} cannot name a pending attestation: {readable(exc)}"
                ) from None
    return stamp


def detached(stamp: Timestamp) -> bytes:
    """`stamp` (on a seal digest) as a standard detached `.ots` file."""
    ctx = BytesSerializationContext()
    DetachedTimestampFile(OpSHA256(), stamp).serialize(ctx)
    return ctx.getbytes()


def scan_detached(data: bytes) -> Scanned:
    """Read a detached `.ots` file strictly (magic, version, digest, ops, no trailing bytes),
    within the bounds above, without building its tree: what verifying a receipt needs.

    Raises OtsInvalid for anything the library's reader refuses, and for a proof over a bound.
    """
    ctx = _BoundedContext(data, "the proof", MAX_PROOF_BYTES, _PROOF_SLACK)
    found = _Scan()

    def read() -> tuple[Op, bytes]:
        ctx.assert_magic(DetachedTimestampFile.HEADER_MAGIC)
        major = ctx.read_varuint()
        if major != DetachedTimestampFile.MAJOR_VERSION:
            raise UnsupportedMajorVersion(
                f"Version {major} detached timestamp files are not supported"
            )
        hash_op = CryptOp.deserialize(ctx)
        digest = ctx.read_bytes(hash_op.DIGEST_LENGTH)
        _walk(ctx, digest, found)
        ctx.assert_eof()
        return hash_op, digest

    hash_op, digest = _read("the proof", _NOT_A_PROOF, read)
    return Scanned(hash_op, digest, found.summary(), ctx.operations)


def load_detached(data: bytes) -> DetachedTimestampFile:
    """A detached `.ots` file as the library's tree, for the stamper to graft answers into:
    `scan_detached` first, then the library's reader, for a proof of at most MAX_PROOF_OPERATIONS
    tags. Raises OtsInvalid as `scan_detached` does, and for a proof over that bound.
    """
    _tree_allowed("the proof", scan_detached(data).operations, MAX_PROOF_OPERATIONS)
    plain = BytesDeserializationContext(data)
    return _read("the proof", _NOT_A_PROOF, lambda: DetachedTimestampFile.deserialize(plain))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The library warns on every reverse operation that it may drop them; a proof from elsewhere
    may hold any number, and the warning says nothing about the proof."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        yield


def _tree_allowed(what: str, operations: int, limit: int) -> None:
    if operations > limit:
        raise OtsInvalid(
            f"{what} has more operations than the stamper builds a tree for",
            expected=f"<= {limit}",
            computed=operations,
        )


def _read(what: str, refused: str, reader: Any) -> Any:
    """`reader()` (the walk, or the library's reader, which warns on every reverse operation it
    runs), with the library's errors as OtsInvalid: `refused` names what the bytes are not."""
    try:
        with _quiet():
            return reader()
    except RecursionLimitError:
        raise OtsInvalid(f"{what} is more than {MAX_DEPTH} deep") from None
    except (DeserializationError, ValueError, TypeError, AssertionError) as exc:
        raise OtsInvalid(f"{refused}: {readable(exc)}") from None


def summarize(stamp: Timestamp) -> ProofSummary:
    """The attestations a proof reaches, by kind (of the library's tree, as `_walk` finds them)."""
    found = _Scan()
    for message, attestation in stamp.all_attestations():
        found.attested(message, attestation)
    return found.summary()


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
