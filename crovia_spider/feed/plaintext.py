"""Plain text for `title` and `summary_excerpt`, whatever type the feed declared.

`plain_text()` promises: no tags (markup, comments, scripts and styles are removed, and escaped
markup such as `&lt;b&gt;` is decoded and removed too: the text is read as HTML until it stops
changing, at most a few rounds), entities decoded, C0 and C1 control characters (NUL included),
bidi embedding, override and isolate characters (U+202A..U+202E, U+2066..U+2069) and Unicode
noncharacters removed, every run of whitespace collapsed to one space, ends trimmed. Block elements
(`<p>`, `<br>`, ...) become a space, so words of adjacent paragraphs do not run together.
`excerpt()` cuts that to the first N characters, no ellipsis. The raw text stays in the kept body.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

EXCERPT_CHARS = 1000
# Escaped markup can be escaped again (`&amp;lt;b&amp;gt;`); a few rounds reach every real feed,
# and the rounds are bounded so a crafted text cannot make us loop.
_ROUNDS = 4
_SKIPPED = {"script", "style", "template", "noscript"}
_BLOCKS = {"p", "br", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"}
# C0 and C1 controls (whitespace among them is collapsed below instead), bidi embeddings, overrides
# and isolates, lone surrogates (unencodable), and noncharacters (U+FDD0..U+FDEF, U+FFFE, U+FFFF).
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0e-\x1f\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]"
)
_MARKUP = re.compile(r"<[A-Za-z/!?]|&[#A-Za-z]")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self._skipping += 1
        elif tag in _BLOCKS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED and self._skipping:
            self._skipping -= 1
        elif tag in _BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """One round: the text a reader sees in `markup` (entities decoded), untrimmed."""
    if "<" not in markup:
        return html.unescape(markup)
    collector = _TextCollector()
    try:
        collector.feed(markup)
        collector.close()
    except AssertionError:
        # Python's HTMLParser asserts on a marked section it does not know (`<![CDAPA[`), which
        # a JSON Feed, a sitemap's news title or a page's text may hold as is (RSS and Atom
        # reach here sanitized): read declarations as text, so the entry is not lost.
        collector = _TextCollector()
        collector.feed(markup.replace("<!", "&lt;!"))
        collector.close()
    return "".join(collector.parts)


def plain_text(markup: str) -> str:
    """`markup` as plain text by the rules of the module docstring. Never raises."""
    text = markup
    for _ in range(_ROUNDS):
        if not _MARKUP.search(text):
            break
        text = html_to_text(text)
    return clean_text(text)


def clean_text(text: str) -> str:
    """`text` with the invisible characters of the module docstring removed and whitespace
    collapsed, but no markup read (for guids and dates)."""
    return " ".join(_INVISIBLE.sub("", text).split())


def excerpt(markup: str, limit: int = EXCERPT_CHARS) -> str:
    """The first `limit` characters of `plain_text(markup)` (cut mid-word, no ellipsis)."""
    return plain_text(markup)[:limit]
