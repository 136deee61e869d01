"""AX.OBS envelopes: built from a 17-field spider_record, identified, signed (docs/format.md).

`axiom_id` covers the envelope minus {signature, axiom_id, anchors}, so it does not depend on where
the envelope lands; the signature covers the envelope minus {signature, axiom_id}, anchors included.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import nacl.signing

from ledger.canonical import check_signable, encode_checked
from ledger.exceptions import InvalidRecord

ENVELOPE_SCHEMA = "crovia.axiom.v1"
AXIOM_TYPE = "AX.OBS"
SIGNER = "crovia.substrate"
SIGNATURE_PREFIX = "ed25519:"
# anchors[0]: the chain is this ledger and the height the leaf index (the verifier checks it against
# the receipt); the proof and root do not exist when the envelope is signed, and the anchor says
# where they are instead.
ANCHOR_CHAIN = "crovia.axiom_ledger"
ANCHOR_SEE_RECEIPT = {
    "merkle_proof": "see receipt merkle_proof",
    "root_at_anchor": "see receipt seal.merkle_root",
}
# No RFC 3161 timestamp authority is asked; the envelope says so instead of carrying a placeholder
# token.
TSA_NONE = {"authority": "none", "rfc3161_token": ""}

RECORD_FIELDS: dict[str, type] = {
    "axiom_subtype": str,
    "category": str,
    "decision_hint": str,
    "envelope_target": str,
    "fingerprint": str,
    "observed_at": str,
    "parent_run_hash": str,
    "published": str,
    "runtime_version": str,
    "schema": str,
    "source_status": int,
    "source_url": str,
    "spider": str,
    "summary_excerpt": str,
    "title": str,
    "url": str,
    "vendor": str,
}
_HEX64 = re.compile(r"[0-9a-f]{64}")
_AXIOM_ID = re.compile(r"axm_[0-9a-f]{64}")
_OBSERVED_AT = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]{1,9})?Z", re.ASCII
)
_ISSUED_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def new_envelope(
    record: Mapping[str, Any],
    *,
    predecessors: Sequence[str] = (),
    object_extra: Mapping[str, Any] | None = None,
    body_extra: Mapping[str, Any] | None = None,
    confidence_extra: Mapping[str, Any] | None = None,
    issued_at: str | None = None,
    target_id: str | None = None,
) -> dict[str, Any]:
    """Build the UNSIGNED AX.OBS envelope of `record` in the reference receipt's shape.

    `subject.target_id` is `target_id` or the record's url. `issued_at` defaults to now (UTC,
    seconds, Z). Raises InvalidRecord for a record without exactly the 17 fields of the right types,
    a malformed predecessor id or timestamp, or `body_extra` naming a key the body has already,
    and CanonicalizationError for a float anywhere in the extras. `body_extra` adds keys to
    `body` (a relayed feed's `relay`); without it the body is the reference's exact shape.
    """
    validate_record(record)
    _check_predecessors(predecessors)
    issued_at = issued_at if issued_at is not None else utc_now_seconds()
    if not _ISSUED_AT.fullmatch(issued_at):
        raise InvalidRecord(f"issued_at {issued_at!r} is not UTC seconds like 2026-06-18T04:43:37Z")
    envelope = {
        "axiom_type": AXIOM_TYPE,
        "body": _body(record, body_extra),
        "confidence": {"method": "deterministic", **(confidence_extra or {})},
        "decision": record["decision_hint"],
        "issued_at": issued_at,
        "notes": f"Spider {record['spider']} ({record['category']}) {record['axiom_subtype']}",
        "object": {
            "captured_by": f"crovia.spider.{record['spider']}",
            "primary_source_url": record["url"],
            **(object_extra or {}),
        },
        "predecessors": list(predecessors),
        "schema": ENVELOPE_SCHEMA,
        "signer": SIGNER,
        "subject": _subject(record, target_id),
        "tsa": dict(TSA_NONE),
        "zk_mode": "clear",
        "zk_proof": None,
    }
    # The record's 17 fields were type-checked above and the rest is fixed text or built from
    # them: only the extras, target_id and the record's one int can still hold what canonical
    # JSON cannot sign (a float, a 65-bit int), so only they are walked (issue() is per item).
    check_signable(
        [object_extra or {}, body_extra or {}, confidence_extra or {}, target_id,
         record["source_status"]]
    )  # fmt: skip
    return envelope


def validate_record(record: Mapping[str, Any]) -> None:
    """Raise InvalidRecord unless `record` is a spider_record: the 17 fields, of the right types."""
    if not isinstance(record, Mapping):
        raise InvalidRecord(f"spider_record must be a dict, not {type(record).__name__}")
    missing = sorted(RECORD_FIELDS.keys() - record.keys())
    extra = sorted(record.keys() - RECORD_FIELDS.keys())
    if missing or extra:
        raise InvalidRecord(f"spider_record fields: missing {missing}, unexpected {extra}")
    for name, kind in RECORD_FIELDS.items():
        if type(record[name]) is not kind:
            raise InvalidRecord(
                f"spider_record.{name} must be {kind.__name__}, not {type(record[name]).__name__}"
            )
    for name in ("fingerprint", "parent_run_hash"):
        if not _HEX64.fullmatch(record[name]):
            raise InvalidRecord(f"spider_record.{name} must be 64 lowercase hex characters")
    if not _OBSERVED_AT.fullmatch(record["observed_at"]):
        raise InvalidRecord(f"spider_record.observed_at {record['observed_at']!r} is not UTC ...Z")
    if record["envelope_target"] != AXIOM_TYPE:
        raise InvalidRecord(f"spider_record.envelope_target must be {AXIOM_TYPE!r}")


def record_envelope(
    axiom_type: str,
    *,
    body: dict[str, Any],
    decision: str,
    issued_at: str | None,
    notes: str,
    obj: dict[str, Any],
    subject: dict[str, str],
    predecessors: Sequence[str] = (),
) -> dict[str, Any]:
    """The UNSIGNED envelope of a record of `axiom_type` (AX.FETCH, AX.CAPTURE, AX.COVERAGE:
    ledger/records/) holding what the kind gives it, and what every such envelope holds alike
    (a deterministic confidence, the schema, the signer, no TSA, clear zk); `issued_at` defaults
    to now. Raises CanonicalizationError for anything canonical JSON cannot sign."""
    envelope = {
        "axiom_type": axiom_type,
        "body": body,
        "confidence": {"method": "deterministic"},
        "decision": decision,
        "issued_at": issued_at if issued_at is not None else utc_now_seconds(),
        "notes": notes,
        "object": obj,
        "predecessors": list(predecessors),
        "schema": ENVELOPE_SCHEMA,
        "signer": SIGNER,
        "subject": subject,
        "tsa": dict(TSA_NONE),
        "zk_mode": "clear",
        "zk_proof": None,
    }
    check_signable(envelope)
    return envelope


def utc_now_seconds() -> str:
    """The current UTC time as 2026-06-18T04:43:37Z."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def axiom_id_of(envelope: Mapping[str, Any]) -> str:
    """`"axm_" + sha256_hex(canonical_json(envelope minus {signature, axiom_id, anchors}))`."""
    core = {k: v for k, v in envelope.items() if k not in ("signature", "axiom_id", "anchors")}
    return "axm_" + hashlib.sha256(encode_checked(core)).hexdigest()


def signed_bytes(envelope: Mapping[str, Any]) -> bytes:
    """The bytes the envelope signature covers: canonical_json(envelope minus {signature,
    axiom_id}).
    """
    return encode_checked({k: v for k, v in envelope.items() if k not in ("signature", "axiom_id")})


def sign_envelope(
    envelope: Mapping[str, Any], anchors: list[dict[str, Any]], key: nacl.signing.SigningKey
) -> dict[str, Any]:
    """Return the full envelope: `envelope` plus anchors, axiom_id and signature.

    The caller has passed `envelope` through new_envelope (or check_signable); anchors must be
    signable.
    """
    # One copy, grown in place from what the id covers to what the signature covers to the whole:
    # the same bytes as axiom_id_of and signed_bytes, without their copies (issue()'s hot path).
    full = {k: v for k, v in envelope.items() if k not in ("signature", "axiom_id", "anchors")}
    axiom_id = "axm_" + hashlib.sha256(encode_checked(full)).hexdigest()
    full["anchors"] = anchors
    signature = key.sign(encode_checked(full)).signature
    full["axiom_id"] = axiom_id
    full["signature"] = SIGNATURE_PREFIX + signature.hex()
    return full


def _body(record: Mapping[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    body = {
        "axiom_subtype": record["axiom_subtype"],
        "category": record["category"],
        "fingerprint": record["fingerprint"],
        "published": record["published"],
        "receipt_hash": record["fingerprint"],
        "schema": record["schema"],
        "spider": record["spider"],
        "spider_record": dict(record),
        "summary": record["summary_excerpt"],
        "title": record["title"],
        "vendor": record["vendor"],
    }
    if extra and extra.keys() & body.keys():
        raise InvalidRecord(f"body_extra must not replace {sorted(extra.keys() & body.keys())}")
    body.update(extra or {})
    return body


def _subject(record: Mapping[str, Any], target_id: str | None) -> dict[str, Any]:
    seconds = _OBSERVED_AT.fullmatch(record["observed_at"]).group(1)  # validated by the caller
    if target_id is not None and (type(target_id) is not str or not target_id):
        raise InvalidRecord("target_id must be a non-empty string")
    return {
        "observed_at": seconds + "Z",
        "source_collector": f"spider:{record['spider']}",
        "target_id": target_id or record["url"],
    }


def _check_predecessors(predecessors: Sequence[str]) -> None:
    if isinstance(predecessors, str):
        raise InvalidRecord("predecessors must be a list of axiom ids, not a string")
    for axiom_id in predecessors:
        if type(axiom_id) is not str or not _AXIOM_ID.fullmatch(axiom_id):
            raise InvalidRecord(f"predecessor {axiom_id!r} is not an axiom id (axm_ + 64 hex)")
