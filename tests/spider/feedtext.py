"""Small RSS documents for crawl tests, written out in full so a reader sees every byte served."""

from __future__ import annotations

import hashlib

from tests.feedserver import Reply


def rss(*items: str, encoding: str = "utf-8") -> bytes:
    """An RSS 2.0 document holding `items` (each the inside of one <item>)."""
    body = "".join(f"<item>{item}</item>\n" for item in items)
    text = (
        f'<?xml version="1.0" encoding="{encoding}"?>\n<rss version="2.0"><channel>'
        "<title>t</title><link>https://example.org/</link><description>d</description>\n"
        f"{body}</channel></rss>\n"
    )
    return text.encode(encoding)


def item(title: str, link: str = "", guid: str = "", description: str = "text") -> str:
    """The inside of one <item>; empty fields are left out."""
    parts = [f"<title>{title}</title>"]
    if link:
        parts.append(f"<link>{link}</link>")
    if guid:
        parts.append(f'<guid isPermaLink="false">{guid}</guid>')
    parts.append(f"<description>{description}</description>")
    return "".join(parts)


def lab_rss(links: list[str]) -> bytes:
    """The RSS feed of lab.example.org holding one entry per link, "Post N" its title."""
    entries = "".join(
        f"<item><title>Post {n}</title><link>{link}</link><guid>{link}</guid>"
        f"<description>About {n}</description></item>"
        for n, link in enumerate(links)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Lab</title>'
        f"<link>https://lab.example.org/</link><description>x</description>{entries}"
        "</channel></rss>"
    ).encode()


def etagged(body: bytes) -> Reply:
    """A 200 of the RSS `body`, with an ETag of its digest."""
    etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
    return Reply(200, body, {"Content-Type": "application/rss+xml", "ETag": etag})
