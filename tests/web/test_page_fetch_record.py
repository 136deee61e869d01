"""Issue 33, observation 2, in Chromium: the receipt of a fetch record (AX.FETCH) is shown as a
feed fetch, with what `crovia verify` says of it (the feed, the vendor, the outcome, the HTTP
status, when, the body and the entries), all as text: a feed URL or an error that looks like
HTML stays text. It used to show "Valid" over an empty title, address and observed time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ledger.records.fetch import new_fetch_envelope
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web.conftest import Server, publish
from tests.web.test_page import verdict_of

pytestmark = pytest.mark.slow

FETCHED_AT = "2026-06-18T05:00:00.000000Z"
HOSTILE_URL = "https://feeds.example/<img src=x onerror=\"document.title='pwned'\">.xml"
HOSTILE_ERROR = '<script>document.title="pwned"</script> connection refused'
ENTRIES = {
    "count": 3,
    "identities_sha256": "c" * 64,
    "limit": 3,
    "in_body": 5,
    "over_limit": 2,
    "unread": 0,
}


@dataclass
class Leaves:
    item: str  # the one AX.OBS leaf, first
    not_modified: str  # a 304 confirming a body, of the HTML-looking feed URL
    failed: str  # no response, an HTML-looking error
    fetched: str  # a 200, the newest leaf


def _fetch(outcome: str, feed_url: str, **fields: object) -> dict:
    return new_fetch_envelope(
        spider="vendor_press",
        vendor="lab",
        feed_url=feed_url,
        outcome=outcome,
        fetched_at=FETCHED_AT,
        run_hash="0" * 64,
        issued_at="2026-06-18T05:00:01Z",
        **fields,
    )


def fetch_ledger(directory: Path, *, with_item: bool = True) -> Leaves:
    """A ledger signed by TEST_KEY: an item, then three fetch records (as a crawl that finds
    nothing new leaves it), sealed."""
    final = {
        "final_url": "https://feeds.example/feed.xml",
        "fetched_at": "2026-06-18T05:00:00.000000Z",
    }
    envelopes = [sample_envelope(1)] if with_item else []
    envelopes += [
        _fetch(
            "not_modified",
            HOSTILE_URL,
            fetch={**final, "status": 304},
            body_sha256="b" * 64,
            entries=ENTRIES,
        ),
        _fetch("failed", "https://feeds.example/down.xml", error=HOSTILE_ERROR),
        _fetch(
            "new_body",
            "https://feeds.example/feed.xml",
            fetch={**final, "status": 200, "body_sha256": "d" * 64},
            body_sha256="d" * 64,
            entries=ENTRIES,
            content_type="application/rss+xml",
        ),
    ]
    with Ledger.open(directory, signing_key=TEST_KEY) as ledger:
        ids = [issued.axiom_id for issued in ledger.issue(envelopes)]
        ledger.seal()
    return Leaves("" if not with_item else ids[0], *ids[-3:])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Leaves]]:
    work = tmp_path_factory.mktemp("fetch-page")
    leaves = fetch_ledger(work / "ledger")
    publish(work / "ledger", work / "public")
    server = Server(work / "public")
    try:
        yield server.base, leaves
    finally:
        server.stop()


def fields(page: object) -> dict[str, str]:
    shown = page.locator("#vouches [data-field]")
    return {
        shown.nth(i).get_attribute("data-field"): shown.nth(i).text_content()
        for i in range(shown.count())
    }


def test_a_304_fetch_record_shows_as_a_feed_fetch_with_its_url_as_text(served, page) -> None:
    base, leaves = served
    page.goto(base + f"v/{leaves.not_modified}")
    assert verdict_of(page)["verdict"] == "valid"
    assert page.locator("#vouches").get_attribute("data-kind") == "fetch"
    shown = fields(page)
    assert "feed fetch" in shown["kind"]
    assert {name: shown[name] for name in ("vendor", "feed_url", "outcome", "status")} == {
        "vendor": "lab",
        "feed_url": HOSTILE_URL,
        "outcome": "not_modified",
        "status": "HTTP 304",
    }
    assert shown["fetched_at"] == FETCHED_AT
    assert shown["body_sha256"] == "b" * 64
    assert shown["entries_read"] == "3 (limit 3)"
    assert shown["entries_in_body"] == "5: 2 over the limit, 0 unreadable"
    assert not {"title", "url", "observed_at"} & set(shown)  # an item's fields, empty here
    assert page.locator("main img, main script").count() == 0
    assert page.title() != "pwned"


def test_a_failed_fetch_shows_no_response_and_its_error_as_text(served, page) -> None:
    base, leaves = served
    page.goto(base + f"v/{leaves.failed}")
    assert verdict_of(page)["verdict"] == "valid"
    shown = fields(page)
    assert (shown["outcome"], shown["status"], shown["error"]) == (
        "failed",
        "no response",
        HOSTILE_ERROR,
    )
    assert "body_sha256" not in shown and "entries_read" not in shown
    assert page.locator("main img, main script").count() == 0
    assert page.title() != "pwned"


def test_an_item_receipt_still_shows_as_an_item(served, page) -> None:
    base, leaves = served
    page.goto(base + f"v/{leaves.item}")
    assert verdict_of(page)["verdict"] == "valid"
    assert page.locator("#vouches").get_attribute("data-kind") == "item"
    shown = fields(page)
    assert "item" in shown["kind"] and shown["title"] and shown["url"].startswith("http")
    assert "feed_url" not in shown and "status" not in shown
