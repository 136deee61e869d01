"""The per-line half of `crovia audit`: every check one ledger line allows on its own.

Each line must be canonical JSON of an AX.OBS envelope (ledger/records/shape.py) whose axiom_id
recomputes and whose signature verifies under the key of its era, and pass any extra per-leaf
check a caller plugs in. What needs the whole ledger (the anchor height against the line number, a
repeated axiom_id, the index row, the seals) is left to ledger/audit/whole.py, which gets one
`LeafFacts` per line, in order. Batches are checked on a thread pool (PyNaCl releases the GIL
while verifying) with a bounded number in flight, so memory stays constant.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import nacl.signing
import orjson

from ledger import jsonl, merkle
from ledger.audit.keys import AuditKeys
from ledger.canonical import check_parsed, encode_checked
from ledger.envelope import axiom_id_of, signed_bytes
from ledger.exceptions import AxiomIdMismatch, CanonicalizationError, LineInvalid, VerificationError
from ledger.keys.signatures import check_envelope_signature
from ledger.records.shape import check_envelope_shape, ledger_anchor_height
from ledger.store.index import stored_row

BATCH_LINES = 256
T = TypeVar("T")
# A check a caller adds (a cited body, ...): called with the envelope and its leaf index, it
# raises a VerificationError; the audit prefixes the message with the leaf.
LeafCheck = Callable[[dict[str, Any], int], object]


class LeafFacts(NamedTuple):
    """What a checked line tells the whole-ledger checks."""

    leaf_hash: bytes
    axiom_digest: bytes  # the 32 bytes of the axiom_id (a replayed line: ledger/audit/whole.py)
    height: int  # anchors[0].height as signed
    index_row: tuple[Any, ...]  # the row index.sqlite must hold for this leaf (AUDIT_COLUMNS)
    end: int  # the file offset just past this line's newline


def check_line(
    line: bytes,
    leaf_index: int,
    offset: int,
    keys: AuditKeys,
    extra_checks: Sequence[LeafCheck] = (),
) -> LeafFacts:
    """Check one ledger line on its own; raise the VerificationError naming `leaf {leaf_index}`."""
    envelope = _parse(line, leaf_index)
    try:
        return _facts(envelope, line, leaf_index, offset, keys, extra_checks)
    except VerificationError as exc:  # `located`, with no closure or message per passing leaf
        raise _named(f"leaf {leaf_index}", exc) from None


def _facts(
    envelope: dict[str, Any],
    line: bytes,
    leaf_index: int,
    offset: int,
    keys: AuditKeys,
    extra_checks: Sequence[LeafCheck],
) -> LeafFacts:
    check_envelope_shape(envelope, anchor=False)
    height = ledger_anchor_height(envelope)
    computed = _signed(envelope, line, keys.for_leaf(leaf_index).key)
    for check in extra_checks:
        check(envelope, leaf_index)
    return LeafFacts(
        merkle.leaf_hash(line),
        bytes.fromhex(computed[4:]),
        height,
        stored_row(envelope, leaf_index, offset, len(line)),
        offset + len(line) + 1,
    )


def check_signed_line(line: bytes, leaf_index: int, key: nacl.signing.VerifyKey) -> bytes:
    """Canonical form, axiom_id and signature under `key` of one line; return its leaf hash.
    The per-entry check a monitor shares (ledger/monitor/entries.py adds its own shape check);
    `check_line` is the audit's, which adds the envelope's shape, anchor and index row."""
    envelope = _parse(line, leaf_index)
    located(f"leaf {leaf_index}", lambda: _signed(envelope, line, key))
    return merkle.leaf_hash(line)


def _signed(envelope: dict[str, Any], line: bytes, key: nacl.signing.VerifyKey) -> str:
    signed = signed_from_line(envelope, line)
    computed = _axiom_id(envelope, signed)
    if envelope.get("axiom_id") != computed:
        raise AxiomIdMismatch("axiom_id", expected=envelope.get("axiom_id"), computed=computed)
    check_envelope_signature(envelope, key, signed)
    return computed


def signed_from_line(envelope: dict[str, Any], line: bytes) -> bytes:
    """`signed_bytes(envelope)` when `line` is `envelope`'s canonical encoding (`_parse` checked
    it): the line without its top-level axiom_id and signature members, cut out instead of
    encoding the envelope again.

    The line starts with the anchors member, the least key, whose encoding is known, so the
    axiom_id member must follow it there. In canonical JSON the bytes of a member, `,"signature":`
    and its encoded value, occur only where an object holds that key with that value (a quote
    inside a string is escaped), so one found exactly once is the top-level one. An object's
    bytes without a member and the comma before it are its canonical encoding without that key.
    Any other line is encoded again."""
    axiom_id, signature = envelope.get("axiom_id"), envelope.get("signature")
    if type(axiom_id) is str and type(signature) is str:
        head = b'{"anchors":' + encode_checked(envelope.get("anchors")) + b","
        member = b'"axiom_id":' + orjson.dumps(axiom_id) + b","
        tail = b',"signature":' + orjson.dumps(signature)
        after = len(head) + len(member)
        at = line.rfind(tail)
        if (
            at >= after
            and line.startswith(head)
            and line.startswith(member, len(head))
            and line.find(tail, 0, at) < 0
        ):
            return head + line[after:at] + line[at + len(tail) :]
    return signed_bytes(envelope)


def _axiom_id(envelope: dict[str, Any], signed: bytes) -> str:
    """`axiom_id_of(envelope)` from its signed bytes: the id covers the same canonical object
    minus `anchors`, its first member, so it is those bytes without that member (one encoding
    of the envelope per line instead of two). Anything else is encoded again."""
    prefix = b'{"anchors":' + encode_checked(envelope.get("anchors")) + b","
    if not signed.startswith(prefix):
        return axiom_id_of(envelope)
    return "axm_" + hashlib.sha256(b"{" + signed[len(prefix) :]).hexdigest()


def _parse(line: bytes, leaf_index: int) -> dict[str, Any]:
    try:
        envelope = orjson.loads(line)
        # Always walked: on crawled lines (3.5 KB) the walk costs less than the quick test for
        # floats outside strings that used to gate it did, and it never guesses.
        check_parsed(envelope)
        canonical = encode_checked(envelope)
    except (orjson.JSONDecodeError, CanonicalizationError) as exc:
        raise LineInvalid(f"leaf {leaf_index}: not signable JSON ({exc})") from None
    # Byte equality also refuses duplicate keys: re-encoding keeps one, so the bytes differ.
    if canonical != line or type(envelope) is not dict:
        raise LineInvalid(f"leaf {leaf_index}: line is not in canonical form")
    return envelope


def located(where: str, check: Callable[[], T]) -> T:
    """Run one of the verifier's checks; on failure, the same error prefixed with `where`."""
    try:
        return check()
    except VerificationError as exc:
        raise _named(where, exc) from None


