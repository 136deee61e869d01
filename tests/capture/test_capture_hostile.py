"""Hostile article pages, captured in one crawl beside good ones (docs/spider.md "Captures").

A listing page (`/news`, a source of kind "page") on 127.0.0.1 links to two good articles and to
a page of each hostile kind: a gzip bomb (about 150 KB on the wire, past the 16 MiB capture cap
inflated), a 64 MiB body (the default cap, CROVIA_CAPTURE_MAX_BYTES = 16 MiB, is kept: the
Content-Length is refused at the head, so the test is fast without a smaller cap), a redirect
loop, a redirect to another server on 127.0.0.1 (an internal address the fetch policy refuses:
a loopback page may be fetched only on a configured source's host and port), a page that never
ends (a dripping server, DOWNLOAD_TIMEOUT=2) and a PDF. Each page gets exactly one capture record
with the outcome it deserves (`failed` naming why, or `first`), every item of the listing is
issued, the crawl exits 0 and the ledger audits clean.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from crovia_spider.capture.text import extractor
from ledger.store import BodyStore
from tests.capture.pages import PARAGRAPHS, article
from tests.crawl import crovia, envelopes, fetch_records, leaves, run_crawl
from tests.feedserver import FeedServer, Reply
from tests.ledger.monitor.test_careful_client import DripServer
from tests.sitefixture import HTML, PAGE_SELECTORS, listing_page
from tests.spider.test_source_kinds_hostile import gzip_bomb

pytestmark = pytest.mark.slow
CAP = 16 * 1024 * 1024  # CROVIA_CAPTURE_MAX_BYTES, left at its default
OVER_CAP = f"body over the capture cap, CROVIA_CAPTURE_MAX_BYTES ({CAP} B): "
HUGE = 64 * 1024 * 1024
TIMEOUT = 2  # DOWNLOAD_TIMEOUT for the never-ending page; every other page answers at once
SETTINGS = ("-s", f"DOWNLOAD_TIMEOUT={TIMEOUT}", "-s", "RETRY_TIMES=1")
SECRET = b"CROVIA-INTERNAL-PAGE-91c2"
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n" + bytes(range(256)) + b"\n%%EOF\n"
GOOD = ("good-1", "good-2")


@dataclass
class Crawl:
    """What the one crawl of this module left: its process, ledger and servers."""

    path: Path
    proc: CompletedProcess[str]
    site: FeedServer
    internal: FeedServer
    links: dict[str, str]  # page name -> the URL the listing links to

    def captures(self, name: str) -> list[dict[str, Any]]:
        """The signed bodies of the capture records of page `name`."""
        url = self.links[name]
        return [
            e["body"]
            for e in leaves(self.path)
            if e["axiom_type"] == "AX.CAPTURE" and e["body"]["url"] == url
        ]


@pytest.fixture(scope="module")
def internal() -> Iterator[FeedServer]:
    """A server inside (another port of 127.0.0.1) that no page may send the crawler to."""
    with FeedServer() as server:
        server.script("secret", Reply(200, b"<html><body><p>%s</p></body></html>" % SECRET, HTML))
        yield server


@pytest.fixture(scope="module")
def drip() -> Iterator[DripServer]:
    drip = DripServer(every=0.2)  # 1,000 bytes would take 200 s
    yield drip
    drip.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, internal, drip) -> Iterator[Crawl]:
    path = tmp_path_factory.mktemp("hostile_pages")
    with FeedServer() as site:
        links = {
            **{name: site.script(f"articles/{name}", article(name, PARAGRAPHS)) for name in GOOD},
            "bomb": site.script(
                "articles/bomb",
                Reply(200, gzip_bomb(), {**HTML, "Content-Encoding": "gzip"}),
            ),
            "huge": site.script("articles/huge", Reply(200, lambda: b"x" * HUGE, HTML)),
            "loop": site.script(
                "articles/loop", Reply(302, headers={"Location": "/articles/loop2"})
            ),
            "internal": site.script(
                "articles/internal", Reply(302, headers={"Location": internal.url("secret")})
            ),
            "endless": drip.base + "/articles/endless",
            "paper.pdf": site.script(
                "articles/paper.pdf", Reply(200, PDF, {"Content-Type": "application/pdf"})
            ),
        }
        site.script("articles/loop2", Reply(302, headers={"Location": "/articles/loop"}))
        site.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        cards = [(url, f"Page {name}", "2026-11-20T10:00:00Z") for name, url in links.items()]
        news = site.script("news", Reply(200, listing_page(cards), HTML))
        selectors = ", ".join(f'{k} = "{v}"' for k, v in PAGE_SELECTORS.items())
        feeds = (
            f'[[feeds]]\nvendor = "lab"\nurl = "{news}"\nkind = "page"\n'
            f"selectors = {{ {selectors} }}\n\n"
            # The dripping server's origin is a configured source's, so its page may be fetched
            # at all; its own feed (and robots.txt) drip and time out too.
            f'[[feeds]]\nvendor = "drip"\nurl = "{drip.base}/feed.xml"\n'
        )
        proc = run_crawl(path, feeds, *SETTINGS)
        yield Crawl(path, proc, site, internal, links)


def only_capture(crawl: Crawl, name: str) -> dict[str, Any]:
    (capture,) = crawl.captures(name)
    return capture


def test_the_crawl_exits_zero_issues_every_item_and_audits_clean(hostile):
    assert hostile.proc.returncode == 0, hostile.proc.stderr[-3000:]
    assert "Traceback" not in hostile.proc.stderr, hostile.proc.stderr[-3000:]
    issued = [e["body"]["spider_record"]["url"] for e in envelopes(hostile.path)]
    assert sorted(issued) == sorted(hostile.links.values())
    (listing,) = [r["body"] for r in fetch_records(hostile.path) if r["body"]["vendor"] == "lab"]
    assert listing["entries"]["count"] == len(hostile.links)
    captured = [e for e in leaves(hostile.path) if e["axiom_type"] == "AX.CAPTURE"]
    assert len(captured) == len(hostile.links)  # one each, hostile or not
    audit = crovia(hostile.path, "audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr


@pytest.mark.parametrize("name", GOOD)
def test_a_good_page_is_captured_first_with_its_text(hostile, name):
    capture = only_capture(hostile, name)
    assert capture["outcome"] == "first" and capture["status"] == 200, capture
    assert "error" not in capture and capture["text"]["extractor"] == extractor()
    text = BodyStore(hostile.path / "ledger").get(capture["text"]["sha256"]).decode()
    assert all(p in text for p in PARAGRAPHS)


def test_a_gzip_bomb_fails_at_the_capture_cap(hostile):
    capture = only_capture(hostile, "bomb")
    assert capture["outcome"] == "failed" and "body_sha256" not in capture, capture
    assert capture["error"].startswith(OVER_CAP), capture["error"]
    assert "during decompression" in capture["error"]
    (sent,) = hostile.site.sent_bodies("articles/bomb")
    assert len(sent) < CAP // 100  # small on the wire


def test_a_body_past_the_capture_cap_fails_naming_the_cap(hostile):
    capture = only_capture(hostile, "huge")
    assert capture["outcome"] == "failed" and "body_sha256" not in capture, capture
    assert capture["error"].startswith(OVER_CAP), capture["error"]
    assert f"Expected to receive {HUGE} bytes" in capture["error"]  # refused at the head


def test_a_redirect_loop_fails_at_the_redirect_limit(hostile):
    capture = only_capture(hostile, "loop")
    assert capture["outcome"] == "failed" and "status" not in capture, capture
    assert capture["error"] == (
        f"redirect limit reached: more than 20 redirects (REDIRECT_MAX_TIMES) from"
        f" {hostile.links['loop']}"
    )
    # Scrapy's limit of 20 hops, the loop's two pages asked turn about
    assert len(hostile.site.requests_for("articles/loop")) == 11
    assert len(hostile.site.requests_for("articles/loop2")) == 10


def test_a_redirect_to_an_internal_address_is_refused_before_it_is_sent(hostile):
    capture = only_capture(hostile, "internal")
    assert capture["outcome"] == "failed" and "status" not in capture, capture
    assert capture["error"] == (
        f"fetch refused: {hostile.internal.url('secret')}: 127.0.0.1 is a loopback address,"
        " not the configured feed's host and port"
    )
    assert hostile.internal.requests == []
    ledger = hostile.path / "ledger"
    assert all(SECRET not in p.read_bytes() for p in ledger.rglob("*") if p.is_file())


def test_a_page_that_never_ends_times_out(hostile):
    capture = only_capture(hostile, "endless")
    assert capture["outcome"] == "failed" and "body_sha256" not in capture, capture
    assert capture["error"] == (
        f"timed out: Getting {hostile.links['endless']} took longer than {TIMEOUT:.1f} seconds."
    )


def test_a_pdf_is_kept_as_bytes_without_text(hostile):
    capture = only_capture(hostile, "paper.pdf")
    assert capture["outcome"] == "first" and capture["status"] == 200, capture
    assert "text" not in capture
    assert capture["error"] == "not an HTML page: kept as bytes, no main text"
    assert capture["headers"]["content_type"] == "application/pdf"
    (sent,) = hostile.site.sent_bodies("articles/paper.pdf")
    assert sent == PDF and capture["body_sha256"] == hashlib.sha256(PDF).hexdigest()
    assert capture["body_length"] == len(PDF)
    assert BodyStore(hostile.path / "ledger").get(capture["body_sha256"]) == PDF
