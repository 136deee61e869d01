"""A vendor's site with no feed, as tests serve it on 127.0.0.1 (tests/feedserver.py).

`vendor_site(server)` scripts the paths of one site on the server and returns their URLs:

- /robots.txt names the sitemap index /sitemap_index.xml;
- the index names two gzipped sitemaps: /sitemaps/pages.xml.gz (the whole site: two news pages,
  the about page, a careers page, a tag page; each with lastmod) and /sitemaps/news.xml.gz (a
  news sitemap: one more news page, with its news:title and news:publication_date);
- /news is the HTML listing page of the three news pages (cards of a link, a title, a date);
- /feed.json is a JSON Feed 1.1 of two items (a vendor that publishes one);
- /blog is an HTML page whose `<link rel="alternate">` names the Atom feed /blog/atom.xml.

`include = ["/news/"]` and `exclude = ["/tag/"]` pick exactly NEWS_PATHS out of the sitemaps.
`lastmod` (a path's lastmod, default LASTMOD) lets a test change one page's lastmod.
"""

from __future__ import annotations

import gzip
import json

from tests.feedserver import FeedServer, Reply

LASTMOD = "2026-11-20T10:00:00+00:00"
NEWS_PATHS = ("/news/claude-5", "/news/safety-report", "/news/interpretability")
SITE_PATHS = ("/about", "/careers/engineer", "/tag/ai")
NEWS_TITLE = "Interpretability, a year on"
PAGE_SELECTORS = {
    "item": "article.card",
    "link": "a",
    "title": "h3",
    "date": "time::attr(datetime)",
}
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"


def urlset(base: str, paths: dict[str, str]) -> bytes:
    """A sitemap of `paths` (path -> lastmod) on `base`."""
    rows = "".join(
        f"<url><loc>{base}{path}</loc><lastmod>{lastmod}</lastmod></url>"
        for path, lastmod in paths.items()
    )
    head = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAP_NS}">'
    return f"{head}{rows}</urlset>".encode()


def news_sitemap(base: str, path: str, title: str, published: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:news="{NEWS_NS}">'
        f"<url><loc>{base}{path}</loc><news:news><news:publication><news:name>Lab</news:name>"
        "<news:language>en</news:language></news:publication>"
        f"<news:publication_date>{published}</news:publication_date>"
        f"<news:title>{title}</news:title></news:news></url></urlset>"
    ).encode()


def sitemap_index(base: str, paths: list[str]) -> bytes:
    rows = "".join(f"<sitemap><loc>{base}{path}</loc></sitemap>" for path in paths)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="{SITEMAP_NS}">{rows}'
        "</sitemapindex>"
    ).encode()


def listing_page(cards: list[tuple[str, str, str]]) -> bytes:
    """A news listing: one card per (href, title, datetime), relative links, a base that lies."""
    body = "".join(
        f'<article class="card"><a href="{href}"><h3>{title}</h3></a>'
        f'<time datetime="{date}">{date[:10]}</time></article>'
        for href, title, date in cards
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>News</title>'
        f'<base href="https://elsewhere.example/"></head><body><main>{body}</main></body></html>'
    ).encode()


GZIP = {"Content-Type": "application/x-gzip"}
XML = {"Content-Type": "application/xml"}
HTML = {"Content-Type": "text/html; charset=utf-8"}


def vendor_site(server: FeedServer, lastmod: dict[str, str] | None = None) -> dict[str, str]:
    """Script the site on `server` (see the module docstring); returns {name: URL}."""
    base = server.base
    dates = {path: (lastmod or {}).get(path, LASTMOD) for path in (*NEWS_PATHS[:2], *SITE_PATHS)}
    pages = gzip.compress(urlset(base, dates), mtime=0)
    news = gzip.compress(
        news_sitemap(base, NEWS_PATHS[2], NEWS_TITLE, "2026-11-21T09:00:00+00:00"), mtime=0
    )
    index = sitemap_index(base, ["/sitemaps/pages.xml.gz", "/sitemaps/news.xml.gz"])
    robots = f"User-agent: *\nAllow: /\n\nSitemap: {base}/sitemap_index.xml\n".encode()
    cards = [
        (NEWS_PATHS[0], "Claude 5", "2026-11-20T10:00:00Z"),
        (NEWS_PATHS[1], "Safety report", "2026-11-19T10:00:00Z"),
        (NEWS_PATHS[2], NEWS_TITLE, "2026-11-21T09:00:00Z"),
    ]
    feed = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "Lab notes",
        "home_page_url": base + "/notes",
        "feed_url": base + "/feed.json",
        "items": [
            {"id": "n1", "url": base + "/notes/1", "title": "Note one",
             "date_published": "2026-11-01T00:00:00Z", "content_text": "One."},
            {"id": "n2", "url": base + "/notes/2", "title": "Note two",
             "date_published": "2026-11-02T00:00:00Z", "content_html": "<p>Two.</p>"},
        ],
    }  # fmt: skip
    atom = (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>Lab blog</title><id>{base}/blog</id><updated>2026-11-01T00:00:00Z</updated>"
        f'<entry><title>Blog post</title><id>{base}/blog/1</id><link href="{base}/blog/1"/>'
        "<updated>2026-11-01T00:00:00Z</updated><summary>Post.</summary></entry></feed>"
    ).encode()
    blog = (
        b'<!doctype html><html><head><title>Blog</title><link rel="alternate"'
        b' type="application/atom+xml" title="Lab blog" href="/blog/atom.xml"></head>'
        b"<body><p>Posts</p></body></html>"
    )
    scripted = {
        "robots.txt": Reply(body=robots, headers={"Content-Type": "text/plain"}),
        "sitemap_index.xml": Reply(body=index, headers=XML),
        "sitemaps/pages.xml.gz": Reply(body=pages, headers=GZIP),
        "sitemaps/news.xml.gz": Reply(body=news, headers=GZIP),
        "news": Reply(body=listing_page(cards), headers=HTML),
        "feed.json": Reply(
            body=json.dumps(feed).encode(), headers={"Content-Type": "application/feed+json"}
        ),
        "blog": Reply(body=blog, headers=HTML),
        "blog/atom.xml": Reply(body=atom, headers={"Content-Type": "application/atom+xml"}),
    }
    return {path: server.script(path, reply) for path, reply in scripted.items()}
