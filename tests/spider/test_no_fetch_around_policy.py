"""Nothing fetches around the fetch policy (docs/spider.md, 9, "Cookies").

Every fixture kind on 127.0.0.1, every reply with a Set-Cookie: an RSS feed, an RSS 1.0 (RDF)
feed, an Atom feed, a JSON Feed, a sitemap walk (robots.txt, an index, two gzipped sitemaps), an
HTML listing page, and the capture of each news page; then `crovia capture --all`. The crawl and
every Python process it starts run under a trap for DNS and connections (tests/nettrap): any name
lookup but of 127.0.0.1 and any connection or datagram to an address not loopback is refused and
logged. None may be tried. With Scrapy's CookiesMiddleware on, the first Set-Cookie made
tldextract fetch the Public Suffix List from publicsuffix.org, then raw.githubusercontent.com, in
the middle of the crawl, outside the policy, robots.txt and politeness; cookies are now off.
The site's cookies are also never sent back: no request of ours carries the server's state.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.crawl import (
    BIN,
    FAST_SETTINGS,
    PROJECT_ROOT,
    crawl_env,
    envelopes,
    fetch_records,
    leaves,
    run_crawl,
)
from tests.feedserver import FeedServer, Reply
from tests.sitefixture import NEWS_PATHS, PAGE_SELECTORS, vendor_site

TRAP = PROJECT_ROOT / "tests" / "nettrap"
FEEDS = PROJECT_ROOT / "tests" / "fixtures" / "feeds"
COOKIE = "crovia_trap=1; Path=/; Max-Age=3600"
FILES = {
    "rss.xml": ("openai_news_rss_prefix.xml", "application/rss+xml"),
    "rdf.rdf": ("arxiv_hep-ex_rss1_rdf_2018-05-23_RECONSTRUCTED_trim3.rdf", "application/rdf+xml"),
    "atom.atom": ("mistral_client_python_github_releases_prefix.atom", "application/atom+xml"),
}


def article(title: str) -> Reply:
    text = " ".join([f"{title}: what the lab announced, in enough words to be main text."] * 5)
    body = f"<!doctype html><html><head><title>{title}</title></head><body><article>"
    body += f"<h1>{title}</h1><p>{text}</p></article></body></html>"
    return Reply(body=body.encode(), headers={"Content-Type": "text/html; charset=utf-8"})


def feeds_toml(server: FeedServer, urls: dict[str, str]) -> str:
    selectors = ", ".join(f"{k} = {json.dumps(v)}" for k, v in PAGE_SELECTORS.items())
    tables = [
        f'vendor = "lab_rss"\nurl = "{server.url("rss.xml")}"',
        f'vendor = "lab_rdf"\nurl = "{server.url("rdf.rdf")}"',
        f'vendor = "lab_atom"\nurl = "{server.url("atom.atom")}"',
        f'vendor = "lab_blog"\nurl = "{urls["blog/atom.xml"]}"',
        f'vendor = "lab_notes"\nurl = "{urls["feed.json"]}"\nkind = "jsonfeed"',
        f'vendor = "lab"\nurl = "{urls["robots.txt"]}"\nkind = "sitemap"\ninclude = ["/news/"]',
        f'vendor = "lab_news"\nurl = "{urls["news"]}"\nkind = "page"\n'
        f"selectors = {{ {selectors} }}",
    ]
    return "\n".join(f"[[feeds]]\n{table}\n" for table in tables)


def trapped_env(tmp_path: Path, log: Path) -> dict[str, str]:
    env = crawl_env(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TRAP), env.get("PYTHONPATH", "")) if p)
    env["CROVIA_NET_TRAP_LOG"] = str(log)
    # A first run on a fresh machine: no Public Suffix List cached by an earlier run.
    env["TLDEXTRACT_CACHE"] = str(tmp_path / "tldextract-cache")
    return env


@pytest.fixture(scope="module")
def trapped(tmp_path_factory):
    """(tmp dir, crawl, capture --all, trap log lines, server requests)."""
    tmp_path = tmp_path_factory.mktemp("nettrap")
    log = tmp_path / "trap.jsonl"
    with FeedServer() as server:
        urls = vendor_site(server)
        for path, (name, kind) in FILES.items():
            server.script(
                path, Reply(body=(FEEDS / name).read_bytes(), headers={"Content-Type": kind})
            )
        for path in NEWS_PATHS:
            server.script(path, article(path.rsplit("/", 1)[1]))
        for replies in server.scripts.values():
            for reply in replies:  # a copy: sitefixture's header dicts are shared constants
                reply.headers = {**reply.headers, "Set-Cookie": COOKIE}
        env = trapped_env(tmp_path, log)
        crawl = run_crawl(tmp_path, feeds_toml(server, urls), env=env)
        capture = subprocess.run(
            [str(BIN / "crovia"), "capture", "--all", *FAST_SETTINGS],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = list(server.requests)
        port = server.base.rsplit(":", 1)[1]
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return tmp_path, crawl, capture, lines, requests, port


def test_every_kind_was_crawled_and_captured(trapped):
    tmp_path, crawl, capture, *_ = trapped
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    assert capture.returncode == 0, capture.stderr[-3000:]
    kinds = {"lab_rss", "lab_rdf", "lab_atom", "lab_blog", "lab_notes", "lab", "lab_news"}
    assert {env["body"]["vendor"] for env in envelopes(tmp_path)} == kinds
    outcomes = {
        record["body"]["vendor"]: record["body"]["outcome"] for record in fetch_records(tmp_path)
    }
    assert outcomes == dict.fromkeys(kinds, "new_body")
    pages = [env["body"] for env in leaves(tmp_path) if env["axiom_type"] == "AX.CAPTURE"]
    news = [page for page in pages if page["url"].endswith(NEWS_PATHS)]
    # captured by the crawl (a sitemap and a page source each), and again by capture --all
    assert news and all(page.get("status") == 200 for page in news), news


def test_the_trap_was_live_in_the_crawl(trapped):
    *_, lines, _, port = trapped
    assert any(line == {**line, "verdict": "ok", "target": f"127.0.0.1:{port}"} for line in lines)


def test_no_lookup_or_connection_the_policy_did_not_pass(trapped):
    *_, lines, _, _ = trapped
    refused = [line for line in lines if line["verdict"] != "ok"]
    assert refused == []


def test_the_sites_cookies_are_never_sent_back(trapped):
    *_, requests, _ = trapped
    assert len(requests) > 10
    assert [r.path for r in requests if "cookie" in r.headers] == []


def test_no_setting_puts_the_cookie_jar_back():
    """`-s COOKIES_ENABLED=1` (or a cluster job's settings) cannot turn the lookup back on: Scrapy's
    CookiesMiddleware is out of the chain, not only disabled."""
    from scrapy.settings import Settings
    from scrapy.utils.conf import build_component_list

    settings = Settings()
    settings.setmodule("crovia_spider.settings", priority="project")
    settings.set("COOKIES_ENABLED", True, priority="cmdline")
    chain = build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES"))
    assert "crovia_spider.fetching.middlewares.RobotsTxtMiddleware" in chain
    assert [name for name in chain if "ookie" in str(name)] == []
