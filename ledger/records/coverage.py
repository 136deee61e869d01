"""AX.COVERAGE envelopes: a signed completeness record of arXiv, per category and announcement day
(docs/format.md, "AX.COVERAGE").

arXiv is read two ways: its RSS feed of a category holds the papers announced that day, and its
OAI-PMH interface lists every record of a set by datestamp. A coverage record states, for one
category and day, what each read saw and what they say together: the arXiv ids the RSS feed
announced (`announced`), the ids OAI-PMH listed for that category and day (`harvested`), those in
both, those the RSS announced and OAI-PMH did not list (`rss_only`: missed by OAI-PMH), those
OAI-PMH listed and the RSS did not announce (`oai_only`: read by OAI-PMH only, which is every
paper of a day whose RSS crawl failed), and the records OAI-PMH listed as deleted that day
(`deleted`, of the whole set: a deleted record names no category). Each set is signed by its count
and the digest of its ids, sorted; the differences (`rss_only`, `oai_only`, `deleted`) also list
their ids when there are at most MAX_LISTED (a ledger line holds 65,535 bytes).

Each read says how far it went (`rss.state`, `oai.state`) and names the fetch records it relies
on (`fetches`, their axiom ids): a read that is not whole is never an empty set. "Not observed" is
never "did not exist": a set is what our reads saw, and the states say what they could see.

The envelope has the AX.OBS envelope's top-level keys and is identified and signed the same way
(ledger/envelope.py); `axiom_type` is "AX.COVERAGE". A later record of the same category and day
(a harvest that filled a gap) names the one before it in `predecessors`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from ledger.canonical import canonical_json
from ledger.envelope import record_envelope
from ledger.exceptions import InvalidRecord

COVERAGE_TYPE = "AX.COVERAGE"
COVERAGE_SCHEMA = "crovia.coverage.v1"
COVERAGE_DECISION = "RECORDED"
COVERAGE_VENDOR = "arxiv"
COVERAGE_TARGET_PREFIX = "coverage:arxiv:"
CAPTURED_BY = "crovia.arxiv.coverage"
LIST_URL = "https://arxiv.org/list/"  # + category: the record's `object.primary_source_url`
# How far each read went. RSS: READ, a body of the day read whole; PARTIAL, only bodies not read
# whole; NOT_READ, no body of the day. OAI-PMH: COMPLETE, the day listed to its end after it was
# over; PARTIAL, asked but not listed whole; NOT_HARVESTED, never asked.
RSS_STATES = ("read", "partial", "not_read")
OAI_STATES = ("complete", "partial", "not_harvested")
DIGESTED = ("announced", "harvested", "both")  # by count and digest
LISTED = ("rss_only", "oai_only", "deleted")  # the differences: their ids too, up to MAX_LISTED
SETS = DIGESTED + LISTED
BODY_KEYS = frozenset(("schema", "vendor", "category", "day", "computed_at", "rss", "oai", *SETS))
MAX_LISTED = 1000  # ids a difference lists (3 x 1,000 x 13 bytes); past them, the digest alone
MAX_FETCHES = 50  # fetch records a read names (the newest)
_CATEGORY = re.compile(r"[a-z][a-z-]{0,30}(?:\.[A-Za-z][A-Za-z-]{0,30})?", re.ASCII)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
_MICROS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z", re.ASCII)
_PAPER = re.compile(r"[0-9]{4}\.[0-9]{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/[0-9]{7}", re.ASCII)
_HEX64 = re.compile(r"[0-9a-f]{64}")
_AXIOM_ID = re.compile(r"axm_[0-9a-f]{64}")


def ids_digest(ids: Iterable[str]) -> str:
    """sha256 hex of canonical_json of the ids sorted: what a set's `ids_sha256` signs."""
    return hashlib.sha256(canonical_json(sorted(ids))).hexdigest()


def id_set(ids: Iterable[str], listed: bool = False) -> dict[str, Any]:
    """A set of a coverage record: `{"count", "ids_sha256"}`, and its `ids` sorted when `listed`
    (a difference) and there are at most MAX_LISTED."""
    ordered = sorted(set(ids))
    found: dict[str, Any] = {"count": len(ordered), "ids_sha256": ids_digest(ordered)}
    if listed and len(ordered) <= MAX_LISTED:
        found["ids"] = ordered
    return found


