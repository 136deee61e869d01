"""A captured page's main text: what an edit changes, and boilerplate does not.

A page's bytes change on every fetch for reasons that are no edit (a nonce, an ad, the date in a
footer); its main text, as trafilatura extracts it (the article, without navigation, header,
footer, comments), changes when what the page says changes. Main text is what a reader is shown:
what the markup hides (`hidden`, `display: none`, `<template>`, ...: capture/hidden.py) is taken
out before trafilatura reads the page, so hiding a paragraph is an edit like deleting it. A
capture record signs the digest and length of that text (`text` in ledger/records/capture.py), and
keeps the text, so `crovia diff` can show what changed. Only HTML is read: a PDF or an image is
kept as bytes, without text.

An HTML page whose article is not found has **no main text**, and its capture starts no version
(a menu change is no edit): trafilatura finding nothing, or finding what is only navigation or
too short, fewer than MIN_TEXT_CHARS letters and digits outside the page's links (a menu, a
footer of links, a list of related stories). The page is still kept and signed, its record
saying why (`no main text: ...`). A source whose article trafilatura misses, or whose pages are
short, names where it is with `capture_selector` (a CSS selector, crovia_spider/config/feeds.py):
the main text is then that of the elements it matches, and any length counts.

The text is extracted in the crawl's parser worker under its time and memory ceilings
(crovia_spider/feed/parsepool.py): a page is hostile input like a feed. trafilatura reads the
string given to it and fetches nothing.
"""

from __future__ import annotations

import copy
import re
from functools import cache
from typing import Any, NamedTuple

from w3lib.encoding import html_to_unicode

from crovia_spider.capture.hidden import drop_hidden
from crovia_spider.feed import ceilings

# How every reason an HTML page has no main text begins: ledger/store/pages.py reads such a
# capture back as one, and the run record counts it as `no_main_text`.
from ledger.store import NO_MAIN_TEXT

HTML_TYPES = frozenset(("text/html", "application/xhtml+xml"))
# What separates the links of a menu written on one line: "Home | News · About".
_SEPARATORS = re.compile(r"\s*[|·•/»«›‹]\s*| {2,}")
# Letters and digits outside links that make a main text: fewer is navigation or a stub. A
# paragraph of twenty-odd words; a menu and its footer of links have none.
MIN_TEXT_CHARS = 120

# What a page is sniffed as when it sends no Content-Type (the first bytes, lower-cased).
_HTML_STARTS = (b"<!doctype html", b"<html")


class MainText(NamedTuple):
    """The main text of a page (None when there is none to read) and why not ("" when read)."""

    text: str | None
    error: str = ""


@cache
def extractor(selector: str = "") -> str:
    """The extractor a capture record names: "trafilatura <version>", and the source's
    `capture_selector` when it has one ("trafilatura 2.3.1, capture_selector 'article'"), so
    the text can be read again from the kept page. Read once a process: the installed metadata
    is parsed again on each look-up (milliseconds, most of the issue stage's time per capture in
    bench/capture_bench.py), and the trafilatura a process has imported does not change under
    it."""
    from importlib.metadata import version

    name = f"trafilatura {version('trafilatura')}"
    return f"{name}, capture_selector {selector!r}" if selector else name


