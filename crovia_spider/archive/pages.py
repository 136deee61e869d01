"""The pages of an export: one per capture with a response, named by its capture record, with
the page's own title when it is an HTML page that has one (the WACZ's pages/pages.jsonl).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

HTML_TYPES = frozenset(("text/html", "application/xhtml+xml"))
PAGES_FORMAT = "json-pages-1.0"  # the WACZ spec's first line of a pages file


@dataclass(frozen=True)
class CapturedPage:
    """A page a WARC export holds: its capture record, the URL the response came from, when."""

    axiom_id: str
    url: str
    captured_at: str
    title: str = ""


def page_title(body: bytes, content_type: str) -> str:
    """The text of an HTML page's <title>, its whitespace collapsed as a browser shows it ("" for
    a page that is no HTML or has none). The body is decoded as Scrapy decodes HTML (byte-order
    mark, the Content-Type charset, a <meta> charset)."""
    if content_type.split(";", 1)[0].strip().lower() not in HTML_TYPES:
        return ""
    from parsel import Selector
    from w3lib.encoding import html_to_unicode

    _, text = html_to_unicode(content_type, body)
    title = Selector(text=text, type="html").xpath("string((//title)[1])").get() or ""
    return " ".join(title.split())


def pages_jsonl(pages: Iterable[CapturedPage], title: str) -> bytes:
    """A pages file for `wacz create --pages`: the header line, then one line per page, its `id`
    the capture record's axiom_id (the WACZ spec lets `id` be any identifier)."""
    lines = [{"format": PAGES_FORMAT, "id": "pages", "title": title}]
    for page in pages:
        line = {"id": page.axiom_id, "url": page.url, "ts": page.captured_at}
        if page.title:
            line["title"] = page.title
        lines.append(line)
    return b"".join(json.dumps(line).encode("utf-8") + b"\n" for line in lines)
