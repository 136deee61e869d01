"""Differential-corpus cases of capture records (AX.CAPTURE, docs/format.md "capture records"):
one chain of captures of an item's page, one record of each outcome (first, unchanged, edited,
moved, removed, failed), valid and pinned in `crovia verify` and the page alike; and records whose
body breaks one rule of ledger/records/capture.py capture_problem each, invalid at `envelope_shape`
in both. A few valid ones sit on the edges the page could count differently: exactly 20
redirects, an empty body, and a header and a URL of characters outside the BMP (Python counts
code points, JavaScript's `length` UTF-16 units).

Every receipt comes from a real ledger (Ledger.open, issue, seal, receipt) signed by TEST_KEY. The
writer refuses a malformed body (new_capture_envelope, and the ledger's signer holds every
envelope to envelope_shape), so each out-of-shape record is the one-leaf receipt of a valid one
whose body is changed and signed again by hand (corpus_eras.one_leaf_with), as a signer that let
such a body through would publish it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ledger.envelope import axiom_id_of
from ledger.records.capture import new_capture_envelope
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web import corpus as c
from tests.web.corpus_eras import one_leaf_with

URL = "https://lab.example.org/news/launch"
MOVED_TO = "https://lab.example.org/archive/launch"
HEADERS = {
    "content_type": "text/html; charset=utf-8",
    "content_encoding": "gzip",
    "last_modified": "Thu, 18 Jun 2026 00:00:00 GMT",
    "etag": '"v1"',
}
TEXT = {"sha256": "7" * 64, "length": 1200, "extractor": "trafilatura 2.3.1"}
EDITED_TEXT = {**TEXT, "sha256": "8" * 64, "length": 1250}
RESPONSE = {"status": 200, "final_url": URL, "headers": HEADERS, "ip_address": "203.0.113.7",
            "tls_certificate_sha256": "c" * 64, "request_head_sha256": "1" * 64,
            "response_head_sha256": "2" * 64}  # fmt: skip
# What each capture of the page found, in the order a schedule of captures could find them.
OUTCOMES: dict[str, dict[str, Any]] = {
    "first": {**RESPONSE, "body_sha256": "a" * 64, "body_length": 5120, "text": TEXT},
    "unchanged": {**RESPONSE, "body_sha256": "b" * 64, "body_length": 5130, "text": TEXT},
    "edited": {**RESPONSE, "body_sha256": "d" * 64, "body_length": 5300, "text": EDITED_TEXT},
    "moved": {**RESPONSE, "final_url": MOVED_TO, "redirects": [URL], "body_sha256": "e" * 64,
              "body_length": 5300, "text": EDITED_TEXT},
    "removed": {"status": 404, "final_url": URL, "body_sha256": "f" * 64, "body_length": 310,
                "error": "no main text: the page is a 404"},
    "failed": {"error": "timeout after 30 s", "ip_address": "203.0.113.7"},
}  # fmt: skip


def capture(
    item: str, outcome: str, number: int, previous: str = "", **facts: Any
) -> dict[str, Any]:
    """The unsigned capture record of `item`'s page that found `outcome` (OUTCOMES' facts, or
    `facts` when given), the `number`th capture of the page, chained to `previous`."""
    captured_at = f"2026-06-18T05:{number:02d}:00.123456Z"
    return new_capture_envelope(
        spider="vendor_press", vendor="lab", item=item, url=URL, captured_at=captured_at,
        run_hash="0" * 64, outcome=outcome, previous=previous,
        issued_at=captured_at[:19] + "Z", **(facts or OUTCOMES[outcome]),
    )  # fmt: skip


def capture_chain(item: str) -> list[dict[str, Any]]:
    """One capture record of each outcome of `item`'s page, each naming the one before."""
    chain: list[dict[str, Any]] = []
    for number, outcome in enumerate(OUTCOMES):
        previous = axiom_id_of(chain[-1]) if chain else ""
        chain.append(capture(item, outcome, number, previous))
    return chain