def is_html(content_type: str, body: bytes) -> bool:
    """Whether a body is an HTML page: its Content-Type says so, or, sent none, it starts so."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media:
        return media in HTML_TYPES
    return body[:64].lstrip().lower().startswith(_HTML_STARTS)


def main_text(body: bytes, content_type: str, selector: str = "") -> MainText:
    """The main text of an HTML `body` (decoded as Scrapy decodes HTML: byte-order mark, the
    Content-Type charset, a <meta> charset), or why there is none: an error beginning with
    NO_MAIN_TEXT for an HTML page (the module docstring). With `selector` (a checked CSS
    selector), the text of the elements it matches. Never raises on bad input."""
    if not is_html(content_type, body):
        return MainText(None, "not an HTML page: kept as bytes, no main text")
    import trafilatura

    _, html = html_to_unicode(content_type or None, body)
    try:
        # Parsed once, as trafilatura would parse the string, then what no reader is shown
        # is taken out (capture/hidden.py) before the extraction reads the tree.
        tree = trafilatura.load_html(html)
        if tree is None or not drop_hidden(tree):
            return MainText(None, f"{NO_MAIN_TEXT}: the page shows nothing")
        if selector:
            return _selected_text(tree, selector)
        links = _link_texts(tree)
        text = _extract(tree)
    except Exception as exc:  # a library's failure on hostile markup: a page without text
        return MainText(None, f"{NO_MAIN_TEXT}: not read ({type(exc).__name__})")
    if not text:
        return MainText(None, f"{NO_MAIN_TEXT}: trafilatura found no article")
    own = _letters_outside(text, links)
    if own < MIN_TEXT_CHARS:
        return MainText(
            None,
            f"{NO_MAIN_TEXT}: what trafilatura found is navigation or too short ({own} letters"
            f" and digits outside links, under {MIN_TEXT_CHARS}); capture_selector names the"
            " article",
        )
    return MainText(text)


def _extract(tree: Any) -> str:
    """trafilatura's text of `tree` (a copy is read), stripped; signed as UTF-8 bytes, so a lone
    surrogate (from a character reference) is "?"."""
    import trafilatura

    text = trafilatura.extract(
        tree,
        output_format="txt",
        include_comments=False,
        include_tables=True,
        deduplicate=False,
        fast=True,
    )
    return (text or "").strip().encode("utf-8", "replace").decode("utf-8")


def _selected_text(tree: Any, selector: str) -> MainText:
    """The main text of the elements `selector` matches: trafilatura's reading of them alone,
    else their own text (a short post trafilatura leaves out is still the article)."""
    from lxml import html as lxml_html

    found = tree.cssselect(selector)
    if not found:
        return MainText(None, f"{NO_MAIN_TEXT}: capture_selector {selector!r} matches nothing")
    page = lxml_html.document_fromstring("<html><body></body></html>")
    for element in found:
        if any(element is not other and other in element.iterancestors() for other in found):
            continue  # inside another match: read once, with it
        page.body.append(copy.deepcopy(element))
    text = _extract(page)
    if not text:
        lines = (" ".join(part.split()) for part in page.body.itertext())
        text = "\n".join(line for line in lines if line).encode("utf-8", "replace").decode()
    if not text:
        return MainText(None, f"{NO_MAIN_TEXT}: capture_selector {selector!r} matches no text")
    return MainText(text)


def _link_texts(tree: Any) -> frozenset[str]:
    """The text of each link of the page, whitespace folded."""
    return frozenset(" ".join(a.text_content().split()) for a in tree.iter("a")) - {""}


def _letters_outside(text: str, links: frozenset[str]) -> int:
    """Letters and digits of `text` outside the text of the page's `links`: a line, or a part of
    a line between separators (`Home | News`), that is a link's whole text counts none. One pass
    over the text, whatever the number of links."""
    count = 0
    for line in text.splitlines():
        line = " ".join(line.split())
        if line in links:
            continue
        for part in _SEPARATORS.split(line):
            if part not in links:
                count += sum(1 for ch in part if ch.isalnum())
    return count


def text_within(body: bytes, content_type: str, seconds: float) -> MainText:
    """`main_text` with at most `seconds` of CPU time (in the parser worker, after
    ceilings.worker_setup): a page past it has no text, and says why."""
    return selected_within(body, content_type, "", seconds)


def selected_within(body: bytes, content_type: str, selector: str, seconds: float) -> MainText:
    """`main_text` of the elements `selector` matches ("": the article trafilatura finds) with
    at most `seconds` of CPU time, as `text_within`."""
    try:
        return ceilings.run_within(seconds, main_text, body, content_type, selector)
    except ceilings.ParseTimeLimit:
        return MainText(None, f"{NO_MAIN_TEXT}: reading it took more than {seconds:g} s of CPU")
