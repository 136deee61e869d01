"""A bot wall answered in place of a page is never signed as a version of the page, by a plain
capture too: a 2xx carrying `cf-mitigated: challenge`, or a 403, 429 or 503 answered by a
challenge page ("Just a moment...", a captcha's script), is signed `failed` naming the evidence
(crovia_spider/capture/walls.py, the rule the browser capture's verdict uses), kept, and starts
no version; the page's next real answer is `unchanged`. Before, the wall's text was signed as an
`edited` version."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.capture.pages import HTML, PARAGRAPHS
from tests.crawl import crovia, leaves, run_crawl
from tests.feedserver import FeedServer, Reply
from tests.scratch import FAST

ARTICLE = (
    "<!doctype html><html><head><title>Launch</title></head><body><article><h1>Launch</h1>"
    + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    + "</article></body></html>"
).encode()
# A challenge that reads like an article to an extractor: long enough to be "main text".
CHALLENGE = (
    "<!doctype html><html><head><title>Just a moment...</title></head><body><article>"
    + "".join(
        f"<p>Step {n}: checking if the site connection is secure before you can read this page,"
        f" which needs your browser to run the check number {n} of this challenge.</p>"
        for n in range(1, 5)
    )
    + "<script src='https://challenges.cloudflare.com/turnstile/v0/api.js'></script>"
    "</article></body></html>"
).encode()


def site(server: FeedServer) -> str:
    cards = '<li class="card"><a href="/pages/launch">Launch</a></li>'
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    server.script("news", Reply(body=f"<html><body><ul>{cards}</ul></body></html>".encode(),
                                headers=HTML))  # fmt: skip
    server.script(
        "pages/launch",
        Reply(body=ARTICLE, headers=HTML),
        Reply(body=CHALLENGE, headers={**HTML, "cf-mitigated": "challenge"}),
        Reply(status=403, body=CHALLENGE, headers=HTML),
        Reply(body=ARTICLE, headers=HTML),
    )
    selectors = 'selectors = { item = "li.card", link = "a", title = "a" }\n'
    return f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n{selectors}'


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    tmp_path: Path = tmp_path_factory.mktemp("walls")
    with FeedServer() as server:
        crawled = run_crawl(tmp_path, site(server))
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        for _ in range(3):
            again = crovia(tmp_path, "capture", "--all", *FAST)
            assert again.returncode == 0, again.stderr[-3000:]
    return [e["body"] for e in leaves(tmp_path) if e["axiom_type"] == "AX.CAPTURE"]


def test_a_wall_is_never_a_version_of_the_page(captured: list[dict]) -> None:
    assert [c["outcome"] for c in captured] == ["first", "failed", "failed", "unchanged"]


def test_each_wall_names_its_evidence(captured: list[dict]) -> None:
    header, page = captured[1], captured[2]
    assert header["status"] == 200 and "cf-mitigated: challenge" in header["error"]
    assert page["status"] == 403 and "Just a moment" in page["error"]
    for wall in (header, page):
        assert wall["error"].startswith("a bot wall, not the page: ")
        assert "body_sha256" in wall  # kept, as evidence of what was answered
