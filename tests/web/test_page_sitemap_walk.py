"""In Chromium: the receipt of a sitemap walk's fetch record shows how the source was read, as
text: its kind, the options it was read with (`select`, whose patterns may hold anything) and its
further fetches (`parts`: read, not read, a loop), beside everything a fetch record shows."""

from __future__ import annotations

import json

import pytest

from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY
from tests.web.conftest import Server, publish
from tests.web.test_page import verdict_of
from tests.web.test_page_fetch_record import ENTRIES, FETCHED_AT, _fetch, fields

pytestmark = pytest.mark.slow

SELECT = {"include": ["<img src=x onerror=\"document.title='pwned'\">"], "exclude": ["/tag/"]}
PARTS = [
    {"url": "https://lab.example/index.xml", "final_url": "https://lab.example/index.xml",
     "status": 200, "body_sha256": "e" * 64, "content_type": "application/xml"},
    {"url": "https://lab.example/news.xml.gz", "final_url": "https://lab.example/news.xml.gz",
     "error": "HTTP 503"},
    {"url": "https://lab.example/index.xml", "loop": True},
]  # fmt: skip


def test_a_sitemap_walk_shows_its_kind_options_and_parts_as_text(tmp_path, page) -> None:
    final = {"final_url": "https://lab.example/robots.txt", "fetched_at": FETCHED_AT}
    walk = _fetch(
        "new_body",
        "https://lab.example/robots.txt",
        fetch={**final, "status": 200, "body_sha256": "d" * 64},
        body_sha256="d" * 64,
        entries=ENTRIES,
        kind="sitemap",
        select=SELECT,
        parts=PARTS,
    )
    with Ledger.open(tmp_path / "ledger", signing_key=TEST_KEY) as ledger:
        (issued,) = ledger.issue([walk])
        ledger.seal()
    publish(tmp_path / "ledger", tmp_path / "public")
    server = Server(tmp_path / "public")
    try:
        page.goto(server.base + f"v/{issued.axiom_id}")
        assert verdict_of(page)["verdict"] == "valid"
        shown = fields(page)
    finally:
        server.stop()
    assert shown["source_kind"] == "sitemap"
    assert json.loads(shown["select"]) == SELECT
    assert shown["parts"] == "3: 1 read, 1 not read, 1 already read in this walk"
    assert page.locator("main img, main script").count() == 0
    assert page.title() != "pwned"
