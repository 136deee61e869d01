"""OpenTimestamps proofs within limits (issue 19, obs 6): the library's parser runs within explicit
bounds (total bytes, operations, depth) and a proof whose messages outgrow its bytes is refused,
so what a proof costs in memory stays within a small multiple of its size; a calendar reply over
the bound is refused (and, in a stamping run, recorded), so no stored proof outgrows its bound."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from opentimestamps.core.notary import PendingAttestation
from opentimestamps.core.op import OpAppend, OpHexlify, OpSHA256
from opentimestamps.core.serialize import BytesSerializationContext
from opentimestamps.core.timestamp import DetachedTimestampFile, Timestamp

from ledger.exceptions import OtsInvalid
from ledger.keys import generate_signing_key
from ledger.stamps import ots
from ledger.store import Ledger
from tests.ledger.stamps.calendar_server import LoopbackCalendar
from tests.ledger.stamps.conftest import crovia
from tests.memory import traced_peak
from tests.vectors.make_vectors import sample_envelope

DIGEST = hashlib.sha256(b"seal").digest()


def detached_bytes(stamp: Timestamp) -> bytes:
    ctx = BytesSerializationContext()
    DetachedTimestampFile(OpSHA256(), stamp).serialize(ctx)
    return ctx.getbytes()


def reply_bytes(stamp: Timestamp) -> bytes:
    ctx = BytesSerializationContext()
    stamp.serialize(ctx)
    return ctx.getbytes()


def amplifying(children: int, digest: bytes = DIGEST) -> Timestamp:
    """A proof whose 4 KiB messages cost a few bytes each: hexlify up to 4,093 bytes, then many
    one-byte appends, each ending in a short pending attestation."""
    stamp = Timestamp(digest)
    node = stamp
    for _ in range(6):  # 32 -> 2048 bytes
        node = node.ops.add(OpHexlify())
    node = node.ops.add(OpAppend(b"x" * 2045))  # 4093 bytes
    for number in range(children):
        child = node.ops.add(OpAppend(bytes([number % 256]) * (1 + number // 256)))
        child.attestations.add(PendingAttestation("h"))
    return stamp


def chain(levels: int, append: int = 16) -> Timestamp:
    """`levels` nested operations: appends of `append` bytes, each followed by sha256."""
    stamp = Timestamp(DIGEST)
    node = stamp
    for level in range(levels):
        op = OpSHA256() if level % 2 else OpAppend(level.to_bytes(2, "big") * (append // 2))
        node = node.ops.add(op)
    node.attestations.add(PendingAttestation("https://calendar.example"))
    return stamp


def peak_bytes(function, *args) -> int:
    return traced_peak(function, *args, expected=(OtsInvalid,)).peak


def test_an_amplifying_proof_is_refused_within_a_small_multiple_of_its_size() -> None:
    data = detached_bytes(amplifying(600))
    assert len(data) < 16_000  # unbounded, its messages alone would take 600 x 4 KiB
    with pytest.raises(OtsInvalid, match="more message bytes than its size allows"):
        ots.load_detached(data)
    assert peak_bytes(ots.load_detached, data) < 64 * len(data)


def test_an_amplifying_calendar_reply_is_refused() -> None:
    data = reply_bytes(amplifying(600))
    with pytest.raises(OtsInvalid, match="more message bytes than its size allows"):
        ots.parse_calendar_reply(DIGEST, data)
    assert peak_bytes(ots.parse_calendar_reply, DIGEST, data) < 64 * len(data)


def bushy(siblings: int, hashes: int) -> Timestamp:
    """`siblings` short branches of `hashes` sha256 each: about 3 bytes per operation."""
    stamp = Timestamp(DIGEST)
    for number in range(siblings):
        node = stamp.ops.add(OpAppend(number.to_bytes(2, "big")))
        for _ in range(hashes):
            node = node.ops.add(OpSHA256())
        node.attestations.add(PendingAttestation("c"))
    return stamp


def test_too_many_operations_for_the_size_are_refused() -> None:
    cheap = chain(200, append=2)  # 2.5 bytes per operation
    with pytest.raises(OtsInvalid, match="more operations than its size allows"):
        ots.parse_calendar_reply(DIGEST, reply_bytes(cheap))
    with pytest.raises(OtsInvalid, match="more operations than its size allows"):
        ots.load_detached(detached_bytes(bushy(300, 5)))
    assert peak_bytes(ots.load_detached, detached_bytes(bushy(300, 5))) < 200 * len(
        detached_bytes(bushy(300, 5))
    )


def test_too_deep_a_proof_is_refused() -> None:
    with pytest.raises(OtsInvalid, match="more than 256 deep"):
        ots.parse_calendar_reply(DIGEST, reply_bytes(chain(ots.MAX_DEPTH + 1)))
    with pytest.raises(OtsInvalid, match="more than 256 deep"):
        ots.scan_detached(detached_bytes(chain(ots.MAX_DEPTH + 1)))
    assert ots.scan_detached(detached_bytes(chain(ots.MAX_DEPTH - 2))).summary.pending


def test_the_stamper_builds_a_tree_only_for_a_bounded_answer() -> None:
    """The library's tree costs about 1.3 KB an operation: an answer of more tags than an honest
    Bitcoin upgrade has is refused before it is built (a verifier never builds it)."""
    deep = chain(ots.MAX_DEPTH - 2)
    with pytest.raises(OtsInvalid, match="more operations than the stamper builds a tree for"):
        ots.parse_calendar_reply(DIGEST, reply_bytes(deep))
    assert ots.parse_calendar_reply(DIGEST, reply_bytes(chain(ots.MAX_REPLY_OPERATIONS - 2)))
    assert peak_bytes(ots.parse_calendar_reply, DIGEST, reply_bytes(deep)) < 64 << 10


def test_verifying_holds_only_the_open_nodes() -> None:
    """`scan_detached` reads a proof of many operations within 20 times its size (and a fixed
    allowance), where the library's tree takes about 1.3 KB an operation."""
    for stamp in (chain(ots.MAX_DEPTH - 2), bushy(150, 5), chain(250, append=2)):
        data = detached_bytes(stamp)
        assert peak_bytes(ots.scan_detached, data) < 20 * len(data) + (16 << 10), len(data)
    wide = Timestamp(DIGEST)
    for number in range(400):
        node = wide.ops.add(OpAppend(number.to_bytes(2, "big") * 16))
        node.ops.add(OpSHA256()).attestations.add(PendingAttestation(f"https://c{number}.example"))
    data = detached_bytes(wide)
    scanned = ots.scan_detached(data)
    assert len(scanned.summary.pending) == 400
    assert peak_bytes(ots.scan_detached, data) < 20 * len(data)