def changed(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], dict]:
    """A copy of a body that `change` alters in place, for one_leaf_with."""

    def body_changed(body: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(body)
        change(out)
        return out

    return body_changed


def _set(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.update(fields)


def _drop(*names: str) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        for name in names:
            del body[name]

    return change


def _text(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.update(text={**body["text"], **fields})


def _text_without(name: str) -> Callable[[dict[str, Any]], None]:
    return lambda body: body.update(text={k: v for k, v in body["text"].items() if k != name})


# Each breaks one rule of capture_problem (the rules of docs/format.md "capture records"), on the
# record of `base` (an outcome of OUTCOMES).
BROKEN: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "an unknown body key": ("first", _set(cookies="session=1")),
    "a __proto__ body key": ("first", _set(__proto__={"polluted": True})),
    "another body schema": ("first", _set(schema="crovia.capture.v2")),
    "no spider": ("first", _drop("spider")),
    "run a number": ("first", _set(run=0)),
    "item not an axiom_id": ("first", _set(item="axm_" + "A" * 64)),
    "an outcome of a fetch record": ("first", _set(outcome="new_body")),
    "captured_at without microseconds": ("first", _set(captured_at="2026-06-18T05:00:00Z")),
    "final_url empty": ("first", _set(final_url="")),
    "a final_url of 4,097 characters": ("first", _set(final_url=URL + "x" * (4097 - len(URL)))),
    "error empty": ("failed", _set(error="")),
    "status a string": ("first", _set(status="200")),
    "status true": ("first", _set(status=True)),
    "body_length negative": ("first", _set(body_length=-1)),
    "tls_certificate_sha256 in capitals": ("first", _set(tls_certificate_sha256="C" * 64)),
    "request_head_sha256 short": ("first", _set(request_head_sha256="1" * 63)),
    "redirects not a list": ("moved", _set(redirects=URL)),
    "21 redirects": ("moved", _set(redirects=[f"{URL}?{n}" for n in range(21)])),
    "a redirect empty": ("moved", _set(redirects=[""])),
    "headers a list": ("first", _set(headers=[HEADERS["content_type"]])),
    "a header of an unknown name": ("first", _set(headers={**HEADERS, "server": "nginx"})),
    "a header of 1,025 characters": ("first", _set(headers={"etag": "x" * 1025})),
    "a header empty": ("first", _set(headers={"etag": ""})),
    "text without its extractor": ("first", _text_without("extractor")),
    "text with another key": ("first", _text(language="en")),
    "text.sha256 not hex": ("first", _text(sha256="g" * 64)),
    "text.length negative": ("first", _text(length=-1)),
    "text.extractor empty": ("first", _text(extractor="")),
    "body_sha256 without body_length": ("first", _drop("body_length")),
    "body_length without body_sha256": ("removed", _drop("body_sha256")),
    "text without a body": ("first", _drop("body_sha256", "body_length")),
    "status without final_url": ("removed", _drop("final_url", "body_sha256", "body_length")),
    "failed without error": ("failed", _drop("error")),
    "removed without status": ("removed", _drop("status", "body_sha256", "body_length")),
    "redirects empty": ("moved", _set(redirects=[])),
    "headers empty": ("first", _set(headers={})),
    "removed with a 200": ("removed", _set(status=200)),
    "removed with a 500": ("removed", _set(status=500)),
    "first with a 500": ("first", _set(status=500)),
    "unchanged with a 304": ("unchanged", _set(status=304)),
    "moved to the URL asked": ("moved", _set(final_url=URL)),
}
# Each breaks one tie between the envelope and its body (capture_envelope_problem): (base
# outcome, section, field, new value).
BROKEN_ENVELOPE: dict[str, tuple[str, str, str, Any]] = {
    "object naming another page": ("first", "object", "primary_source_url", MOVED_TO),
    "a target_id of another page": ("first", "subject", "target_id", "page:" + MOVED_TO),
    "a target_id without page:": ("first", "subject", "target_id", URL),
    "observed_at another second": ("first", "subject", "observed_at", "2026-06-18T05:00:01Z"),
}
# Valid records on the edges where two verifiers could count differently.
EDGES: dict[str, dict[str, Any]] = {
    "20 redirects": {**OUTCOMES["moved"], "redirects": [f"{URL}?{n}" for n in range(20)]},
    "an empty body": {**RESPONSE, "body_sha256": "0" * 64, "body_length": 0},
    "a header of 1,000 characters outside the BMP": {**RESPONSE, "headers": {"etag": "😀" * 1000}},
    "a final_url of 4,096 characters, half outside the BMP": {
        **RESPONSE,
        "final_url": URL + "😀" * 2000 + "x" * (2096 - len(URL)),
    },
}


def _receipts(directory: Path, envelopes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    with Ledger.open(directory, signing_key=TEST_KEY) as ledger:
        issued = ledger.issue(envelopes)
        ledger.seal(run_id="corpus_capture")
        return [ledger.receipt(leaf.axiom_id) for leaf in issued]


def capture_receipts(work: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """Receipts from real ledgers in `work` signed by TEST_KEY: of the valid records (by outcome,
    then edge; one ledger holding an item, the capture chain of its page and the edge cases) and
    of the out-of-shape ones (by what is wrong; each a one-leaf ledger's, changed and re-signed)."""
    item = sample_envelope(1)
    chain = capture_chain(axiom_id_of(item))
    edges = [
        capture(axiom_id_of(item), "edited", 10 + n, **facts)
        for n, facts in enumerate(EDGES.values())
    ]
    _, *receipts = _receipts(work / "captures", [item, *chain, *edges])
    valid = dict(zip([*OUTCOMES, *EDGES], receipts, strict=True))
    alone = {
        outcome: _receipts(work / f"alone_{outcome}", [envelope])[0]
        for outcome, envelope in zip(OUTCOMES, chain, strict=True)
    }
    broken = {
        name: one_leaf_with(alone[base], "", "body", changed(change))
        for name, (base, change) in BROKEN.items()
    }
    for name, (base, section, field, value) in BROKEN_ENVELOPE.items():
        broken[name] = one_leaf_with(alone[base], section, field, lambda _, v=value: v)
    return valid, broken


def hostile_cases(work: Path, pki: Any) -> list[c.Expected]:
    """The cases, from one ledger in `work` (`pki` is not needed)."""
    del pki  # no stamps here
    valid, broken = capture_receipts(work)
    pin = c.trust_root(TEST_KEY)
    return [
        *(c.Expected(f"capture {name}", r, pin, "valid", None) for name, r in valid.items()),
        *(
            c.Expected(f"capture, {name}", r, pin, "invalid", "envelope_shape")
            for name, r in broken.items()
        ),
    ]
