"""In Chromium: the receipt of a browser capture (issue 45) shows what `crovia verify` says of it,
the verdict and why, the requests, the screenshot and DOM digests, the browser and the twin, all
as text: a reason that looks like HTML stays text."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from ledger.envelope import axiom_id_of
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope
from tests.web.conftest import Server, publish
from tests.web.corpus_browser import PARTIAL, TWIN, VALID
from tests.web.corpus_capture import capture
from tests.web.test_page import verdict_of
from tests.web.test_page_fetch_record import fields

pytestmark = pytest.mark.slow
HOSTILE = "<img src=x onerror=\"document.title='pwned'\"> cut https://lab.example.org/app.js"


@dataclass
class Served:
    base: str
    partial: str
    blocked: str


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
        ledger.issue([item, partial, blocked])
        ledger.seal()
    publish(work / "ledger", work / "public")
    server = Server(work / "public")
    try:
        yield Served(server.base, axiom_id_of(partial), axiom_id_of(blocked))
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
