"""No main text, no version (issue 43, obs 6): a page whose extractor finds no article (only
navigation, or too short) is captured and kept, signed `failed` with its 2xx and an error saying
"no main text", and starts no version; so a menu that changes is never a signed "edited". A
source names where its article is with `capture_selector`.

Before, a page of a menu and a footer had the menu as its main text, without a word, and a menu
change was signed as an edited version: a false edit in the evidence.

A listing page on 127.0.0.1 links to a page that is only a menu and a footer of links, and to an
article beside the same menu; the menu gains an entry between the two rounds. A second listing
(vendor "notes") links to a short post beside a long sidebar, read with `capture_selector`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crovia_spider.config.feeds import feed_from_table
from ledger.store import BodyStore
from tests.capture.pages import HTML, PARAGRAPHS
from tests.crawl import crovia, leaves, run_crawl, run_records
from tests.feedserver import FeedServer, Reply
from tests.scratch import FAST

MENU = ["Home", "News", "Research", "Careers", "About us", "Contact the press office"]
SHORT = "We fixed the date of the launch event: it is on 3 March."
SIDEBAR = " ".join(
    f"Read our earlier story number {n} about the research programme and its results."
    for n in range(6)
)


def menu(entries: list[str]) -> str:
    links = "".join(f"<li><a href='/{n}'>{name}</a></li>" for n, name in enumerate(entries))
    return f"<nav><ul>{links}</ul></nav>"


def page(entries: list[str], article: str = "") -> Reply:
    footer = "<footer><a href='/privacy'>Privacy</a> | <a href='/terms'>Terms</a></footer>"
    body = f"<!doctype html><html><body>{menu(entries)}{article}{footer}</body></html>"
    return Reply(body=body.encode(), headers=HTML)


def listing(*paths: str) -> Reply:
    cards = "".join(
        f'<li class="card"><a href="/{p}">{p.rsplit("/", 1)[1]}</a></li>' for p in paths
    )
    return Reply(body=f"<html><body><ul>{cards}</ul></body></html>".encode(), headers=HTML)


def script_site(server: FeedServer) -> str:
    more = [*MENU, "Events"]  # the second round's menu
    article = "<article><h1>Launch</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    server.script("news", listing("pages/menu", "pages/article"))
    server.script("pages/menu", page(MENU), page(more))
    server.script(
        "pages/article", page(MENU, article + "</article>"), page(more, article + "</article>")
    )
    post = f"<div class='post'><p>{SHORT}</p></div><aside><p>{SIDEBAR}</p></aside>"
    server.script("notes", listing("notes/fix"))
    server.script("notes/fix", page(MENU, post))
    selectors = 'selectors = { item = "li.card", link = "a", title = "a" }\n'
    return (
        f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n{selectors}\n'
        f'[[feeds]]\nvendor = "notes"\nurl = "{server.url("notes")}"\nkind = "page"\n{selectors}'
        'capture_selector = "div.post"\n'
    )


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    tmp_path = tmp_path_factory.mktemp("nomain")
    with FeedServer() as server:
        crawled = run_crawl(tmp_path, script_site(server))
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        again = crovia(tmp_path, "capture", "--all", *FAST)
        assert again.returncode == 0, again.stderr[-3000:]
    return tmp_path, crawled.stderr, again.stderr


def chain(tmp_path: Path, name: str) -> list[dict]:
    return [
        e["body"] | {"axiom_id": e["axiom_id"]}
        for e in leaves(tmp_path)
        if e["axiom_type"] == "AX.CAPTURE" and e["body"]["url"].endswith(name)
    ]


def item_of(tmp_path: Path, name: str) -> str:
    for envelope in leaves(tmp_path):
        if envelope["axiom_type"] == "AX.OBS" and envelope["body"]["spider_record"]["url"].endswith(
            name
        ):
            return envelope["axiom_id"]
    raise AssertionError(name)


@pytest.mark.slow
def test_a_menu_page_is_kept_without_main_text_and_starts_no_version(rounds):
    tmp_path, crawled, again = rounds
    menu_page = chain(tmp_path, "pages/menu")
    assert [c["outcome"] for c in menu_page] == ["failed", "failed"]  # never "edited"
    store = BodyStore(tmp_path / "ledger")
    for capture in menu_page:
        assert capture["status"] == 200 and "text" not in capture
        assert capture["error"].startswith("no main text: ")
        assert b"Careers" in store.get(capture["body_sha256"])  # the page is kept
    # The article beside the same changing menu: one version, then unchanged.
    assert [c["outcome"] for c in chain(tmp_path, "pages/article")] == ["first", "unchanged"]
    # Said: the run line, the run record, history, diff.
    assert "pages 3 captured (2 first, 1 no main text)" in crawled, crawled[-2000:]
    assert "pages 3 captured (2 unchanged, 1 no main text)" in again, again[-2000:]
    records = run_records(tmp_path)
    assert records[0]["captures"] == {"lab": {"first": 1, "no_main_text": 1}, "notes": {"first": 1}}
    shown = crovia(tmp_path, "history", item_of(tmp_path, "pages/menu")).stdout
    assert shown.count("failed (no main text): HTTP 200") == 2 and "version 1" not in shown
    diff = crovia(tmp_path, "diff", item_of(tmp_path, "pages/menu"))
    assert diff.returncode == 3 and "never captured with a main text" in diff.stderr


@pytest.mark.slow
def test_capture_selector_names_the_article(rounds):
    tmp_path, _, _ = rounds
    (capture,) = chain(tmp_path, "notes/fix")[:1]
    assert capture["outcome"] == "first"
    text = BodyStore(tmp_path / "ledger").get(capture["text"]["sha256"]).decode()
    assert text == SHORT  # the short post alone: not the sidebar, not the menu
    assert capture["text"]["extractor"].endswith(", capture_selector 'div.post'")
    verified = json.loads(
        crovia(tmp_path, "history", item_of(tmp_path, "notes/fix"), "--json").stdout
    )
    assert [c["outcome"] for c in verified["page"]["captures"]] == ["first", "unchanged"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"kind": "page", "capture_selector": "p::text"}, "is not CSS naming elements"),
        ({"kind": "page", "capture_selector": "div["}, "is not CSS naming elements"),
        ({"kind": "page", "capture_selector": ""}, "must be CSS of 1 to 500 characters"),
        ({"kind": "page", "capture_selector": 3}, "must be CSS of 1 to 500 characters"),
        ({"capture_selector": "article"}, "this source captures no page"),
        ({"kind": "page", "capture": False, "capture_selector": "article"}, "captures no page"),
    ],
)
def test_a_bad_capture_selector_is_refused(table, message):
    raw = {"vendor": "lab", "url": "https://lab.example.org/news", **table}
    if raw.get("kind") == "page":
        raw["selectors"] = {"item": "li", "link": "a", "title": "a"}
    with pytest.raises((TypeError, ValueError), match=message.replace("(", r"\(")):
        feed_from_table(raw)


def test_a_good_capture_selector_is_kept():
    raw = {"vendor": "lab", "url": "https://lab.example.org/sitemap.xml", "kind": "sitemap"}
    assert feed_from_table({**raw, "capture_selector": "main article"}).capture_selector == (
        "main article"
    )
