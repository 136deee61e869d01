"""Bytes no HTTP header may hold, in a captured head, are escaped in the export (issue 47, obs 5).

A server on 127.0.0.1 answers a captured page with headers holding NUL, other controls and DEL
(what a real crawl keeps of them: Twisted turns a bare CR into a space, ends a value at a bare
LF, and refuses a name that is no token, which makes the capture `failed` with that reason). The
export of those captures is read by warcio (`warcio check`, every record parsed) and replayed by
pywb on 127.0.0.1: pywb's answer holds no forbidden byte and Chromium shows the captured page.
The kept head blob, the evidence, is unchanged; the escaped values are in the WARC too.
"""

from __future__ import annotations

import re
import socket
import subprocess
import zipfile
from typing import Any
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from crovia_spider.archive.heads import escape_head, replay_head
from crovia_spider.archive.warc import write_warc
from crovia_spider.exceptions import ExportRefused
from ledger.store import BodyStore
from tests.archive.replay import COLLECTION, in_chromium, wayback
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, leaves, run_crawl
from tests.feedserver import FeedServer, Reply

TITLE = "Headers nobody may send"
PAGE = (
    f"<!doctype html><html><head><meta charset='utf-8'><title>{TITLE}</title></head><body>"
    "<article><h1>Headers</h1><p>" + "A page whose server sent bytes no header may hold. " * 8
).encode() + b"</p></article></body></html>"
# Header values as sent (http.server writes them as they are).
SENT = {
    "X-Nul": "a\x00b",
    "X-Soh": "\x01start",
    "X-Bell": "ring\x07",
    "X-Escape": "\x1b[31mred\x1b[0m",
    "X-Del": "d\x7fe",
    "X-Cr": "a\rb",
    "X-Lf": "a\nb",
    "X-Percent": "50%\x00off",
}
# What the replayed head says of each, and what X-Crovia-Escaped-<Name> keeps (None: nothing
# to escape, because Twisted already took the byte out before the head was kept).
REPLAYED = {
    "X-Nul": ("a b", "a%00b"),
    "X-Soh": ("start", "%01start"),
    "X-Bell": ("ring", "ring%07"),
    "X-Escape": ("[31mred [0m", "%1B[31mred%1B[0m"),
    "X-Del": ("d e", "d%7Fe"),
    "X-Cr": ("a b", None),
    "X-Lf": ("a", None),
    "X-Percent": ("50% off", "50%25%00off"),
}
FORBIDDEN = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")


def test_a_value_holding_forbidden_bytes_is_spaced_and_kept_escaped():
    kept = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Nul: a\x00b\r\nX-Ok: fine\r\n\r\n"
    assert escape_head(kept, "capture record X", "response") == (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Nul: a b\r\nX-Ok: fine\r\n"
        b"X-Crovia-Escaped-X-Nul: a%00b\r\n\r\n"
    )
    assert replay_head(kept, 3, "capture record X").to_str().splitlines() == [
        "HTTP/1.1 200 OK",
        "Content-Type: text/html",
        "X-Nul: a b",
        "X-Ok: fine",
        "X-Crovia-Escaped-X-Nul: a%00b",
        "Content-Length: 3",
    ]


def test_a_name_that_is_no_token_is_escaped_whole_and_not_replayed():
    kept = b"HTTP/1.1 200 OK\r\nX-Na\x01me: v\xc3\xa9\r\nno colon \x00\r\n\r\n"
    assert escape_head(kept, "r", "response") == (
        b"HTTP/1.1 200 OK\r\nX-Crovia-Escaped-Header: X-Na%01me: v%C3%A9\r\n"
        b"X-Crovia-Escaped-Header: no colon %00\r\n\r\n"
    )


def test_a_head_without_forbidden_bytes_is_the_same_bytes():
    kept = b"GET /a?b=%00 HTTP/1.1\r\nHost: x\r\nUser-Agent: caf\xc3\xa9\tbar\r\n\r\n"
    assert escape_head(kept, "r", "request") is kept


@pytest.mark.parametrize("line", [b"HTTP/1.1 200 O\x00K", b"GET /\x00 HTTP/1.1"])
def test_a_status_or_request_line_holding_one_is_refused(line):
    with pytest.raises(ExportRefused, match="capture record X: the kept response line holds"):
        escape_head(line + b"\r\nX: y\r\n\r\n", "capture record X", "response")