def test_a_node_that_repeats_an_operation_or_an_attestation_is_refused() -> None:
    """The library's writer never repeats one; its reader would keep only the last of two equal
    operations, so what a proof attests would depend on which branch a reader keeps."""
    branch = reply_bytes(chain(2))  # one branch: append, sha256, a pending attestation
    with pytest.raises(OtsInvalid, match="repeats"):
        ots.parse_calendar_reply(DIGEST, b"\xff" + branch + branch)
    pending = Timestamp(DIGEST)
    pending.attestations.add(PendingAttestation("https://calendar.example"))
    attestation = reply_bytes(pending)
    with pytest.raises(OtsInvalid, match="repeats"):
        ots.scan_detached(detached_bytes(chain(0))[: -len(attestation)] + b"\xff" + attestation * 2)
    assert ots.scan_detached(detached_bytes(chain(0))).summary.pending


def test_too_long_a_proof_or_reply_is_refused_before_parsing() -> None:
    with pytest.raises(OtsInvalid, match="longer than"):
        ots.load_detached(b"\x00" * (ots.MAX_PROOF_BYTES + 1))
    with pytest.raises(OtsInvalid, match="longer than"):
        ots.parse_calendar_reply(DIGEST, b"\x00" * (ots.MAX_REPLY_BYTES + 1))


def test_an_honest_proof_passes() -> None:
    stamp = Timestamp(DIGEST)
    for calendar in ("https://a.example", "https://b.example"):
        node = stamp.ops.add(OpAppend(hashlib.sha256(calendar.encode()).digest()[:16]))
        node = node.ops.add(OpSHA256())
        node.attestations.add(PendingAttestation(calendar))
    summary = ots.summarize(ots.load_detached(detached_bytes(stamp)).timestamp)
    assert summary.pending == ("https://a.example", "https://b.example")


class PlantingCalendar(LoopbackCalendar):
    """A calendar whose submit answer is an amplifying timestamp (under 1 MiB, 16 KiB even)."""

    def submit(self, digest: bytes) -> bytes:
        self.submitted.append(digest)
        return reply_bytes(amplifying(600, digest))


def test_a_calendar_planting_an_amplifying_reply_is_refused_and_recorded(
    tmp_path: Path,
) -> None:
    key = generate_signing_key(tmp_path / "keys" / "signing.key")
    with Ledger.open(tmp_path / "ledger", signing_key=key) as ledger:
        ledger.issue([sample_envelope(1)])
        ledger.seal()
    with PlantingCalendar() as calendar:
        proc = crovia(tmp_path, "stamp", "--timeout", "5", CROVIA_OTS_CALENDARS=calendar.url)
    assert proc.returncode == 0, proc.stderr
    assert "0 OpenTimestamps submissions kept" in proc.stdout
    (attempt,) = [
        json.loads(line)
        for line in (tmp_path / "ledger/stamps/attempts.jsonl").read_text().splitlines()
    ]
    assert attempt["kind"] == "ots_submit" and "more message bytes" in attempt["error"]
    assert not list((tmp_path / "ledger/stamps").glob("seals/*.json"))


def edge_reply(calendar: int) -> bytes:
    """A calendar answer as costly as the answer bounds allow (cheap operations up to the limit)."""
    stamp = Timestamp(DIGEST)
    node = stamp.ops.add(OpAppend(calendar.to_bytes(16, "big")))
    for _ in range(36):
        node = node.ops.add(OpSHA256())
    node.attestations.add(PendingAttestation(f"https://c{calendar}.example"))
    return reply_bytes(stamp)


def test_a_proof_merged_from_answers_within_bounds_stays_within_bounds() -> None:
    """What the stamper stores (the answers of up to 8 calendars, submit and upgrade) must load
    again, or a calendar could make a seal's proof unusable for every later prove."""
    stamp = Timestamp(DIGEST)
    for calendar in range(ots.MAX_CALENDAR_ANSWERS):
        stamp.merge(ots.parse_calendar_reply(DIGEST, edge_reply(calendar)))
    summary = ots.summarize(ots.load_detached(ots.detached(stamp)).timestamp)
    assert len(summary.pending) == ots.MAX_CALENDAR_ANSWERS
