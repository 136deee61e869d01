"""Issue 30: the page shows what a fetch record says its body held, as text: the entries read and
the entries in the body, over the limit and unreadable, equal to the signed counts."""

from __future__ import annotations

import pytest

from tests.crawl import fetch_records
from tests.web.conftest import Site
from tests.web.test_page import verdict_of

pytestmark = pytest.mark.slow


def test_the_page_shows_a_fetch_records_entry_counts_as_text(site: Site, page: object) -> None:
    records = fetch_records(site.ledger_dir.parent)
    assert records
    for record in records:
        page.goto(site.url(f"/v/{record['axiom_id']}"))
        assert verdict_of(page)["verdict"] == "valid"
        entries, body = record["body"]["entries"], record["body"]
        shown = {
            name: page.locator(f"[data-field='{name}']").text_content()
            for name in ("feed_url", "outcome", "entries_read", "entries_in_body")
        }
        assert shown == {
            "feed_url": body["feed_url"],
            "outcome": body["outcome"],
            "entries_read": f"{entries['count']} (limit {entries['limit']})",
            "entries_in_body": f"{entries['in_body']}: {entries['over_limit']} over the limit,"
            f" {entries['unread']} unreadable",
        }
        assert page.locator("[data-field='entries_in_body'] *").count() == 0  # text, no markup