def test_a_failure_message_holding_controls_is_one_clean_line(tmp_path):
    envelope = {
        "axiom_id": "axm_" + "cd" * 32,
        "body": {
            "outcome": "failed",
            "url": "https://news.example/x",
            "captured_at": "2026-06-18T05:00:00.000000Z",
            "error": "server said \x00\x1b[2J\nand\tthen \x7f",
        },
    }
    out = tmp_path / "x.warc"
    with open(out, "wb") as stream:
        write_warc(stream, [envelope], None, filename="x.warc", info={"a": "b"}, gzip=False)
    with open(out, "rb") as stream:
        blocks = [r.content_stream().read() for r in ArchiveIterator(stream)]
    block = blocks[-1]
    assert b"error: server said %00%1B[2J and then %7F\r\n" in block


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A real crawl capturing the page (and one whose header name is no token), then both
    exports of its captures."""
    work = tmp_path_factory.mktemp("header-bytes")
    with FeedServer() as server:
        server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        cards = '<li class="card"><a href="/a">A</a></li><li class="card"><a href="/b">B</a></li>'
        server.script("news", Reply(body=f"<ul>{cards}</ul>".encode()))
        html = {"Content-Type": "text/html; charset=utf-8"}
        server.script("a", Reply(body=PAGE, headers={**html, **SENT}))
        server.script("b", Reply(body=PAGE, headers={**html, "X-Na\x01me": "v"}))
        feeds = (
            f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
            'selectors = { item = "li.card", link = "a", title = "a" }\n'
        )
        crawled = run_crawl(work, feeds)
        assert crawled.returncode == 0, crawled.stderr[-2000:]
        base = server.base
    captures = {
        e["body"]["url"].rsplit("/", 1)[1]: e
        for e in leaves(work)
        if e["axiom_type"] == "AX.CAPTURE"
    }
    files = {"warc": work / "captures.warc", "wacz": work / "captures.wacz"}
    for kind, path in files.items():
        done = subprocess.run(
            [str(BIN / "crovia"), "export", "--vendor", "lab", f"--{kind}", str(path)],
            cwd=PROJECT_ROOT, env=crawl_env(work), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    return {"work": work, "captures": captures, "base": base, **files}


@pytest.mark.slow
def test_the_crawl_keeps_the_bytes_and_refuses_a_name_that_is_no_token(exported):
    captured, refused = exported["captures"]["a"]["body"], exported["captures"]["b"]["body"]
    kept = BodyStore(exported["work"] / "ledger").get(captured["response_head_sha256"])
    assert b"X-Nul: a\x00b\r\n" in kept and b"X-Del: d\x7fe\r\n" in kept  # the evidence
    assert refused["outcome"] == "failed" and "InvalidHeaderName" in refused["error"]


@pytest.mark.slow
def test_warcio_reads_every_record_and_no_head_holds_a_forbidden_byte(exported):
    checked = subprocess.run(
        [str(BIN / "warcio"), "check", "-v", str(exported["warc"])],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with open(exported["warc"], "rb") as stream:
        found = list(ArchiveIterator(stream))
        kinds = [record.rec_type for record in found]
    assert sorted(kinds) == ["metadata", "request", "response", "warcinfo"]
    head = next(record for record in found if record.rec_type == "response").http_headers
    for name, (value, escaped) in REPLAYED.items():
        assert head.get_header(name) == value, name
        assert head.get_header(f"X-Crovia-Escaped-{name}") == escaped, name
    with open(exported["warc"], "rb") as stream:
        for record in ArchiveIterator(stream, no_record_parse=True):
            block = record.raw_stream.read()
            if record.rec_type in ("response", "request"):
                assert not FORBIDDEN.search(block.split(b"\r\n\r\n", 1)[0].replace(b"\r\n", b""))


@pytest.mark.slow
def test_pywb_replays_the_page_and_chromium_shows_it(exported, tmp_path):
    with zipfile.ZipFile(exported["wacz"]) as archive:
        assert "crovia/" + exported["captures"]["a"]["axiom_id"] + ".json" in archive.namelist()
    captured_at = exported["captures"]["a"]["body"]["captured_at"]
    stamp = re.sub(r"\D", "", captured_at)[:14]
    page = f"/{COLLECTION}/{stamp}mp_/{exported['base']}/a"
    with wayback(exported["wacz"], tmp_path) as base:
        head, body = _raw_get(base, page)
        title, _ = in_chromium(base, lambda tab: _title(tab, base + page))
    assert head.startswith(b"HTTP/1.1 200 ")
    assert not FORBIDDEN.search(head.replace(b"\r\n", b"")), head
    assert b"X-Crovia-Escaped-X-Nul: a%00b" in head and TITLE.encode() in body
    assert title.endswith(TITLE)  # pywb may prefix "Archived Page: "


def _raw_get(base: str, path: str) -> tuple[bytes, bytes]:
    """pywb's answer as bytes: (the head, the body), nothing parsed away."""
    with socket.create_connection(("127.0.0.1", urlsplit(base).port), timeout=30) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head, body


def _title(tab: Any, url: str) -> str:
    """The replayed page's title in Chromium. Loaded as the top page, pywb's script takes an
    mp_ page into its banner frame, whose title is the replayed page's once that has loaded: the
    title read at once was "" now and then (CI), so it is awaited (a failure if it never comes)."""
    response = tab.goto(url)
    assert response is not None and response.ok
    tab.wait_for_function(f"document.title.endsWith({TITLE!r})", timeout=60_000)
    return tab.title()