def coverage_target(category: str, day: str) -> str:
    """`subject.target_id` of the record of `category` on `day`."""
    return f"{COVERAGE_TARGET_PREFIX}{category}:{day}"


def new_coverage_envelope(
    *,
    category: str,
    day: str,
    computed_at: str,
    rss: Mapping[str, Any],
    oai: Mapping[str, Any],
    announced: Iterable[str],
    harvested: Iterable[str],
    deleted: Iterable[str] = (),
    predecessors: Sequence[str] = (),
    issued_at: str | None = None,
) -> dict[str, Any]:
    """Build the UNSIGNED AX.COVERAGE envelope of `category` on `day`: `rss` and `oai` are
    `{"state", "fetches"}` (the fetch records' axiom ids each read relies on), `announced` the ids
    the RSS announced, `harvested` those OAI-PMH listed, `deleted` those it listed deleted; the
    sets in both, in one only, are computed here. Raises InvalidRecord for a malformed field."""
    announced, harvested = set(announced), set(harvested)
    body: dict[str, Any] = {
        "schema": COVERAGE_SCHEMA,
        "vendor": COVERAGE_VENDOR,
        "category": category,
        "day": day,
        "computed_at": computed_at,
        "rss": {"state": rss["state"], "fetches": list(rss.get("fetches", ()))},
        "oai": {"state": oai["state"], "fetches": list(oai.get("fetches", ()))},
        "announced": id_set(announced),
        "harvested": id_set(harvested),
        "both": id_set(announced & harvested),
        "rss_only": id_set(announced - harvested, listed=True),
        "oai_only": id_set(harvested - announced, listed=True),
        "deleted": id_set(deleted, listed=True),
    }
    if problem := coverage_problem(body):
        raise InvalidRecord(problem)
    return record_envelope(
        COVERAGE_TYPE,
        body=body,
        decision=COVERAGE_DECISION,
        issued_at=issued_at,
        notes=(
            f"arXiv {category} on {day}: announced {body['announced']['count']}, harvested"
            f" {body['harvested']['count']}, both {body['both']['count']}"
        ),
        obj={"captured_by": CAPTURED_BY, "primary_source_url": LIST_URL + category},
        subject={
            "observed_at": computed_at[:19] + "Z",
            "source_collector": "crovia:arxiv-coverage",
            "target_id": coverage_target(category, day),
        },
        predecessors=predecessors,
    )


def is_coverage_record(envelope: Any) -> bool:
    """True for an AX.COVERAGE envelope (by its axiom_type; its shape is checked elsewhere)."""
    mapping = type(envelope) is dict or isinstance(envelope, Mapping)
    return mapping and envelope.get("axiom_type") == COVERAGE_TYPE


def coverage_problem(body: Any) -> str:
    """What is wrong with an AX.COVERAGE body ("" when nothing is), rule by rule in the order
    both verifiers hold (the page's checkCoverage): the keys, the schema, the vendor, category,
    day and time, each read's state and fetches, each set's count and digest, each difference's
    ids (sorted, distinct, arXiv ids, as many as counted, their digest recomputed), and the
    counts adding up."""
    if type(body) is not dict or body.keys() != BODY_KEYS:
        return f"body is not an object of {', '.join(sorted(BODY_KEYS))}"
    if body["schema"] != COVERAGE_SCHEMA:
        return f"body.schema is not {COVERAGE_SCHEMA!r}"
    if body["vendor"] != COVERAGE_VENDOR:
        return f"body.vendor is not {COVERAGE_VENDOR!r}"
    if type(body["category"]) is not str or not _CATEGORY.fullmatch(body["category"]):
        return "body.category is not an arXiv category"
    if type(body["day"]) is not str or not _DAY.fullmatch(body["day"]):
        return "body.day is not a date YYYY-MM-DD"
    if type(body["computed_at"]) is not str or not _MICROS.fullmatch(body["computed_at"]):
        return "body.computed_at is not UTC with microseconds and Z"
    for name, states in (("rss", RSS_STATES), ("oai", OAI_STATES)):
        if problem := _read_problem(name, body[name], states):
            return problem
    for name in SETS:
        if problem := _set_problem(name, body[name]):
            return problem
    count = {name: body[name]["count"] for name in SETS}
    if count["both"] + count["rss_only"] != count["announced"]:
        return "body.both and body.rss_only do not add up to body.announced"
    if count["both"] + count["oai_only"] != count["harvested"]:
        return "body.both and body.oai_only do not add up to body.harvested"
    if body["rss"]["state"] == "not_read" and count["announced"]:
        return "body.announced is empty when the RSS was not read"
    if body["oai"]["state"] == "not_harvested" and (count["harvested"] or count["deleted"]):
        return "body.harvested and body.deleted are empty when OAI-PMH was not harvested"
    return ""


