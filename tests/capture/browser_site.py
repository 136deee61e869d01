"""A vendor site built by JavaScript, a wall, a slow script, a page that never loads, and a page
that asks other servers for things (tests/capture/test_browser_capture.py).

A listing page (`/news`, a source of kind "page" with `capture = "browser"`) links to:
- `/articles/js`: a shell whose article's last paragraph arrives by `fetch('/api/article.json')`
  from `/static/app.js`; the JSON's first answer holds SENTENCE, later ones EDITED;
- `/articles/wall`: 403, `cf-mitigated: challenge`, "Just a moment..." (Cloudflare's challenge);
- `/articles/slow`: an article whose one script, `/static/never.js`, never answers;
- `/articles/hang`: a page that never answers at all;
- `/articles/refused`: an article whose script asks `http://127.0.0.2:PORT/secret` and whose
  `<img>` is on a third loopback server: neither may see a request.
"""

from __future__ import annotations

import json

from tests.feedserver import FeedServer, Reply

HTML = {"Content-Type": "text/html; charset=utf-8"}
SENTENCE = (
    "The model answers in forty languages and was tested by three independent laboratories"
    " before its release to every customer of the service."
)
EDITED = (
    "The model answers in twelve languages for now, and a fourth laboratory is testing it before"
    " its release to every customer of the service."
)
NEVER = 120.0  # seconds a server waits before answering what "never answers"
ARTICLES = ("js", "wall", "slow", "hang", "refused")
STATIC = "".join(
    f"<p>Paragraph {n} of the announcement tells readers what the release holds, who built it,"
    " how it was evaluated and where the technical report and the model card can be found.</p>"
    for n in range(1, 5)
)


def page(title: str, extra: str = "", script: str = "") -> bytes:
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        f"<nav><a href='/'>Home</a> | <a href='/news'>News</a></nav>"
        f"<article><h1>{title}</h1>{STATIC}{extra}</article>{script}"
        "<footer>Site footer</footer></body></html>"
    ).encode()


def article_json(sentence: str) -> Reply:
    body = json.dumps({"title": "Launch", "paragraphs": [sentence]}).encode()
    return Reply(body=body, headers={"Content-Type": "application/json"})


APP_JS = b"""
fetch('/api/article.json')
  .then((answer) => answer.json())
  .then((article) => {
    for (const text of article.paragraphs) {
      const p = document.createElement('p');
      p.textContent = text;
      document.getElementById('more').append(p);
    }
  });
"""


def script_site(
    server: FeedServer, other: FeedServer, third: FeedServer, listed: tuple[str, ...] = ARTICLES
) -> str:
    """Script the pages; returns feeds.toml with the listing source, in browser mode, listing
    the articles `listed`."""
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    cards = "".join(f'<li class="card"><a href="/articles/{n}">{n}</a></li>' for n in listed)
    server.script("news", Reply(body=f"<html><body><ul>{cards}</ul></body></html>".encode()))
    shell = page("Launch", "<div id='more'></div>", "<script src='/static/app.js'></script>")
    server.script("articles/js", Reply(body=shell, headers=HTML))
    server.script("static/app.js", Reply(body=APP_JS, headers={"Content-Type": "text/javascript"}))
    server.script("api/article.json", article_json(SENTENCE), article_json(EDITED))
    wall = (
        b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
        b"<noscript>Enable JavaScript and cookies to continue</noscript>"
        b"<script src='/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1'></script>"
        b"</body></html>"
    )
    server.script(
        "articles/wall",
        Reply(status=403, body=wall, headers={**HTML, "cf-mitigated": "challenge"}),
    )
    never = "<script src='/static/never.js'></script>"
    server.script("articles/slow", Reply(body=page("Slow", script=never), headers=HTML))
    server.script("static/never.js", Reply(body=b"1;", delay=NEVER))
    server.script("articles/hang", Reply(body=page("Hang"), headers=HTML, delay=NEVER))
    other.script("secret", Reply(body=b"the secret"))
    third.script(
        "pixel.png", Reply(body=b"\x89PNG\r\n\x1a\n", headers={"Content-Type": "image/png"})
    )
    asks = (
        f"<img src='{third.url('pixel.png')}' alt=''>"
        f"<script>fetch('{other.url('secret')}').catch(() => 0)</script>"
    )
    server.script("articles/refused", Reply(body=page("Refused", asks), headers=HTML))
    return (
        f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
        'capture = "browser"\nselectors = { item = "li.card", link = "a", title = "a" }\n'
    )
