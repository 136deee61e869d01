"""In Chromium: the receipt of a browser capture (issue 45) shows what `crovia verify` says of it,
the verdict and why, the requests, the screenshot and DOM digests, the browser and the twin, all
as text: a reason that looks like HTML stays text. And the screenshot itself, published by
`crovia publish` beside the receipts, is shown only when its bytes hash to the signed digest."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ledger.envelope import axiom_id_of
from ledger.store import BodyStore, Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web.conftest import Server, publish
from tests.web.corpus_browser import PARTIAL, TWIN, VALID
from tests.web.corpus_capture import capture
from tests.web.test_page import verdict_of
from tests.web.test_page_fetch_record import fields

pytestmark = pytest.mark.slow
HOSTILE = "<img src=x onerror=\"document.title='pwned'\"> cut https://lab.example.org/app.js"


# A real PNG, 3 x 2 pixels: what a browser capture's record names as its screenshot.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000030000000208020000001216f14d0000001049444154789c63"
    "f8cfc000410c70160041d205fb87f0b9480000000049454e44ae426082"
)


@dataclass
class Served:
    base: str
    partial: str
    blocked: str
    shown: str  # a complete capture whose screenshot is kept and published
    public: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    work = tmp_path_factory.mktemp("browser-page")
    item = sample_envelope(1)
    outcome, facts = VALID["partial"]
    facts = {**facts, "browser": {**PARTIAL, "reasons": [HOSTILE, *PARTIAL["reasons"][1:]]}}
    partial = capture(axiom_id_of(item), outcome, 1, **facts)
    outcome, facts = VALID["blocked"]
    blocked = capture(axiom_id_of(item), outcome, 2, axiom_id_of(partial), **facts)
    with Ledger.open(work / "ledger", signing_key=TEST_KEY) as ledger:
        outcome, facts = VALID["complete"]
        digest = BodyStore(work / "ledger").put(PNG)  # kept as a crawl keeps it
        shot = {"sha256": digest, "width": 3, "height": 2}
        facts = {**facts, "browser": {**facts["browser"], "screenshot": shot}}
        shown = capture(axiom_id_of(item), outcome, 3, axiom_id_of(blocked), **facts)
        ledger.issue([item, partial, blocked, shown])
        ledger.seal()
    publish(work / "ledger", work / "public")
    server = Server(work / "public")
    try:
        yield Served(
            server.base, axiom_id_of(partial), axiom_id_of(blocked), axiom_id_of(shown),
            work / "public",
        )  # fmt: skip
    finally:
        server.stop()


def test_a_browser_capture_shows_its_verdict_reasons_and_twin_as_text(served, page) -> None:
    page.goto(served.base + f"v/{served.partial}")
    assert verdict_of(page)["verdict"] == "valid"
    shown = fields(page)
    assert shown["verdict"] == "partial"
    assert shown["reasons"] == "; ".join([HOSTILE, *PARTIAL["reasons"][1:]])
    assert shown["twin"] == TWIN
    assert shown["requests"] == f"12 (2 refused, 1 failed), listed in {'3' * 64}"
    assert shown["screenshot"] == f"{'4' * 64} (1280x4210 px)"
    assert shown["dom"] == f"{'6' * 64} (48213 bytes)"
    assert shown["browser"] == "Chromium 156.0.8078.114 (Playwright 1.65.3) at 1280x800"
    assert page.locator("main img, main script").count() == 0
    assert page.title() != "pwned"


def test_a_blocked_capture_shows_the_evidence_of_the_wall(served, page) -> None:
    page.goto(served.base + f"v/{served.blocked}")
    assert verdict_of(page)["verdict"] == "valid"
    shown = fields(page)
    assert (shown["outcome"], shown["verdict"]) == ("failed", "blocked")
    assert shown["reasons"] == "HTTP 403; header cf-mitigated: challenge; title 'Just a moment...'"
    assert "screenshot" not in shown and "dom" not in shown


def screenshot_state(page: object) -> str:
    page.wait_for_selector("#screenshot[data-screenshot]", timeout=30_000)
    return page.locator("#screenshot").get_attribute("data-screenshot")


def test_a_published_screenshot_is_shown_once_its_bytes_are_the_signed_ones(served, page):
    page.goto(served.base + f"v/{served.shown}")
    assert verdict_of(page)["verdict"] == "valid"
    assert screenshot_state(page) == "shown"
    image = page.locator("#screenshot img")
    assert image.get_attribute("src").startswith("blob:")  # the very bytes that were hashed
    page.wait_for_function("document.querySelector('#screenshot img').complete")
    assert image.evaluate("(i) => [i.naturalWidth, i.naturalHeight]") == [3, 2]


def test_a_screenshot_swapped_on_the_site_is_not_shown(served, page, tmp_path):
    (published,) = (served.public / "screenshots").iterdir()
    kept = published.read_bytes()
    try:
        published.write_bytes(kept + b"\0")  # one byte more: still an image, not the signed one
        page.goto(served.base + f"v/{served.shown}")
        assert verdict_of(page)["verdict"] == "valid"  # the receipt is fine; the image is not
        assert screenshot_state(page) == "mismatch"
        assert page.locator("#screenshot img").count() == 0
        assert "not to the signed" in page.locator("#screenshot").text_content()
    finally:
        published.write_bytes(kept)


def test_a_screenshot_not_kept_is_not_published_and_the_page_says_so(served, page):
    page.goto(served.base + f"v/{served.partial}")  # its digest names no kept blob
    assert screenshot_state(page) == "missing"
    assert "HTTP 404" in page.locator("#screenshot").text_content()
    assert not (served.public / "screenshots" / f"{'4' * 64}.png").exists()
