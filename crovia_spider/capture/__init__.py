"""Captures of items' pages (docs/spider.md "Captures", docs/browser.md): fetch, keep, extract the
main text, sign.

`text` extracts a page's main text (trafilatura), `heads` writes the request and response heads a
WARC export is rebuilt from, `book` keeps which pages are captured and when they are due again.
A browser capture (`capture = "browser"`) renders the page in the system Chromium: `chromium`
starts it so that no crawl leaves it behind, `browser` renders one page with every request
answered by the crawl, `exchanges` lists what the page asked for and decides the verdict, and
`walls` tells a bot wall from the vendor's page.
"""
