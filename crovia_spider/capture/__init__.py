"""Captures of items' pages (docs/spider.md "Captures"): fetch, keep, extract the main text, sign.

`text` extracts a page's main text (trafilatura), `heads` writes the request and response heads a
WARC export is rebuilt from, `book` keeps which pages are captured and when they are due again.
"""
