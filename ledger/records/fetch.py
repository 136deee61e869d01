"""AX.FETCH envelopes: a signed record of one fetch of one feed (docs/format.md, "AX.FETCH").

An AX.OBS envelope says "this item was in the feed when it was fetched"; it is issued only when an
item is new or changed. An AX.FETCH envelope is issued for every fetch of every feed, whatever it
found: a new body, the same body as last time, a 304 (with the validators sent and the body it
confirms), an unreadable body, or a failure. It says how many entries were read from the body and
the digest of their identities (`entries_digest`), and how many the body held but were not read
(past the entry cap, or unreadable: ENTRY_COUNTS), so absence at a time can be proved from the kept
body, and only from a body read whole. A feed served by someone other than its vendor names that
party (`relay`), so nobody reads a third party's bytes as the vendor's. A source read with options
(a sitemap's include and exclude patterns, a listing page's selectors) signs them (`select`), and a
source of several bodies (a sitemap index and the sitemaps it names) signs each further fetch as one
of its `parts` (PART_KEYS), so its entries can be read again from the kept bodies.

The envelope has the AX.OBS envelope's top-level keys and is identified and signed the same way
(ledger/envelope.py); `axiom_type` is "AX.FETCH" and `body` holds the fetch's facts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ledger.canonical import canonical_json
from ledger.envelope import record_envelope
from ledger.exceptions import InvalidRecord

FETCH_TYPE = "AX.FETCH"
FETCH_SCHEMA = "crovia.fetch.v1"
FETCH_DECISION = "RECORDED"
# What a fetch found. A body was received (200) and is kept: NEW_BODY (not the body the feed's
# previous fetch received), UNCHANGED_BODY (the same bytes), UNREADABLE_BODY (not a feed we could
# read: no entries are stated). NOT_MODIFIED: a 304 to the validators sent. FAILED: no usable
# answer (an HTTP error, a timeout, a refusal).
NEW_BODY = "new_body"
UNCHANGED_BODY = "unchanged_body"
UNREADABLE_BODY = "unreadable_body"
NOT_MODIFIED = "not_modified"
FAILED = "failed"
OUTCOMES = (NEW_BODY, UNCHANGED_BODY, UNREADABLE_BODY, NOT_MODIFIED, FAILED)
# Outcomes whose record states what the feed held (a body read, or a 304 confirming one).
HOLDS_ENTRIES = (NEW_BODY, UNCHANGED_BODY, NOT_MODIFIED)
FEED_TARGET_PREFIX = "feed:"
_HEX64 = re.compile(r"[0-9a-f]{64}")
# `entries` of a record: what was read (count and digest of their identities, under `limit`) and,
# in newer records, what the body held (`in_body` = count + over_limit + unread): entries
# past the limit, and entries that could not be read. Older records have ENTRIES_READ alone.
ENTRIES_READ = frozenset(("count", "identities_sha256", "limit"))
ENTRY_COUNTS = ("in_body", "over_limit", "unread")
ENTRIES_WHOLE = ENTRIES_READ | frozenset(ENTRY_COUNTS)
# One part of a source of several bodies: a body read (`final_url`, `status`, `body_sha256`, and
# `content_type` when sent), a fetch that gave none to read (`error`), or a URL not fetched again
# because this walk had read it (`loop`); each names its `url`. A part whose body could not be read
# has both `body_sha256` and `error`.
PART_KEYS = frozenset(
    ("url", "final_url", "status", "body_sha256", "content_type", "error", "loop")
)
MAX_PARTS = 1000
_MICRO = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})\.[0-9]{6}Z")


def entries_digest(identities: Sequence[Mapping[str, Any]]) -> str:
    """sha256 hex of canonical_json of the list of the entries' identities (`object.identity`:
    `{"family", "guid", "link"}`), in feed order: what `entries.identities_sha256` signs."""
    return hashlib.sha256(canonical_json([dict(i) for i in identities])).hexdigest()


def new_fetch_envelope(
    *,
    spider: str,
    vendor: str,
    feed_url: str,
    outcome: str,
    fetched_at: str,
    run_hash: str,
    fetch: Mapping[str, Any] | None = None,
    body_sha256: str = "",
    entries: Mapping[str, Any] | None = None,
    sent: Mapping[str, str] | None = None,
    content_type: str = "",
    kind: str = "",
    error: str = "",
    relay: str = "",
    select: Mapping[str, Any] | None = None,
    parts: Sequence[Mapping[str, Any]] | None = None,
    issued_at: str | None = None,
) -> dict[str, Any]:
    """Build the UNSIGNED AX.FETCH envelope of one fetch of the feed `vendor` (`feed_url` as
    configured). `fetch` is `object.fetch` as AX.OBS envelopes carry it (absent when no response
    came); `body_sha256` the body the record vouches for (the one received, or the one a 304
    confirms); `entries` `{"count", "identities_sha256", "limit", "in_body", "over_limit",
    "unread"}` of that body; `sent` the
    validators the request sent; `content_type` the response's, which the body is parsed with;
    `relay` who served the feed when not the vendor. Empty values are left out (absent, never
    null). Raises InvalidRecord for a malformed field.
    `kind` is the body's reader when not feedparser ("jsonfeed": docs/format.md); `select` the
    options it read the body with; `parts` the further bodies of a source of several.
    """
    if outcome not in OUTCOMES:
        raise InvalidRecord(f"fetch outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
    moment = _MICRO.fullmatch(fetched_at) if type(fetched_at) is str else None
    if moment is None:
        raise InvalidRecord(f"fetched_at {fetched_at!r} is not UTC with microseconds and Z")
    if body_sha256 and not _HEX64.fullmatch(body_sha256):
        raise InvalidRecord(f"body_sha256 {body_sha256!r} is not 64 lowercase hex")
    for name, value in (("spider", spider), ("vendor", vendor), ("feed_url", feed_url)):
        if type(value) is not str or not value:
            raise InvalidRecord(f"fetch record {name} must be a non-empty string")
    if type(relay) is not str:
        raise InvalidRecord(f"fetch record relay must be a string, not {type(relay).__name__}")
    if problem := parts_problem(list(parts) if parts else None):
        raise InvalidRecord(problem)
    body: dict[str, Any] = {
        "schema": FETCH_SCHEMA,
        "spider": spider,
        "vendor": vendor,
        "feed_url": feed_url,
        "outcome": outcome,
        "fetched_at": fetched_at,
        "run": run_hash,
    }
    optional = {
        "body_sha256": body_sha256,
        "entries": dict(entries or {}),
        "sent": dict(sent or {}),
        "content_type": content_type,
        "kind": kind,  # absent for RSS and Atom ("feed"), as in every record before kinds
        "error": error,
        "relay": relay,  # absent unless set: records of a vendor's own feed keep their shape
        "select": dict(select or {}),  # absent for a feed read without options
        "parts": [dict(part) for part in parts or ()],  # absent for a source of one body
    }
    body.update({key: value for key, value in optional.items() if value})
    obj: dict[str, Any] = {"captured_by": f"crovia.spider.{spider}", "primary_source_url": feed_url}
    if fetch:
        obj["fetch"] = dict(fetch)
    return record_envelope(
        FETCH_TYPE,
        body=body,
        decision=FETCH_DECISION,
        issued_at=issued_at,
        notes=f"Fetch of feed {vendor} by spider {spider}: {outcome}",
        obj=obj,
        subject={
            "observed_at": moment.group(1) + "Z",
            "source_collector": f"spider:{spider}",
            "target_id": FEED_TARGET_PREFIX + feed_url,
        },
    )


def is_fetch_record(envelope: Any) -> bool:
    """True for an AX.FETCH envelope (by its axiom_type; its shape is checked elsewhere)."""
    # `type(...) is dict` first: a parsed line is a dict, and an ABC check costs more than the
    # lookup (the audit asks this of every leaf).
    mapping = type(envelope) is dict or isinstance(envelope, Mapping)
    return mapping and envelope.get("axiom_type") == FETCH_TYPE


def states_entries(body: Mapping[str, Any]) -> bool:
    """True when a fetch record's `body` states the entries of a body it names (a body received,
    the same body again, or a 304 confirming one): the records `crovia history`, `crovia absent`
    and `crovia audit --bodies` read a body again for."""
    return (
        body.get("outcome") in HOLDS_ENTRIES
        and bool(body.get("body_sha256"))
        and type(body.get("entries")) is dict
    )


def describe_fetch(envelope: Mapping[str, Any]) -> str:
    """One line saying what a fetch record vouches for: "feed F fetched at T: HTTP 200, body H,
    37 entries" (or the 304, the failure); "feed F (URL) via R fetched at T: ..." for a feed that
    the relay R serves."""
    body = envelope.get("body") or {}
    fetch = (envelope.get("object") or {}).get("fetch") or {}
    status = fetch.get("status")
    parts = [f"HTTP {status}" if status is not None else "no response"]
    outcome = body.get("outcome")
    if outcome == NOT_MODIFIED:
        parts.append(f"confirms body {body.get('body_sha256', '(unknown)')}")
    elif body.get("body_sha256"):
        parts.append(f"body {body['body_sha256']}")
    entries = body.get("entries") or {}
    if isinstance(body.get("parts"), list):  # as the page words it (page.js readingRows)
        walk = [part for part in body["parts"] if isinstance(part, Mapping)]
        read = sum(1 for p in walk if "body_sha256" in p and "error" not in p)
        loops = sum(1 for p in walk if p.get("loop") is True)
        parts.append(
            f"{len(body['parts'])} further fetches ({read} read,"
            f" {len(body['parts']) - read - loops} not read, {loops} already read in this walk)"
        )
    if "count" in entries:
        parts.append(f"{entries['count']} entries")
    if "in_body" in entries:
        parts.append(
            f"of {entries['in_body']} in the body ({entries['over_limit']} over the limit of"
            f" {entries['limit']}, {entries['unread']} unreadable)"
        )
    if body.get("error"):
        parts.append(f"error: {body['error']}")
    via = f" via {body['relay']}" if "relay" in body else ""
    if isinstance(body.get("kind"), str):
        via = f", a {body['kind']} source{via}"
    return (
        f"feed {body.get('vendor')} ({body.get('feed_url')}){via} fetched at"
        f" {body.get('fetched_at')}: " + ", ".join(str(part) for part in parts)
    )


def validate_fetch_body(body: Any) -> None:
    """Raise InvalidRecord unless `body` is an AX.FETCH body: the schema, the string fields, the
    outcome, a body digest where one is named, and `entries` `{count, identities_sha256, limit}`
    of ints and a digest (what a monitor holds every fetch record of a published log to)."""
    if type(body) is not dict:
        raise InvalidRecord("a fetch record's body is a JSON object")
    if body.get("schema") != FETCH_SCHEMA:
        raise InvalidRecord(f"body.schema is not {FETCH_SCHEMA!r}")
    for name in ("spider", "vendor", "feed_url", "outcome", "fetched_at", "run"):
        if type(body.get(name)) is not str:
            raise InvalidRecord(f"body.{name} is not a string")
    if problem := relay_problem(body):
        raise InvalidRecord(problem)
    if body["outcome"] not in OUTCOMES:
        raise InvalidRecord(f"body.outcome {body['outcome']!r} is not one of {OUTCOMES}")
    if "body_sha256" in body and not (
        type(body["body_sha256"]) is str and _HEX64.fullmatch(body["body_sha256"])
    ):
        raise InvalidRecord("body.body_sha256 is not 64 lowercase hex")
    problem = entries_problem(body.get("entries")) or reading_problem(body)
    if problem:
        raise InvalidRecord(problem)


def reading_problem(body: Mapping[str, Any]) -> str:
    """What is wrong with how a fetch record says its body is read ("" when nothing is): its
    `select` (an object of `selectors`, an object of strings, and `include` / `exclude`, lists of
    strings, each only when present) and its `parts` (parts_problem). A signed record is
    untrusted input to whoever reads its kept body again; `crovia verify` and the page report
    all three (envelope_shape), as `kind`, a non-empty string when present."""
    if "kind" in body and (type(body["kind"]) is not str or not body["kind"]):
        return "body.kind is a non-empty string"
    if "select" in body:
        select = body["select"]
        if type(select) is not dict or not select.keys() <= {"selectors", "include", "exclude"}:
            return "body.select is not an object of selectors, include and exclude"
        for name in ("include", "exclude"):
            if name in select and not (
                type(select[name]) is list and all(type(p) is str for p in select[name])
            ):
                return f"body.select.{name} is not a list of strings"
        selectors = select.get("selectors", {})
        if type(selectors) is not dict or not all(type(v) is str for v in selectors.values()):
            return "body.select.selectors is not an object of strings"
    return parts_problem(body.get("parts"))


def parts_problem(parts: Any) -> str:
    """What is wrong with a fetch record's `parts` ("" when nothing is, or it is absent): a list
    of at most MAX_PARTS objects of PART_KEYS, each with a string `url`, and a 64-hex
    `body_sha256`, an int `status`, a string `final_url` (and `content_type`) for a body, a
    string `error` for a fetch with none, or `loop` true."""
    if parts is None:
        return ""
    if type(parts) is not list or not 0 < len(parts) <= MAX_PARTS:
        return f"body.parts is not a list of 1 to {MAX_PARTS} parts"
    for index, part in enumerate(parts):
        where = f"body.parts[{index}]"
        if type(part) is not dict or not part.keys() <= PART_KEYS:
            return f"{where} is not an object of {', '.join(sorted(PART_KEYS))}"
        if type(part.get("url")) is not str:
            return f"{where}.url is not a string"
        for name in ("final_url", "content_type", "error"):
            if name in part and type(part[name]) is not str:
                return f"{where}.{name} is not a string"
        if "body_sha256" in part:
            digest = part["body_sha256"]
            if type(digest) is not str or not _HEX64.fullmatch(digest):
                return f"{where}.body_sha256 is not 64 lowercase hex"
            if type(part.get("status")) is not int or "final_url" not in part:
                return f"{where} names a body without its status and final_url"
        elif "loop" in part:
            if part["loop"] is not True or len(part) != 2:
                return f"{where} is a loop: {{url, loop: true}} alone"
        elif "error" not in part:
            return f"{where} names neither a body, an error nor a loop"
    return ""


def relay_problem(body: Mapping[str, Any]) -> str:
    """What is wrong with a fetch record's (or an item's) `relay` ("" when nothing is, or it is
    absent): when present, a non-empty string."""
    if "relay" in body and (type(body["relay"]) is not str or not body["relay"]):
        return "body.relay is a non-empty string"
    return ""


def entries_problem(entries: Any) -> str:
    """What is wrong with a fetch record's `entries` ("" when nothing is, or it is absent): the
    keys are ENTRIES_READ, or ENTRIES_WHOLE with `in_body` = count + over_limit + unread; every
    count an int, the counts of ENTRY_COUNTS not negative, the digest 64 lowercase hex."""
    if entries is None:
        return ""
    if type(entries) is not dict or entries.keys() not in (ENTRIES_READ, ENTRIES_WHOLE):
        return (
            "body.entries is not {count, identities_sha256, limit}"
            " or {count, identities_sha256, limit, in_body, over_limit, unread}"
        )
    if type(entries["identities_sha256"]) is not str or not _HEX64.fullmatch(
        entries["identities_sha256"]
    ):
        return "body.entries.identities_sha256 is not 64 lowercase hex"
    for name in ("count", "limit", *ENTRY_COUNTS):
        if name in entries and type(entries[name]) is not int:
            return f"body.entries.{name} is not an int"
    if "in_body" not in entries:
        return ""
    if any(entries[name] < 0 for name in ENTRY_COUNTS):
        return "body.entries.in_body, over_limit and unread are not negative"
    if entries["in_body"] != entries["count"] + entries["over_limit"] + entries["unread"]:
        return "body.entries.in_body is not count + over_limit + unread"
    return ""
