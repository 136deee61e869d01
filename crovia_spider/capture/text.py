"""A captured page's main text: what an edit changes, and boilerplate does not.

A page's bytes change on every fetch for reasons that are no edit (a nonce, an ad, the date in a
footer); its main text, as trafilatura extracts it (the article, without navigation, header,
footer, comments), changes when what the page says changes. Main text is what a reader is shown:
what the markup hides (`hidden`, `display: none`, `<template>`, ...: capture/hidden.py) is taken
out before trafilatura reads the page, so hiding a paragraph is an edit like deleting it. A
capture record signs the digest and length of that text (`text` in ledger/capture_record.py), and
keeps the text, so `crovia diff` can show what changed. Only HTML is read: a PDF or an image is
kept as bytes, without text.

The text is extracted in the crawl's parser worker under its time and memory ceilings
(crovia_spider/feed/parsepool.py): a page is hostile input like a feed. trafilatura reads the
string given to it and fetches nothing.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from w3lib.encoding import html_to_unicode

from crovia_spider.capture.hidden import drop_hidden
from crovia_spider.feed import ceilings

HTML_TYPES = frozenset(("text/html", "application/xhtml+xml"))
# What a page is sniffed as when it sends no Content-Type (the first bytes, lower-cased).
_HTML_STARTS = (b"<!doctype html", b"<html")


class MainText(NamedTuple):
    """The main text of a page (None when there is none to read) and why not ("" when read)."""

    text: str | None
    error: str = ""


@cache
def extractor() -> str:
    """The extractor a capture record names: "trafilatura <version>". Read once a process: the
    installed metadata is parsed again on each look-up (milliseconds, most of the issue stage's
    time per capture in bench/capture_bench.py), and the trafilatura a process has imported does
    not change under it."""
    from importlib.metadata import version

    return f"trafilatura {version('trafilatura')}"


def is_html(content_type: str, body: bytes) -> bool:
    """Whether a body is an HTML page: its Content-Type says so, or, sent none, it starts so."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media:
        return media in HTML_TYPES
    return body[:64].lstrip().lower().startswith(_HTML_STARTS)


def main_text(body: bytes, content_type: str) -> MainText:
    """The main text of an HTML `body` (decoded as Scrapy decodes HTML: byte-order mark, the
    Content-Type charset, a <meta> charset), or why there is none. Never raises on bad input."""
    if not is_html(content_type, body):
        return MainText(None, "not an HTML page: kept as bytes, no main text")
    import trafilatura

    _, html = html_to_unicode(content_type or None, body)
    try:
        # Parsed once, as trafilatura would parse the string, then what no reader is shown
        # is taken out (capture/hidden.py) before the extraction reads the tree.
        tree = trafilatura.load_html(html)
        if tree is None or not drop_hidden(tree):
            return MainText(None, "no main text found")
        text = trafilatura.extract(
            tree,
            output_format="txt",
            include_comments=False,
            include_tables=True,
            deduplicate=False,
            fast=True,
        )
    except Exception as exc:  # a library's failure on hostile markup: a page without text
        return MainText(None, f"main text not read: {type(exc).__name__}")
    if not text or not text.strip():
        return MainText(None, "no main text found")
    # Signed as UTF-8 bytes: a lone surrogate (from a character reference) cannot be; it is "?".
    return MainText(text.strip().encode("utf-8", "replace").decode("utf-8"))


def text_within(body: bytes, content_type: str, seconds: float) -> MainText:
    """`main_text` with at most `seconds` of CPU time (in the parser worker, after
    ceilings.worker_setup): a page past it has no text, and says why."""
    try:
        return ceilings.run_within(seconds, main_text, body, content_type)
    except ceilings.ParseTimeLimit:
        return MainText(None, f"main text took more than {seconds:g} s of CPU time")
