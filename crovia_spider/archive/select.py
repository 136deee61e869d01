"""Which capture records an export holds: those of named items (every version of each), named
capture records, or every capture of a vendor; at or after a time when asked.

Read from the ledger's JSONL in one pass, like `crovia find` without an index: capture records
have no index rows of their own. Only the leaves the index counts are read (a line a writer is
appending is not seen).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from crovia_spider.exceptions import ExportRefused
from ledger import jsonl
from ledger.records.capture import CAPTURE_TYPE
from ledger.store import identity_digest

ITEM_TYPE = "AX.OBS"
# Ledger lines are canonical JSON: a line holding neither is no capture and no item, unparsed.
_CAPTURE_MARK = b'"axiom_type":"AX.CAPTURE"'
_ITEM_MARK = b'"axiom_type":"AX.OBS"'


def select_captures(
    reader: Any,
    *,
    axiom_ids: Sequence[str] = (),
    vendor: str | None = None,
    since: str | None = None,
) -> list[dict[str, Any]]:
    """The full capture envelopes to export, in leaf order, from the ledger `reader` (a
    `ledger.store.Ledger` opened without a key): for each of `axiom_ids`, the capture record it
    names, or every capture of the item it names (of any version of that item); else every
    capture whose vendor matches `vendor` (a name or shell pattern). `since` (as
    `ledger.store.parse_since` gives it) keeps captures at or after it.

    Raises UnknownAxiom for an id the ledger lacks, ExportRefused for an id that is neither an
    item nor a capture record, for an item with no capture (since `since`), or when nothing
    matches."""
    wanted, items = _requested(reader, axiom_ids)
    versions: dict[str, str] = {}  # axiom_id of each version of a named item -> its identity
    chosen: list[dict[str, Any]] = []
    for envelope in _captures_and_items(reader, with_items=bool(items)):
        if envelope["axiom_type"] == ITEM_TYPE:
            identity = _identity(envelope)
            if identity in items.values():
                versions[envelope["axiom_id"]] = identity
            continue
        body = envelope.get("body") or {}
        if since is not None and str(body.get("captured_at", "")) < since:
            continue
        if _chosen(envelope, wanted, versions, vendor):
            chosen.append(envelope)
    _refuse_unmatched(chosen, wanted, items, versions, vendor, since)
    return chosen


def _requested(reader: Any, axiom_ids: Sequence[str]) -> tuple[set[str], dict[str, str]]:
    """(capture record ids named, {each named item's id: the digest of its identity})."""
    wanted: set[str] = set()
    items: dict[str, str] = {}
    for axiom_id in axiom_ids:
        envelope = reader.envelope_of(axiom_id)
        kind = envelope.get("axiom_type")
        if kind == CAPTURE_TYPE:
            wanted.add(axiom_id)
        elif kind == ITEM_TYPE:
            items[axiom_id] = _identity(envelope)
        else:
            raise ExportRefused(
                f"{axiom_id} is a {kind} record, neither an item ({ITEM_TYPE}) nor a capture"
                f" record ({CAPTURE_TYPE})"
            )
    return wanted, items


def _captures_and_items(reader: Any, *, with_items: bool) -> Iterator[dict[str, Any]]:
    """The capture envelopes of the ledger (and its item envelopes when `with_items`), in order."""
    count = reader.leaf_count
    for leaf_index, (_offset, line) in enumerate(jsonl.iter_lines(reader.jsonl_path)):
        if leaf_index >= count:
            return
        if _CAPTURE_MARK in line or (with_items and _ITEM_MARK in line):
            envelope = orjson.loads(line)
            if envelope.get("axiom_type") in (CAPTURE_TYPE, ITEM_TYPE):
                yield envelope


def _identity(envelope: Mapping[str, Any]) -> str:
    """The digest of an item's identity (its versions share it), as the ledger's index keys it."""
    identity = (envelope.get("object") or {}).get("identity")
    if not isinstance(identity, Mapping):  # an envelope from before scoped identities
        identity = {"target_id": (envelope.get("subject") or {}).get("target_id", "")}
    return identity_digest(identity)


def _chosen(
    envelope: Mapping[str, Any], wanted: set[str], versions: Mapping[str, str], vendor: str | None
) -> bool:
    body = envelope.get("body") or {}
    if envelope.get("axiom_id") in wanted or body.get("item") in versions:
        return True
    return vendor is not None and fnmatch.fnmatchcase(str(body.get("vendor", "")), vendor)


def _refuse_unmatched(
    chosen: Sequence[Mapping[str, Any]],
    wanted: set[str],
    items: Mapping[str, str],
    versions: Mapping[str, str],
    vendor: str | None,
    since: str | None,
) -> None:
    """ExportRefused naming the first id given that matched no capture, or saying nothing did."""
    after = f" captured at or after {since}" if since is not None else ""
    found = {e["axiom_id"] for e in chosen}
    for axiom_id in sorted(wanted - found):
        raise ExportRefused(f"capture record {axiom_id} was captured before {since}")
    captured = {versions.get(e["body"]["item"]) for e in chosen}
    for axiom_id, identity in items.items():
        if identity not in captured:
            raise ExportRefused(f"item {axiom_id} has no capture record{after}")
    if not chosen:
        raise ExportRefused(f"no capture record of vendor {vendor!r}{after} in the ledger")
