"""Differential-corpus cases of coverage records (AX.COVERAGE, docs/format.md "coverage records"):
valid ones of each state (a day read both ways, a day whose RSS crawl failed, a day OAI-PMH never
listed), on the edges the page could count differently (a difference of exactly 1,000 ids listed
and one of 1,001 by its digest alone, old-style ids sorting among new ones, a record naming the
one before), valid and pinned in `crovia verify` and the page alike; and records whose body, or
whose envelope's tie to it, breaks one rule of ledger/records/coverage.py each, invalid at
`envelope_shape` in both (a listed set whose digest is not its ids' among them: both verifiers
recompute it).

Every receipt comes from a real ledger signed by TEST_KEY; each out-of-shape record is the
one-leaf receipt of a valid one changed and signed again by hand (corpus_eras.one_leaf_with), as
a signer that let such a body through would publish it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ledger.envelope import axiom_id_of
from ledger.records.coverage import ids_digest, new_coverage_envelope
from tests.vectors.make_vectors import TEST_KEY
from tests.web import corpus as c
from tests.web.corpus_capture import _receipts, changed
from tests.web.corpus_eras import one_leaf_with

FETCH = ["axm_" + "1" * 64, "axm_" + "2" * 64]
OAI = ["axm_" + "3" * 64]
PAPERS = [f"2612.{n:05d}" for n in range(1, 9)]
OLD = ["hep-th/9901001", "math.GT/0309136"]
PWNED = "document.title='pwned'"  # would run if a verifier rendered it as HTML
MARKUP_CATEGORY = f'cs.AI<img src=x onerror="{PWNED}">'
MARKUP_ID = f"<script>{PWNED}</script>2612.00309"


def record(name: str, number: int, **fields: Any) -> dict[str, Any]:
    computed_at = f"2026-12-05T07:{number:02d}:00.123456Z"
    base = {
        "category": "cs.AI",
        "day": "2026-12-03",
        "computed_at": computed_at,
        "rss": {"state": "read", "fetches": FETCH},
        "oai": {"state": "complete", "fetches": OAI},
        "announced": PAPERS[:5],
        "harvested": PAPERS[2:8],
        "deleted": ["2612.09999"],
        "issued_at": computed_at[:19] + "Z",
    }
    return new_coverage_envelope(**{**base, **fields})


def later_record(first: dict[str, Any]) -> dict[str, Any]:
    """A second record of the day of `first` (VALID's "a day read both ways"), naming it."""
    return record("a later record of the first day", 50, predecessors=[axiom_id_of(first)])


# Each a valid record (keyword arguments of `record`).
VALID: dict[str, dict[str, Any]] = {
    "a day read both ways": {},
    "a day whose RSS crawl failed": {"rss": {"state": "not_read", "fetches": []},
                                     "announced": [], "day": "2026-12-04"},
    "a day OAI-PMH never listed": {"oai": {"state": "not_harvested", "fetches": []},
                                   "harvested": [], "deleted": []},
    "partial reads": {"rss": {"state": "partial", "fetches": FETCH[:1]},
                      "oai": {"state": "partial", "fetches": OAI}},
    "old-style ids among new ones": {"announced": [*OLD, PAPERS[0]], "harvested": [PAPERS[0]]},
    "a difference of 1,000 ids, listed": {
        "announced": [f"2611.{n:05d}" for n in range(1000)], "harvested": []},
    "a difference of 1,001 ids, by its digest": {
        "announced": [], "harvested": [f"2611.{n:05d}" for n in range(1001)]},
    "a category of a hyphenated archive": {"category": "astro-ph.CO"},
}  # fmt: skip


def _set(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.update(fields)


def _in(name: str, **fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.update({name: {**body[name], **fields}})


def _without(name: str, key: str) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.update({name: {k: v for k, v in body[name].items() if k != key}})


def _listing(name: str, ids: list[str], count: int | None = None) -> Callable[[dict], None]:
    """The set `name` holding `ids` (its digest theirs), its count `count` when given."""
    fields = {"ids": ids, "ids_sha256": ids_digest(ids), "count": len(ids)}
    if count is not None:
        fields["count"] = count
    return _in(name, **fields)


def _drop(name: str) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.pop(name)


# Each breaks one rule of coverage_problem, on the record of `base` (a VALID name).
BROKEN: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "an unknown body key": ("a day read both ways", _set(title="x")),
    "a __proto__ body key": ("a day read both ways", _set(__proto__={"polluted": True})),
    "no deleted set": ("a day read both ways", _drop("deleted")),
    "another schema": ("a day read both ways", _set(schema="crovia.coverage.v2")),
    "another vendor": ("a day read both ways", _set(vendor="openai")),
    "a category in capitals": ("a day read both ways", _set(category="CS.AI")),
    "a category with a space": ("a day read both ways", _set(category="cs AI")),
    "a category holding markup": ("a day read both ways", _set(category=MARKUP_CATEGORY)),
    "a day of one digit": ("a day read both ways", _set(day="2026-12-3")),
    "computed_at without microseconds": ("a day read both ways",
                                         _set(computed_at="2026-12-05T07:00:00Z")),
    "rss a string": ("a day read both ways", _set(rss="read")),
    "rss with another key": ("a day read both ways", _in("rss", seen=True)),
    "an rss state of OAI-PMH": ("a day read both ways", _in("rss", state="complete")),
    "an oai state of the RSS": ("a day read both ways", _in("oai", state="read")),
    "fetches a string": ("a day read both ways", _in("rss", fetches=FETCH[0])),
    "a fetch that is no axiom id": ("a day read both ways", _in("oai", fetches=["axm_x"])),
    "51 fetches": ("a day read both ways", _in("rss", fetches=[FETCH[0]] * 51)),
    "a read naming no fetch": ("a day read both ways", _in("oai", fetches=[])),
    "no read naming a fetch": ("a day whose RSS crawl failed", _in("rss", fetches=FETCH)),
    "a digested set listing its ids": ("a day read both ways",
                                       _in("both", ids=PAPERS[2:5])),
    "a set without its digest": ("a day read both ways", _without("harvested", "ids_sha256")),
    "a count that is a string": ("a day read both ways", _in("announced", count="5")),
    "a count that is true": ("a day read both ways", _in("deleted", count=True)),
    "a negative count": ("a day read both ways", _in("both", count=-1)),
    "a digest in capitals": ("a day read both ways",
                             _in("both", ids_sha256=ids_digest(PAPERS[2:5]).upper())),
    "a difference without its ids": ("a day read both ways", _without("rss_only", "ids")),
    "1,001 ids listed": ("a difference of 1,001 ids, by its digest",
                         _listing("oai_only", [f"2611.{n:05d}" for n in range(1001)])),
    "ids counted 3, listing 2": ("a day read both ways", _listing("rss_only", PAPERS[:2], 3)),
    "ids out of order": ("a day read both ways", _listing("rss_only", [PAPERS[1], PAPERS[0]])),
    "an id twice": ("a day read both ways", _listing("rss_only", [PAPERS[0], PAPERS[0]])),
    "an id with its version": ("a day read both ways", _listing("deleted", ["2612.09999v1"])),
    "an id that is a number": ("a day read both ways", _in("deleted", ids=[261209999])),
    "an id holding markup": ("a day read both ways", _listing("rss_only", [MARKUP_ID])),
    "a digest that is not its ids'": ("a day read both ways",
                                      _in("oai_only", ids_sha256=ids_digest(PAPERS[:1]))),
    "announced not both and rss_only": ("a day read both ways", _in("announced", count=6)),
    "harvested not both and oai_only": ("a day read both ways", _in("harvested", count=5)),
    "papers announced by an RSS not read": (
        "a day whose RSS crawl failed",
        lambda body: body.update(
            announced={"count": 1, "ids_sha256": ids_digest(["2612.00001"])},
            both={"count": 1, "ids_sha256": ids_digest(["2612.00001"])},
            harvested={"count": body["harvested"]["count"] + 1, "ids_sha256": "0" * 64},
        ),
    ),
    "deleted records of OAI-PMH never listed": ("a day OAI-PMH never listed",
                                                _listing("deleted", ["2612.09999"])),
}  # fmt: skip
# Each breaks one tie between the envelope and its body: (section, field, new value).
BROKEN_ENVELOPE: dict[str, tuple[str, str, Any]] = {
    "object naming another list": ("object", "primary_source_url", "https://arxiv.org/list/cs.LG"),
    "a target of another day": ("subject", "target_id", "coverage:arxiv:cs.AI:2026-12-04"),
    "a target without coverage:arxiv:": ("subject", "target_id", "cs.AI:2026-12-03"),
    "observed_at another second": ("subject", "observed_at", "2026-12-05T07:00:01Z"),
}


def coverage_receipts(work: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """Receipts of the valid records (one ledger, and a second record naming the first) and of
    the out-of-shape ones (each a one-leaf ledger's, changed and re-signed)."""
    envelopes = [record(name, n, **fields) for n, (name, fields) in enumerate(VALID.items())]
    receipts = _receipts(work / "coverage", [*envelopes, later_record(envelopes[0])])
    valid = dict(zip([*VALID, "a later record naming the one before"], receipts, strict=True))
    alone = {
        name: _receipts(work / f"alone_{n}", [envelope])[0]
        for n, (name, envelope) in enumerate(zip(VALID, envelopes, strict=True))
    }
    broken = {
        name: one_leaf_with(alone[base], "", "body", changed(change))
        for name, (base, change) in BROKEN.items()
    }
    for name, (section, field, value) in BROKEN_ENVELOPE.items():
        broken[name] = one_leaf_with(
            alone["a day read both ways"], section, field, lambda _, v=value: v
        )
    return valid, broken


def hostile_cases(work: Path, pki: Any) -> list[c.Expected]:
    """The cases, from ledgers in `work` (`pki` is not needed)."""
    del pki  # no stamps here
    valid, broken = coverage_receipts(work)
    pin = c.trust_root(TEST_KEY)
    return [
        *(c.Expected(f"coverage {name}", r, pin, "valid", None) for name, r in valid.items()),
        *(
            c.Expected(f"coverage, {name}", r, pin, "invalid", "envelope_shape")
            for name, r in broken.items()
        ),
    ]