def _read_problem(name: str, read: Any, states: tuple[str, ...]) -> str:
    if type(read) is not dict or read.keys() != {"state", "fetches"}:
        return f"body.{name} is not {{state, fetches}}"
    if read["state"] not in states:
        return f"body.{name}.state is not one of {', '.join(states)}"
    fetches = read["fetches"]
    if type(fetches) is not list or len(fetches) > MAX_FETCHES:
        return f"body.{name}.fetches is not a list of at most {MAX_FETCHES} axiom ids"
    if not all(type(f) is str and _AXIOM_ID.fullmatch(f) for f in fetches):
        return f"body.{name}.fetches holds one that is not an axiom id"
    if (read["state"] in (states[0], states[1])) != bool(fetches):
        return f"body.{name}.fetches names the records of a read, and none of no read"
    return ""


def _set_problem(name: str, found: Any) -> str:
    if name in DIGESTED and (type(found) is not dict or found.keys() != {"count", "ids_sha256"}):
        return f"body.{name} is not {{count, ids_sha256}}"
    if type(found) is not dict or not {"count", "ids_sha256"} <= found.keys() <= {
        "count",
        "ids_sha256",
        "ids",
    }:
        return f"body.{name} is not {{count, ids_sha256}} or {{count, ids_sha256, ids}}"
    if type(found["count"]) is not int or found["count"] < 0:
        return f"body.{name}.count is not an int of at least 0"
    if type(found["ids_sha256"]) is not str or not _HEX64.fullmatch(found["ids_sha256"]):
        return f"body.{name}.ids_sha256 is not 64 lowercase hex"
    listed = name in LISTED and found["count"] <= MAX_LISTED
    if listed != ("ids" in found):
        return (
            f"body.{name}.ids lists the ids of a difference of at most {MAX_LISTED}, and only then"
        )
    if not listed:
        return ""
    ids = found["ids"]
    if type(ids) is not list or not all(type(i) is str and _PAPER.fullmatch(i) for i in ids):
        return f"body.{name}.ids is not a list of arXiv ids"
    if any(a >= b for a, b in pairwise(ids)) or len(ids) != found["count"]:
        return f"body.{name}.ids is not its count of distinct ids in order"
    if ids_digest(ids) != found["ids_sha256"]:
        return f"body.{name}.ids_sha256 is not the digest of its ids"
    return ""


def coverage_envelope_problem(envelope: Mapping[str, Any]) -> str:
    """What ties a coverage record's envelope to its body ("" when it holds): the page reported
    is arXiv's list of the category, the target the category and day, the time observed
    body.computed_at cut to seconds."""
    body = envelope["body"]
    if envelope["object"].get("primary_source_url") != LIST_URL + body["category"]:
        return "envelope.object.primary_source_url is not arXiv's list of body.category"
    if envelope["subject"].get("target_id") != coverage_target(body["category"], body["day"]):
        return "envelope.subject.target_id is not 'coverage:arxiv:' body.category ':' body.day"
    if envelope["subject"].get("observed_at") != body["computed_at"][:19] + "Z":
        return "envelope.subject.observed_at is not body.computed_at cut to seconds"
    return ""


def describe_coverage(envelope: Mapping[str, Any]) -> str:
    """One line saying what a coverage record states: "arXiv cs.AI on D: RSS read (announced N),
    OAI-PMH complete (listed M): in both B, missed by OAI-PMH R, not announced by the RSS O,
    deleted X"."""
    body = envelope.get("body") or {}
    count = {name: (body.get(name) or {}).get("count") for name in SETS}
    return (
        f"arXiv {body.get('category')} on {body.get('day')}: RSS"
        f" {(body.get('rss') or {}).get('state')} (announced {count['announced']}), OAI-PMH"
        f" {(body.get('oai') or {}).get('state')} (listed {count['harvested']}): in both"
        f" {count['both']}, missed by OAI-PMH {count['rss_only']}, not announced by the RSS"
        f" {count['oai_only']}, deleted {count['deleted']}"
    )
