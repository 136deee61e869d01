"""A fixture vendor for issue 44: a feed and a watched usage policy, scripted over six crawls.

Round by round (FeedServer replies are used in order, the last repeating; one request a crawl):
1. the feed holds one post; the policy page is served (footer with a nonce: never a version);
2. the feed holds a second post (`new`); one sentence of the policy is edited (`edited`);
3. the policy answers 403 with `cf-mitigated: challenge` and a challenge page (`unreachable`);
4. and 5. the policy answers 410 Gone (`removed`, at round 5 only: two captures in a row);
6. the policy answers 200 again, with its edited text (`returned`).
"""

from __future__ import annotations

import itertools
import time

from tests.feedserver import FeedServer, Reply

HTML = {"Content-Type": "text/html; charset=utf-8"}
RSS = {"Content-Type": "application/rss+xml"}
_NONCE = itertools.count(1)
OLD_SENTENCE = "You may not use our models for military and warfare purposes."
NEW_SENTENCE = "You may not use our models to develop or use weapons."
# A title holding markup: every published page must show it as text.
TITLE = "Usage <b>policies</b> & <script>alert(1)</script>"
# A watched page of these tests is due again 1 s after its last capture (`every = "1s"`).
WATCH_EVERY_SECONDS = 1.0


def until_due_again() -> None:
    """Wait, after a crawl, until its watched pages are due again (their interval, a little
    more): the next crawl then captures them whatever the crawls' speed. On an idle machine a
    crawl takes under half a second, and one started at once found its page not yet due."""
    time.sleep(WATCH_EVERY_SECONDS + 0.1)


def policy(sentence: str) -> str:
    return (
        "<p>These policies apply to every use of our services, in every country where they are"
        " offered. We update them as we learn how our models are used.</p>"
        f"<p>Some uses are never allowed. {sentence} You may not use them to harm children."
        " You may not use them to build surveillance of private persons.</p>"
        "<p>Breaking these policies can end your access to the services without notice.</p>"
    )


def page(sentence: str) -> Reply:
    def body() -> bytes:
        nonce = next(_NONCE)
        return (
            f"<!doctype html><html><head><title>{TITLE}</title></head><body>"
            f"<nav><a href='/'>Home</a></nav><article><h1>Usage policies</h1>{policy(sentence)}"
            f"</article><footer>build {nonce * 7919:x}</footer></body></html>"
        ).encode()

    return Reply(body=body, headers=HTML)


CHALLENGE = Reply(
    status=403,
    body=b"<!doctype html><html><head><title>Just a moment...</title></head><body>"
    b"<script src='/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1'></script>"
    b"</body></html>",
    headers={**HTML, "cf-mitigated": "challenge"},
)
GONE = Reply(status=410, body=b"<html><body><p>Gone</p></body></html>", headers=HTML)
POSTS = [("first-post", "Our first post"), ("second-post", "A second post, new in round 2")]


def feed(base: str, posts: list[tuple[str, str]]) -> Reply:
    items = "".join(
        f"<item><title>{title}</title><link>{base}/posts/{slug}</link><guid>{base}/posts/{slug}"
        f"</guid><pubDate>Mon, 27 Apr 2026 0{n}:00:00 GMT</pubDate></item>"
        for n, (slug, title) in enumerate(posts)
    )
    return Reply(
        body=f'<?xml version="1.0"?><rss version="2.0"><channel><title>Lab</title>'
        f"<link>{base}/</link><description>Lab news</description>{items}</channel></rss>".encode(),
        headers=RSS,
    )


def script_vendor(server: FeedServer, every: str = "1s") -> str:
    """Script the six rounds; returns the feeds.toml of the vendor's two sources."""
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    server.script("feed.xml", feed(server.base, POSTS[:1]), feed(server.base, POSTS))
    server.script(
        "policies/usage",
        page(OLD_SENTENCE),
        page(NEW_SENTENCE),
        CHALLENGE,
        GONE,
        GONE,
        page(NEW_SENTENCE),
    )
    return (
        f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("feed.xml")}"\n\n'
        f'[[feeds]]\nvendor = "lab_policies"\nkind = "watch"\n'
        f'urls = ["{server.url("policies/usage")}"]\nevery = "{every}"\n'
    )
