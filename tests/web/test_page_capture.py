"""In Chromium: the receipt of a capture record (AX.CAPTURE) is shown as a page capture, with what
`crovia verify` says of it (the page, its item, the outcome, the response and the digests of the
body and its main text), all as text: a URL or an error that looks like HTML stays text. A capture
record whose body is out of shape, though validly signed, is invalid at `envelope_shape`, as
`crovia verify` has it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from ledger.envelope import axiom_id_of
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web import corpus as c
from tests.web.conftest import Server, publish
from tests.web.corpus_capture import HEADERS, OUTCOMES, TEXT, URL, capture, capture_receipts
from tests.web.test_page import verdict_of
from tests.web.test_page_fetch_record import fields

pytestmark = pytest.mark.slow

HOSTILE_URL = "https://lab.example.org/<img src=x onerror=\"document.title='pwned'\">"
HOSTILE_ERROR = '<script>document.title="pwned"</script> connection reset'
MOVED = {**OUTCOMES["moved"], "final_url": HOSTILE_URL, "redirects": [URL, URL + "?to=archive"]}


@dataclass
class Captures:
    base: str
    moved: str  # a 200 after two redirects, to an HTML-looking URL: every fact a capture holds
    failed: str  # no response, an HTML-looking error


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Captures]:
    """A published ledger of an item and two captures of its page, signed by TEST_KEY; beside
    it, in samples/, the out-of-shape capture receipts of the differential corpus."""
    work = tmp_path_factory.mktemp("capture-page")
    item = sample_envelope(1)
    moved = capture(axiom_id_of(item), "moved", 1, **MOVED)
    failed = capture(axiom_id_of(item), "failed", 2, axiom_id_of(moved), error=HOSTILE_ERROR)
    with Ledger.open(work / "ledger", signing_key=TEST_KEY) as ledger:
        ledger.issue([item, moved, failed])
        ledger.seal()
    publish(work / "ledger", work / "public")
    _, broken = capture_receipts(work / "corpus")
    (work / "public" / "samples").mkdir()
    for name in ("status a string", "text.sha256 not hex"):
        sample = work / "public" / "samples" / f"{name.replace(' ', '-')}.json"
        sample.write_bytes(c.receipt_bytes(broken[name]))
    server = Server(work / "public")
    try:
        yield Captures(server.base, axiom_id_of(moved), axiom_id_of(failed))
    finally:
        server.stop()


def test_a_capture_record_shows_as_a_page_capture_with_every_fact_as_text(served, page) -> None:
    page.goto(served.base + f"v/{served.moved}")
    assert verdict_of(page)["verdict"] == "valid"
    assert page.locator("#vouches").get_attribute("data-kind") == "capture"
    shown = fields(page)
    assert "page capture" in shown["kind"]
    response = {
        "status": "HTTP 200",
        "final_url": HOSTILE_URL,
        "redirects": f"{URL} → {URL}?to=archive",
        **HEADERS,
        "ip_address": "203.0.113.7",
        "tls_certificate_sha256": "c" * 64,
        "body_sha256": f"{'e' * 64} (5300 bytes)",
        "text": f"{'8' * 64} (1250 characters, by {TEXT['extractor']})",
    }
    assert {name: shown.get(name) for name in response} == response
    assert (shown["vendor"], shown["url"], shown["outcome"]) == ("lab", URL, "moved")
    assert shown["item"] == axiom_id_of(sample_envelope(1))
    assert shown["captured_at"] == "2026-06-18T05:01:00.123456Z"
    assert "error" not in shown and not {"title", "feed_url"} & set(shown)
    assert page.locator("main img, main script").count() == 0
    assert page.title() != "pwned"


def test_a_failed_capture_shows_no_response_and_its_error_as_text(served, page) -> None:
    page.goto(served.base + f"v/{served.failed}")
    assert verdict_of(page)["verdict"] == "valid"
    shown = fields(page)
    assert (shown["outcome"], shown["status"], shown["error"]) == (
        "failed",
        "no response",
        HOSTILE_ERROR,
    )
    assert not {"final_url", "body_sha256", "text", "redirects"} & set(shown)
    assert page.locator("main img, main script").count() == 0
    assert page.title() != "pwned"


@pytest.mark.parametrize("sample", ["status-a-string", "text.sha256-not-hex"])
def test_an_out_of_shape_capture_record_is_invalid_at_envelope_shape(served, page, sample):
    page.goto(served.base + f"v/?src=/samples/{sample}.json")
    result = verdict_of(page)
    assert (result["verdict"], result["failed"]) == ("invalid", "envelope_shape"), result
    assert result["checks"]["envelope_signature"] == "true"  # signed, and still refused
    assert page.locator("#vouches [data-field]").count() == 0
