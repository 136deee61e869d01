"""Differential-corpus cases of fetch records with entry counts (issue 30): a receipt of a fetch
record that states what its body held besides the entries read (valid, pinned), and one whose
`unread` is a string (invalid: `envelope_shape`, in `crovia verify` and the page alike). And a
sitemap walk's record (its kind, select and parts, which both verifiers report): valid as our
writer signs it, invalid (`envelope_shape`) with any of the three out of shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ledger.records.fetch import new_fetch_envelope
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY
from tests.web import corpus as c
from tests.web.corpus_eras import one_leaf_with

READ = {"count": 3, "identities_sha256": "c" * 64, "limit": 3}
WHOLE = {**READ, "in_body": 5, "over_limit": 2, "unread": 0}


def _record(n: int, entries: dict[str, Any]) -> dict[str, Any]:
    fetched_at = f"2026-06-0{n}T00:00:00.000000Z"
    envelope = new_fetch_envelope(
        spider="vendor_press", vendor="lab", feed_url="https://lab.example.org/feed.xml",
        outcome="new_body", fetched_at=fetched_at, run_hash="0" * 64, body_sha256="b" * 64,
        fetch={"body_sha256": "b" * 64, "fetched_at": fetched_at,
               "final_url": "https://lab.example.org/feed.xml", "status": 200},
        entries=READ, content_type="application/rss+xml", issued_at=fetched_at[:19] + "Z",
    )  # fmt: skip
    envelope["body"]["entries"] = entries  # signed as it stands, whatever it holds
    return envelope


PARTS = [
    {"url": "https://lab.example.org/a.xml", "final_url": "https://lab.example.org/a.xml",
     "status": 200, "body_sha256": "d" * 64, "content_type": "application/xml"},
    {"url": "https://lab.example.org/b.xml", "error": "HTTP 503"},
    {"url": "https://lab.example.org/a.xml", "loop": True},
]  # fmt: skip


def _walk() -> dict[str, Any]:
    envelope = _record(2, WHOLE)
    envelope["body"].update(
        kind="sitemap", select={"include": ["/news/"]}, parts=PARTS, entries=WHOLE
    )
    return envelope


def hostile_cases(work: Path, pki: Any) -> list[c.Expected]:
    """The cases, from a one-leaf ledger signed by TEST_KEY in `work` (`pki` is not needed). The
    writer refuses a count of the wrong type, so that receipt is signed again by hand
    (corpus_eras.one_leaf_with), as a signer that let it through would publish it."""
    del pki  # no stamps here
    with Ledger.open(work / "fetch_counts", signing_key=TEST_KEY) as ledger:
        (issued,) = ledger.issue([_record(1, WHOLE)])
        ledger.seal(run_id="corpus_fetch")
        good = ledger.receipt(issued.axiom_id)
    with Ledger.open(work / "fetch_walk", signing_key=TEST_KEY) as ledger:
        (issued,) = ledger.issue([_walk()])
        ledger.seal(run_id="corpus_fetch")
        walk = ledger.receipt(issued.axiom_id)
    wrong = one_leaf_with(good, "body", "entries", lambda entries: {**entries, "unread": "0"})
    pin = c.trust_root(TEST_KEY)
    bad_walks = {
        "kind a number": ("kind", lambda kind: 3),
        "include a string": ("select", lambda select: {"include": "/news/"}),
        "select with another key": ("select", lambda select: {**select, "xpath": "//a"}),
        "selectors not strings": ("select", lambda select: {"selectors": {"item": 1}}),
        "parts an object": ("parts", lambda parts: {"0": parts[0]}),
        "no parts": ("parts", lambda parts: []),
        "a part without its final_url": ("parts", lambda parts: [{**parts[0], "final_url": None}]),
        "a part's status a string": ("parts", lambda parts: [{**parts[0], "status": "200"}]),
        "a loop with an error": ("parts", lambda parts: [{**parts[2], "error": "x"}]),
        "a part of a URL alone": ("parts", lambda parts: [{"url": parts[0]["url"]}]),
    }
    return [
        c.Expected("fetch record with entry counts", good, pin, "valid", None),
        c.Expected("fetch record, unread a string", wrong, pin, "invalid", "envelope_shape"),
        c.Expected("sitemap walk record", walk, pin, "valid", None),
        *(
            c.Expected(
                f"sitemap walk record, {what}",
                one_leaf_with(walk, "body", name, change),
                pin,
                "invalid",
                "envelope_shape",
            )
            for what, (name, change) in bad_walks.items()
        ),
    ]
