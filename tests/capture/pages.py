"""A vendor site whose article pages change over five capture rounds (tests/capture).

A listing page (`/news`, a source of kind "page") links to three articles; each article is
scripted round by round (FeedServer replies are used in order, the last repeating):
- `/articles/edited`: the same main text twice, then an edited paragraph, kept after;
- `/articles/gone`: the same text twice, then 410 Gone;
- `/articles/moving`: the same text twice, then a 301 to `/articles/moved-here`, which serves it.
Every HTML answer ends with a footer holding a fresh nonce and the time: bytes that differ on
every fetch, which must never count as an edit.
"""

from __future__ import annotations

import itertools

from tests.feedserver import FeedServer, Reply

HTML = {"Content-Type": "text/html; charset=utf-8"}
_NONCE = itertools.count(1)
PARAGRAPHS = [
    "The model was trained on a larger mixture of public and licensed data than its predecessor,"
    " and it was evaluated on the benchmarks listed in the appendix of this announcement.",
    "We are releasing the weights under the same licence as before, and access through the API"
    " opens today for every organisation that already holds an account with us.",
    "Safety testing was carried out by an external team over six weeks; their report is linked"
    " below together with the evaluation code used for every figure in this post.",
]
EDIT = (
    "Access through the API opens next month, not today, for organisations on the waiting list;"
    " we have updated this post to say so and apologise for the confusion."
)
TITLES = {"edited": "Model launch", "gone": "Usage policy", "moving": "Model card"}


def article(title: str, paragraphs: list[str]) -> Reply:
    """An article page whose footer changes on every fetch (a nonce and a counter)."""

    def body() -> bytes:
        nonce = next(_NONCE)
        text = "".join(f"<p>{p}</p>" for p in paragraphs)
        return (
            f"<!doctype html><html><head><title>{title}</title></head><body>"
            f"<nav><a href='/'>Home</a> | <a href='/news'>News</a></nav>"
            f"<article><h1>{title}</h1>{text}</article>"
            f"<footer>Rendered by build {nonce * 7919:x}, request {nonce}, nonce"
            f" {nonce * 104729:08x}</footer></body></html>"
        ).encode()

    return Reply(body=body, headers=HTML)


def listing(base: str) -> bytes:
    cards = "".join(
        f'<li class="card"><a href="/articles/{name}">{title}</a></li>'
        for name, title in TITLES.items()
    )
    return f"<!doctype html><html><body><ul>{cards}</ul></body></html>".encode()


def script_site(server: FeedServer) -> str:
    """Script the five rounds; returns feeds.toml with the listing source."""
    edited = [*PARAGRAPHS[:1], EDIT, *PARAGRAPHS[2:]]
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    server.script("news", Reply(body=listing(server.base), headers=HTML))
    server.script(
        "articles/edited",
        article(TITLES["edited"], PARAGRAPHS),
        article(TITLES["edited"], PARAGRAPHS),
        article(TITLES["edited"], edited),
    )
    gone = Reply(status=410, body=b"<html><body><p>Gone</p></body></html>", headers=HTML)
    server.script(
        "articles/gone",
        article(TITLES["gone"], PARAGRAPHS),
        article(TITLES["gone"], PARAGRAPHS),
        gone,
    )
    moved = Reply(status=301, headers={"Location": server.url("articles/moved-here")})
    server.script(
        "articles/moving",
        article(TITLES["moving"], PARAGRAPHS),
        article(TITLES["moving"], PARAGRAPHS),
        moved,
    )
    server.script("articles/moved-here", article(TITLES["moving"], PARAGRAPHS))
    return (
        f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
        'selectors = { item = "li.card", link = "a", title = "a" }\n'
    )
