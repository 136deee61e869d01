"""What makes a signed object an AX.OBS envelope, for `crovia verify` and `crovia audit` alike.

A valid signature only says the key signed those bytes; a seal's fields with the seal's own
signature verify as an "envelope" too (both sign canonical JSON of the object minus its signature).
So both verifiers require the reference envelope's exact top-level key set, `schema`
"crovia.axiom.v1", `axiom_type` "AX.OBS" (an observed item), "AX.FETCH" (a fetch record,
ledger/records/fetch.py), "AX.CAPTURE" (a capture of an item's page, ledger/records/capture.py) or
"AX.COVERAGE" (arXiv's coverage of a category and day, ledger/records/coverage.py),
an anchor naming the leaf index, and the fields a verifier reports for
that type with the right types. Sub-objects stay open: `object` may carry more keys than
`captured_by` and `primary_source_url` (an arXiv id, a fetch record), `body` more than its title
and vendor; of those, `body.relay` (who served the feed, when not the vendor) is reported, so it
must be a non-empty string when present. docs/ledger.md, "Envelopes".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, AXIOM_TYPE, ENVELOPE_SCHEMA
from ledger.exceptions import AnchorMismatch, EnvelopeMalformed
from ledger.records.capture import CAPTURE_TYPE, capture_envelope_problem, capture_problem
from ledger.records.coverage import COVERAGE_TYPE, coverage_envelope_problem, coverage_problem
from ledger.records.fetch import (
    FETCH_TYPE,
    OUTCOMES,
    entries_problem,
    reading_problem,
    relay_problem,
)

ENVELOPE_KEYS = frozenset(
    {
        "anchors",
        "axiom_id",
        "axiom_type",
        "body",
        "confidence",
        "decision",
        "issued_at",
        "notes",
        "object",
        "predecessors",
        "schema",
        "signature",
        "signer",
        "subject",
        "tsa",
        "zk_mode",
        "zk_proof",
    }
)
# The reference system's anchors were placeholders ("crovia.axiom_graph", height 0 for leaf
# 233,395 in the seed): a receipt on that chain is accepted with its height unchecked, and only
# this project's chain states a height a verifier can hold to the leaf index.
LEGACY_ANCHOR_CHAINS = frozenset({"crovia.axiom_graph"})
# The string fields a verifier reports, by section ("" = the envelope itself).
REPORTED: tuple[tuple[str, str], ...] = (
    ("", "axiom_id"),
    ("", "issued_at"),
    ("", "signature"),
    ("body", "title"),
    ("body", "vendor"),
    ("object", "captured_by"),
    ("object", "primary_source_url"),
    ("subject", "observed_at"),
)
# An AX.FETCH record reports the feed and what the fetch found instead of an item's title.
REPORTED_FETCH: tuple[tuple[str, str], ...] = (
    ("", "axiom_id"),
    ("", "issued_at"),
    ("", "signature"),
    ("body", "vendor"),
    ("body", "feed_url"),
    ("body", "outcome"),
    ("body", "fetched_at"),
    ("object", "captured_by"),
    ("object", "primary_source_url"),
    ("subject", "observed_at"),
)
# An AX.CAPTURE record reports the page, the item it captures and what the capture found.
REPORTED_CAPTURE: tuple[tuple[str, str], ...] = (
    ("", "axiom_id"),
    ("", "issued_at"),
    ("", "signature"),
    ("body", "vendor"),
    ("body", "url"),
    ("body", "item"),
    ("body", "outcome"),
    ("body", "captured_at"),
    ("object", "captured_by"),
    ("object", "primary_source_url"),
    ("subject", "observed_at"),
)
# An AX.COVERAGE record reports the category, the day and when it was computed.
REPORTED_COVERAGE: tuple[tuple[str, str], ...] = (
    ("", "axiom_id"),
    ("", "issued_at"),
    ("", "signature"),
    ("body", "vendor"),
    ("body", "category"),
    ("body", "day"),
    ("body", "computed_at"),
    ("object", "captured_by"),
    ("object", "primary_source_url"),
    ("subject", "observed_at"),
)
AXIOM_TYPES = {
    AXIOM_TYPE: REPORTED,
    FETCH_TYPE: REPORTED_FETCH,
    CAPTURE_TYPE: REPORTED_CAPTURE,
    COVERAGE_TYPE: REPORTED_COVERAGE,
}
# The reported times and their one form each, ASCII digits only (Python's digit class matches
# any Unicode digit, JavaScript's only 0-9: the page and the CLI must read the same text alike).
_SECONDS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z", re.ASCII)
_FRACTION = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z", re.ASCII
)
_MICROS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z", re.ASCII)
TIMES = {
    AXIOM_TYPE: (("", "issued_at", _SECONDS), ("subject", "observed_at", _FRACTION)),
    FETCH_TYPE: (
        ("", "issued_at", _SECONDS),
        ("subject", "observed_at", _FRACTION),
        ("body", "fetched_at", _MICROS),
    ),
    CAPTURE_TYPE: (
        ("", "issued_at", _SECONDS),
        ("subject", "observed_at", _FRACTION),
        ("body", "captured_at", _MICROS),
    ),
    COVERAGE_TYPE: (
        ("", "issued_at", _SECONDS),
        ("subject", "observed_at", _FRACTION),
        ("body", "computed_at", _MICROS),
    ),
}


def check_envelope_shape(envelope: Any, *, anchor: bool = True) -> None:
    """Raise EnvelopeMalformed unless `envelope` has the AX.OBS shape (exact keys, schema,
    axiom_type, the reported fields as strings, and unless `anchor` is False, a first anchor
    `{chain, height, ...}`: the audit holds it to its exact form with `ledger_anchor_height`).
    """
    if type(envelope) is not dict:
        raise EnvelopeMalformed("an envelope is a JSON object", computed=type(envelope).__name__)
    if envelope.keys() != ENVELOPE_KEYS:
        missing = sorted(ENVELOPE_KEYS - envelope.keys())
        extra = sorted(envelope.keys() - ENVELOPE_KEYS)
        raise EnvelopeMalformed(
            f"envelope keys: missing {missing}, unexpected {extra}",
            expected=sorted(ENVELOPE_KEYS),
            computed=sorted(envelope),
        )
    if envelope["schema"] != ENVELOPE_SCHEMA:
        raise EnvelopeMalformed(
            "envelope.schema", expected=ENVELOPE_SCHEMA, computed=envelope["schema"]
        )
    kind = envelope["axiom_type"]
    reported = AXIOM_TYPES.get(kind) if type(kind) is str else None
    if reported is None:
        raise EnvelopeMalformed(
            "envelope.axiom_type", expected=sorted(AXIOM_TYPES), computed=envelope["axiom_type"]
        )
    for section, name in reported:
        holder = envelope[section] if section else envelope
        if type(holder) is not dict or type(holder.get(name)) is not str:
            where = f"envelope.{section}.{name}" if section else f"envelope.{name}"
            raise EnvelopeMalformed(f"{where} is a string", expected="str", computed=holder)
    for section, name, pattern in TIMES[kind]:
        value = envelope[section][name] if section else envelope[name]
        if not pattern.fullmatch(value):
            where = f"envelope.{section}.{name}" if section else f"envelope.{name}"
            raise EnvelopeMalformed(
                f"{where} is a UTC time in ASCII digits", expected=pattern.pattern, computed=value
            )
    if reported is REPORTED_FETCH and envelope["body"]["outcome"] not in OUTCOMES:
        raise EnvelopeMalformed(
            "envelope.body.outcome", expected=list(OUTCOMES), computed=envelope["body"]["outcome"]
        )
    if reported is REPORTED_FETCH and (problem := entries_problem(envelope["body"].get("entries"))):
        raise EnvelopeMalformed(f"envelope.{problem}", computed=envelope["body"]["entries"])
    # How the body is read (kind, select, parts): reported by both verifiers, so well-formed.
    if reported is REPORTED_FETCH and (problem := reading_problem(envelope["body"])):
        raise EnvelopeMalformed(f"envelope.{problem}")
    # A capture's facts are all reported (crovia verify, the page): every one well-formed.
    if reported is REPORTED_CAPTURE and (problem := capture_problem(envelope["body"])):
        raise EnvelopeMalformed(f"envelope.{problem}" if problem.startswith("body") else problem)
    if reported is REPORTED_CAPTURE and (problem := capture_envelope_problem(envelope)):
        raise EnvelopeMalformed(problem)
    # A coverage record's sets are all reported: each well-formed, its digest recomputed.
    if reported is REPORTED_COVERAGE and (problem := coverage_problem(envelope["body"])):
        raise EnvelopeMalformed(f"envelope.{problem}")
    if reported is REPORTED_COVERAGE and (problem := coverage_envelope_problem(envelope)):
        raise EnvelopeMalformed(problem)
    if problem := relay_problem(envelope["body"]):
        raise EnvelopeMalformed(f"envelope.{problem}", computed=envelope["body"]["relay"])
    if anchor:
        first_anchor(envelope)


def first_anchor(envelope: Mapping[str, Any]) -> tuple[str, int]:
    """(chain, height) of `anchors[0]`; EnvelopeMalformed unless it is `{chain: str, height: int}`
    with the reference anchor's four keys."""
    anchors = envelope["anchors"]
    first = anchors[0] if type(anchors) is list and anchors else None
    if (
        type(first) is not dict
        or first.keys() != {"chain", "height", *ANCHOR_SEE_RECEIPT}
        or type(first["chain"]) is not str
        or type(first["height"]) is not int
    ):
        raise EnvelopeMalformed(
            "envelope.anchors[0] is {chain, height, merkle_proof, root_at_anchor}",
            computed=anchors,
        )
    return first["chain"], first["height"]


