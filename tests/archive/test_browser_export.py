"""A browser capture exported (issue 45): every exchange as WARC request and response records, the
screenshot and the rendered DOM as resource records, `wacz validate` accepts the WACZ, and pywb
replays the page with its script's content: Chromium shows the sentence the page's script fetched,
from the archive, with no request leaving pywb's origin (the vendor's server is gone by then).

One real crawl of tests/capture/browser_site.py's JavaScript article, on loopback.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.archive.replay import COLLECTION, in_chromium, wayback
from tests.capture.browser_site import SENTENCE, script_site
from tests.crawl import BIN, PROJECT_ROOT, leaves, run_crawl
from tests.feedserver import FeedServer
from tests.scratch import bare_env

pytestmark = pytest.mark.slow


@dataclass
class Exported:
    tmp_path: Path
    capture: dict  # the browser capture record of the JavaScript article
    wacz: Path


def run(program: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / program), *map(str, args)],
        cwd=PROJECT_ROOT, env=bare_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Exported:
    tmp_path = tmp_path_factory.mktemp("browser_export")
    with (
        FeedServer() as server,
        FeedServer(host="127.0.0.2") as other,
        FeedServer() as third,
    ):
        feeds = script_site(server, other, third, listed=("js",))
        crawled = run_crawl(tmp_path, feeds, "-s", "CROVIA_BROWSER_SECONDS=10", timeout=300)
        assert crawled.returncode == 0, crawled.stderr[-3000:]
    (capture,) = [
        e for e in leaves(tmp_path) if e["axiom_type"] == "AX.CAPTURE" and e["body"].get("mode")
    ]
    assert capture["body"]["browser"]["verdict"] == "complete"
    wacz = tmp_path / "page.wacz"
    done = run("crovia", "export", capture["axiom_id"], "--wacz", wacz,
               "--ledger-dir", tmp_path / "ledger")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return Exported(tmp_path, capture, wacz)


def records(wacz: Path) -> list[tuple[str, str, bytes]]:
    """(WARC-Type, WARC-Target-URI, content) of every record of the WACZ's WARC."""
    with zipfile.ZipFile(wacz) as archive:
        (name,) = [n for n in archive.namelist() if n.startswith("archive/")]
        with archive.open(name) as stream:
            return [
                (
                    r.rec_type,
                    r.rec_headers.get_header("WARC-Target-URI"),
                    r.content_stream().read(),
                )
                for r in ArchiveIterator(stream)
            ]


def test_every_exchange_is_a_request_and_a_response_and_the_rest_resources(exported):
    found = records(exported.wacz)
    body = exported.capture["body"]
    responses = {
        uri.split("/", 3)[3]: content for kind, uri, content in found if kind == "response"
    }
    assert set(responses) == {"articles/js", "static/app.js", "api/article.json"}
    assert SENTENCE.encode() in responses["api/article.json"]
    requests = sorted(uri.split("/", 3)[3] for kind, uri, _ in found if kind == "request")
    assert requests == ["api/article.json", "articles/js", "static/app.js"]
    resources = {
        uri.split(":", 2)[1]: content for kind, uri, content in found if kind == "resource"
    }
    assert set(resources) == {"crovia", "view", "dom"}
    assert resources["view"].startswith(b"\x89PNG\r\n\x1a\n")
    assert SENTENCE.encode() in resources["dom"]
    manifest = json.loads(resources["crovia"])
    assert len(manifest["exchanges"]) == body["browser"]["requests"] == 3


def test_wacz_validate_accepts_it(exported):
    done = run("wacz", "validate", "-f", exported.wacz)
    assert done.returncode == 0, done.stdout + done.stderr


def test_pywb_replays_the_page_with_its_scripts_content(exported, tmp_path):
    body = exported.capture["body"]
    stamp = "".join(ch for ch in body["captured_at"][:19] if ch.isdigit())
    with wayback(exported.wacz, tmp_path) as base:
        url = f"{base}/{COLLECTION}/{stamp}/{body['url']}"
        shown, elsewhere = in_chromium(base, lambda page: _replayed_text(page, url))
    assert elsewhere == []
    assert SENTENCE in shown


def _replayed_text(page: Any, url: str) -> str:
    """The text of the replayed page's frame once its script filled it in."""
    page.goto(url)
    page.wait_for_function(
        "[...document.querySelectorAll('iframe')].some((f) => f.contentDocument &&"
        " f.contentDocument.body &&"
        f" f.contentDocument.body.innerText.includes({SENTENCE!r}))",
        timeout=60_000,
    )
    (frame,) = [f for f in page.frames if "mp_/" in f.url]
    return frame.inner_text("body")