def _named(where: str, exc: VerificationError) -> VerificationError:
    """`exc`, its message prefixed with `where` unless it names it already (a check that names
    the leaf itself)."""
    if str(exc.args[0]).startswith(f"{where}:"):
        return exc
    return type(exc)(f"{where}: {exc.args[0]}", expected=exc.expected, computed=exc.computed)


def checked_lines(
    pool: ThreadPoolExecutor,
    ledger_file: Path,
    keys: AuditKeys,
    extra_checks: Sequence[LeafCheck],
    workers: int,
    end: int | None = None,
) -> Iterator[list[LeafFacts]]:
    """LeafFacts batch by batch, in ledger order (the lines within the first `end` bytes), with at
    most 2 * workers batches in flight."""
    in_flight: deque[Future[list[LeafFacts]]] = deque()
    try:
        for start, lines in _batches(ledger_file, end):
            in_flight.append(pool.submit(_check_batch, lines, start, keys, extra_checks))
            if len(in_flight) >= 2 * workers:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()
    finally:  # a refusal or a closed generator: batches not started are not checked
        for future in in_flight:
            future.cancel()


def _check_batch(
    lines: list[tuple[int, bytes]], start: int, keys: AuditKeys, extra: Sequence[LeafCheck]
) -> list[LeafFacts]:
    return [
        check_line(line, start + i, offset, keys, extra) for i, (offset, line) in enumerate(lines)
    ]


def _batches(ledger_file: Path, end: int | None) -> Iterator[tuple[int, list[tuple[int, bytes]]]]:
    batch: list[tuple[int, bytes]] = []
    start = 0
    for offset, line in jsonl.iter_lines(ledger_file, end=end):
        batch.append((offset, line))
        if len(batch) == BATCH_LINES:
            yield start, batch
            start, batch = start + len(batch), []
    if batch:
        yield start, batch