def check_receipt_anchor(envelope: Mapping[str, Any], leaf_index: int) -> bool:
    """Hold a receipt's envelope anchor to its leaf index; True when the height was compared.

    This ledger's chain must state `leaf_index` (else AnchorMismatch); the reference system's
    placeholder chain is accepted unchecked (False); any other chain is AnchorMismatch.
    """
    chain, height = first_anchor(envelope)
    if chain in LEGACY_ANCHOR_CHAINS:
        return False
    if chain != ANCHOR_CHAIN:
        raise AnchorMismatch("envelope.anchors[0].chain", expected=ANCHOR_CHAIN, computed=chain)
    if height != leaf_index:
        raise AnchorMismatch(
            "envelope.anchors[0].height is the leaf index", expected=leaf_index, computed=height
        )
    return True


def ledger_anchor_height(envelope: Mapping[str, Any]) -> int:
    """The height of a ledger line's anchor, which must be exactly the one this ledger writes
    (`crovia.axiom_ledger`, the see-receipt placeholders); else AnchorMismatch."""
    anchors = envelope["anchors"]
    first = anchors[0] if type(anchors) is list and anchors else None
    height = first.get("height") if type(first) is dict else None
    expected = [{"chain": ANCHOR_CHAIN, "height": height, **ANCHOR_SEE_RECEIPT}]
    if type(height) is not int or anchors != expected:
        raise AnchorMismatch(
            "envelope.anchors is this ledger's one anchor",
            expected=expected,
            computed=envelope["anchors"],
        )
    return height
