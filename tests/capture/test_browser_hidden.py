"""A browser capture reads main text by the same rule as a plain one (issue 45): on every page of
tests/capture/hidden_pages.py, what the markup hides from a reader (HIDDEN) is not in the main
text of the rendered DOM, and what only looks hidden (SHOWN) is, exactly as in the plain capture
of the same page in the same run (its twin). One real crawl on loopback, in browser mode.
"""

from __future__ import annotations

import pytest

from ledger.store import BodyStore
from tests.capture.hidden_pages import HIDDEN, PARAGRAPH, SHOWN, page
from tests.crawl import leaves, run_crawl
from tests.feedserver import FeedServer, Reply

pytestmark = pytest.mark.slow
HTML = {"Content-Type": "text/html; charset=utf-8"}
PAGES = {f"hidden-{name}": markup for name, markup in HIDDEN.items()} | {
    f"shown-{name}": markup for name, markup in SHOWN.items()
}


def test_the_rendered_dom_is_read_by_the_rule_of_the_plain_capture(tmp_path):
    with FeedServer() as server:
        server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        cards = "".join(f'<li class="card"><a href="/articles/{n}">{n}</a></li>' for n in PAGES)
        server.script("news", Reply(body=f"<html><body><ul>{cards}</ul></body></html>".encode()))
        for name, markup in PAGES.items():
            server.script(f"articles/{name}", Reply(body=page(markup), headers=HTML))
        feeds = (
            f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
            'capture = "browser"\nselectors = { item = "li.card", link = "a", title = "a" }\n'
        )
        crawled = run_crawl(tmp_path, feeds, "-s", "CROVIA_BROWSER_CONCURRENCY=4", timeout=600)
    assert crawled.returncode == 0, crawled.stderr[-3000:]
    store = BodyStore(tmp_path / "ledger")
    texts: dict[tuple[str, str], str] = {}
    for envelope in leaves(tmp_path):
        body = envelope["body"]
        if envelope["axiom_type"] == "AX.CAPTURE":
            name = body["url"].rsplit("/", 1)[1]
            texts[name, body.get("mode", "")] = store.get(body["text"]["sha256"]).decode()
            if body.get("mode"):
                assert body["browser"]["verdict"] == "complete", name
    assert len(texts) == 2 * len(PAGES)
    for name in PAGES:
        plain, rendered = texts[name, ""], texts[name, "browser"]
        assert (PARAGRAPH in rendered) == name.startswith("shown-"), name
        assert rendered == plain, name  # the twin's text: no script on these pages
