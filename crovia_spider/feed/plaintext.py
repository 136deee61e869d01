"""HTML to plain text for `summary_excerpt`: tags, comments, scripts, styles out, entities decoded.

Whitespace is kept as the feed wrote it (arXiv's `Announce Type: new \\nAbstract:` survives, as in
the reference receipt); only the ends are trimmed. `excerpt()` cuts to the first N characters, no
ellipsis.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser

EXCERPT_CHARS = 1000
_SKIPPED = {"script", "style", "template", "noscript"}
# Block elements end a line, so words of adjacent paragraphs do not run together.
_BLOCKS = {"p", "br", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"}


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self._skipping += 1
        elif tag in _BLOCKS:
            self._break_line()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED and self._skipping:
            self._skipping -= 1
        elif tag in _BLOCKS:
            self._break_line()

    def _break_line(self) -> None:
        if self.parts and not self._skipping and not self.parts[-1].endswith("\n"):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """The text a reader sees in `markup`, trimmed; plain text passes through (entities decoded)."""
    if "<" not in markup:
        return html.unescape(markup).strip()
    collector = _TextCollector()
    collector.feed(markup)
    collector.close()
    return "".join(collector.parts).strip()


def excerpt(markup: str, limit: int = EXCERPT_CHARS) -> str:
    """The first `limit` characters of the plain text of `markup` (cut mid-word, no ellipsis)."""
    return html_to_text(markup)[:limit]
