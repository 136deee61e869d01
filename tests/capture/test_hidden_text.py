"""The rule of main text on pages alone (crovia_spider/capture/hidden.py): what the markup hides
is not main text, what it only seems to hide is. tests/capture/test_capture_hidden.py holds the
same pages through real crawls."""

from __future__ import annotations

import pytest
from lxml import html

from crovia_spider.capture.hidden import declarations, drop_hidden
from crovia_spider.capture.text import main_text
from tests.capture.hidden_pages import HIDDEN, PARAGRAPH, PARAGRAPHS, SHOWN, page


def text_of(body: bytes) -> str:
    found = main_text(body, "text/html; charset=utf-8")
    assert found.text is not None, found.error
    return found.text


@pytest.mark.parametrize("name", list(HIDDEN))
def test_a_hidden_paragraph_is_not_main_text(name):
    text = text_of(page(HIDDEN[name]))
    assert PARAGRAPH not in text
    assert all(paragraph in text for paragraph in PARAGRAPHS)


@pytest.mark.parametrize("name", list(SHOWN))
def test_a_paragraph_a_reader_is_shown_is_main_text(name):
    text = text_of(page(SHOWN[name]))
    assert PARAGRAPH in text
    assert all(paragraph in text for paragraph in PARAGRAPHS)


def shown_text(markup: str) -> str:
    root = html.document_fromstring(f"<html><body>{markup}</body></html>")
    assert drop_hidden(root)
    return " ".join(" ".join(root.body.itertext()).split())


@pytest.mark.parametrize(
    ("markup", "text"),
    [
        # The text after a hidden element is its parent's: it stays.
        ("<p>before <span hidden>gone</span> after</p>", "before after"),
        ('<p>a <b style="display:none">b</b>c <i aria-hidden="true">d</i>e</p>', "a c e"),
        # visibility: the element's own text and its children's tails go, a visible child stays.
        (
            '<div style="visibility:hidden">x <p style="visibility:visible">shown</p> y'
            " <p>inherited</p></div>",
            "shown",
        ),
        # A zero font size is inherited, em of zero is zero, px is a size again.
        (
            '<div style="font-size:0">x<span style="font-size:2em">y</span>'
            '<span style="font-size:12px">z</span></div>',
            "z",
        ),
        # An invalid display keeps a hidden element hidden, a valid one shows it.
        ('<p hidden style="display: banana">a</p><p hidden style="display: flex">b</p>', "b"),
        # Offsets without a position move nothing; a clip only of zero area hides.
        ('<p style="left:-9999px">a</p><p style="clip: rect(0, 10px, 10px, 0)">b</p>', "a b"),
        # Styles it cannot read are no hiding.
        ('<p style="display:">a</p><p style=";;;{}">b</p><p style="opacity: x">c</p>', "a b c"),
    ],
)
def test_what_a_reader_is_shown(markup, text):
    assert shown_text(markup) == text


def test_a_page_hidden_whole_has_no_main_text():
    found = main_text(b"<!doctype html><html hidden><body><p>" + b"x " * 200 + b"</p></html>", "")
    assert found == (None, "no main text: the page shows nothing")


def test_the_style_attributes_left_are_taken_off():
    """trafilatura drops any element whose style says "hidden" (overflow: hidden too): the rule
    here decides, so no style is left for it to read."""
    root = html.document_fromstring(
        '<html><body><div style="overflow:hidden"><p style="color:red">a</p></div></body></html>'
    )
    assert drop_hidden(root)
    assert root.xpath("//*[@style]") == []


def test_declarations_read_an_inline_style_as_a_browser_does():
    style = declarations("color: red; /* display: none */ DISPLAY: block !important; display: none")
    assert {name: [t.serialize() for t in value] for name, value in style.items()} == {
        "color": ["red"],
        "display": ["block"],
    }
    assert declarations("") == declarations(None) == {}
    assert set(declarations("displ\\61y: none; x")) == {"display"}
