"""Fuzz harness: a captured page, through `main_text` (crovia_spider/capture/text.py).

`main_text` documents that it never raises on bad input: any bytes under any Content-Type give a
MainText, with the page's main text (a non-empty, stripped string that encodes to UTF-8, since a
capture record signs it as UTF-8 bytes) or, without one, the reason. The input's length picks the
Content-Type (HTML of three charsets, XHTML, none sent, so the body is sniffed); one length in
seven takes the Content-Type from the input's first line, so any Content-Type is reached too.
One input in three is read with a source's `capture_selector` (issue 43), the others with none.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    import trafilatura  # noqa: F401  (main_text imports it when first called: instrumented here)

    from crovia_spider.capture.text import MainText, main_text

FROM_INPUT = None  # the Content-Type is the input's first line (latin-1), the body the rest
CONTENT_TYPES = (
    "text/html; charset=utf-8",
    "text/html; charset=iso-8859-1",
    "text/html; charset=utf-16",
    "application/xhtml+xml",
    "",
    "TEXT/HTML ; Charset=",
    FROM_INPUT,
)
SELECTORS = ("", "", "article, div.post")  # by the input's length: `capture_selector` or none
DOCUMENTED = ()
SLACK = 64 << 10
MEMORY_EVERY = 8  # tracing allocations slows trafilatura sixfold: measure one input in 8


def page_of(data: bytes) -> tuple[bytes, str]:
    """The body and the Content-Type the input stands for."""
    content_type = CONTENT_TYPES[len(data) % len(CONTENT_TYPES)]
    if content_type is FROM_INPUT:
        head, _, body = data.partition(b"\n")
        return body, head.decode("latin-1")
    return data, content_type


def target(data: bytes) -> None:
    found = main_text(*page_of(data), SELECTORS[len(data) % len(SELECTORS)])
    if not isinstance(found, MainText):
        raise TypeError(f"main_text gave {type(found).__name__}, not a MainText")
    if found.text is None:
        if not found.error:
            raise ValueError("no main text, and no reason given")
        return
    if not found.text or found.text != found.text.strip() or found.error:
        raise ValueError(f"main text {found.text[:40]!r} empty or unstripped, or with an error")
    found.text.encode("utf-8")  # signed as UTF-8: a lone surrogate would raise here


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
