"""A monitor's check of one published entry: the rules `crovia audit` applies to a ledger line,
plus the envelope's shape at its index, so a monitor trusts nothing the log says about itself.

Per entry: canonical JSON, axiom_id, ed25519 signature under the log's key (ledger/audit/leaves.py's
`check_signed_line`, the verifier's own checks); then the exact envelope keys, schema and type, the
anchor naming this leaf index, and the spider_record's 17 fields and types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ledger.audit.leaves import check_signed_line
from ledger.envelope import validate_record
from ledger.exceptions import EntryInvalid, InvalidRecord, SignatureInvalid, VerificationError
from ledger.monitor.keys import LogKeys
from ledger.records.capture import is_capture_record
from ledger.records.coverage import is_coverage_record
from ledger.records.fetch import is_fetch_record, validate_fetch_body
from ledger.records.shape import check_envelope_shape, ledger_anchor_height
from ledger.tlog.rfc6962 import leaf_hash


def check_entries(
    entries: Sequence[bytes], first: int, verify_from: int, keys: LogKeys
) -> list[bytes]:
    """Leaf hashes of `entries` (leaf indexes from `first`); those from `verify_from` on are
    checked in full first, each under the key of its era. Raises the VerificationError of the
    first bad entry, naming its leaf."""
    digests = []
    for leaf_index, entry in enumerate(entries, first):
        if leaf_index < verify_from:  # checked in an earlier run, bound by its verified root
            digests.append(leaf_hash(entry))
        else:
            key = keys.verify_key_for_leaf(leaf_index)
            try:
                digests.append(check_signed_line(entry, leaf_index, key))
            except SignatureInvalid as exc:  # name the key of the leaf's era it was held to
                raise SignatureInvalid(
                    f"{exc.args[0]} (checked under key {bytes(key).hex()}, the key of leaf"
                    f" {leaf_index}'s era: the pinned key or one a signed hand-over leads to)",
                    expected=exc.expected,
                    computed=exc.computed,
                ) from None
            check_shape(orjson.loads(entry), leaf_index)
    return digests


def check_shape(envelope: dict[str, Any], leaf_index: int) -> None:
    """Raise EntryInvalid unless `envelope` has an AX.OBS or AX.FETCH envelope's shape (the same
    rule as `crovia verify` and `crovia audit`: ledger/records/shape.py), the anchor of
    `leaf_index`, and a valid spider_record (or, for a fetch record, a valid fetch body)."""
    try:
        check_envelope_shape(envelope, anchor=False)
        height = ledger_anchor_height(envelope)
    except VerificationError as exc:
        raise EntryInvalid(
            f"leaf {leaf_index}: {exc.args[0]}", expected=exc.expected, computed=exc.computed
        ) from None
    if height != leaf_index:
        raise EntryInvalid(
            f"leaf {leaf_index}: anchors name another position",
            expected=leaf_index,
            computed=height,
        )
    body = envelope["body"]
    if is_capture_record(envelope) or is_coverage_record(envelope):  # held with the shape
        return
    if is_fetch_record(envelope):  # a fetch record's body states the fetch, not an item
        try:
            validate_fetch_body(body)
        except InvalidRecord as exc:
            raise EntryInvalid(f"leaf {leaf_index}: fetch record: {exc}") from None
        return
    try:
        validate_record(body.get("spider_record") if isinstance(body, dict) else None)
    except InvalidRecord as exc:
        raise EntryInvalid(f"leaf {leaf_index}: body.spider_record: {exc}") from None
