"""The rule of no main text on pages alone (crovia_spider/capture/text.py; issue 43, obs 6): a page
whose article is not found, or whose text is navigation or too short, has none and says why; an
article beside the same navigation has its text unchanged; `capture_selector` names the article.
tests/capture/test_capture_no_main_text.py holds the same through real crawls."""

from __future__ import annotations

import pytest

from crovia_spider.capture.text import MIN_TEXT_CHARS, main_text
from tests.capture.pages import PARAGRAPHS

HTML = "text/html; charset=utf-8"
MENU = (
    "<nav><ul><li><a href='/'>Home</a></li><li><a href='/news'>News and stories</a></li>"
    "<li><a href='/research'>Research at the lab</a></li><li><a href='/jobs'>Careers</a></li>"
    "</ul></nav>"
)
FOOTER = (
    "<footer><a href='/privacy'>Privacy policy</a> | <a href='/terms'>Terms of use</a></footer>"
)
ARTICLE = "<article><h1>Launch</h1>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS) + "</article>"


def html(*parts: str) -> bytes:
    return ("<!doctype html><html><body>" + "".join(parts) + "</body></html>").encode()


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("a menu and a footer", html(MENU, FOOTER)),
        ("a menu in divs", html(MENU.replace("nav", "div class='menu'"), FOOTER)),
        (
            "links on one line between separators",
            html(
                "<div>"
                + " · ".join(
                    f"<a href='/{n}'>Section number {n} of the site</a>" for n in range(12)
                )
                + "</div>"
            ),
        ),
        (
            "a list of related stories",
            html(
                "<ul>"
                + "".join(
                    f"<li><a href='/s/{n}'>Related story {n}: what the lab did next</a></li>"
                    for n in range(9)
                )
                + "</ul>"
            ),
        ),
        ("a stub", html(MENU, "<article><p>Updated.</p></article>", FOOTER)),
        ("nothing", html("")),
    ],
)
def test_a_page_without_an_article_has_no_main_text(name, body):
    found = main_text(body, HTML)
    assert found.text is None, (name, found.text)
    assert found.error.startswith("no main text: "), found.error


def test_the_article_beside_navigation_is_the_main_text():
    found = main_text(html(MENU, ARTICLE, FOOTER), HTML)
    assert found.text is not None and all(p in found.text for p in PARAGRAPHS)
    assert "Careers" not in found.text and "Privacy" not in found.text
    # The same text whatever the menu holds: a menu change is no edit.
    more = MENU.replace("</ul>", "<li><a href='/events'>Events</a></li></ul>")
    assert main_text(html(more, ARTICLE, FOOTER), HTML) == found


def test_an_article_with_links_in_its_paragraphs_counts_its_own_words():
    linked = "".join(f"<p>{p[:40]}<a href='/x'>{p[40:80]}</a>{p[80:]}</p>" for p in PARAGRAPHS)
    found = main_text(html(MENU, f"<article>{linked}</article>"), HTML)
    assert found.text is not None, found.error


def test_the_stated_size():
    """A main text needs MIN_TEXT_CHARS letters and digits outside links; one fewer is none."""
    words = "x" * (MIN_TEXT_CHARS - 1)
    under = main_text(html(f"<article><p>{words}</p></article>"), HTML)
    assert under.text is None and f"({MIN_TEXT_CHARS - 1} letters and digits" in under.error
    at = main_text(html(f"<article><p>{words}y</p></article>"), HTML)
    assert at.text == words + "y"


def test_capture_selector_names_the_article():
    page = html(MENU, "<div class='post'><p>Fixed: the event is on 3 March.</p></div>", FOOTER)
    assert main_text(page, HTML).text is None  # too short for trafilatura's reading alone
    assert main_text(page, HTML, "div.post").text == "Fixed: the event is on 3 March."
    nested = html("<div class='post'><div class='post'><p>Once.</p></div></div>")
    assert main_text(nested, HTML, "div.post").text == "Once."  # a match inside a match: once
    missing = main_text(page, HTML, "article.story")
    assert missing.text is None
    assert missing.error == "no main text: capture_selector 'article.story' matches nothing"
