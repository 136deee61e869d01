"""Browser captures (issue 45): real crawls on loopback, the system Chromium, every byte kept.

One crawl of tests/capture/browser_site.py, then `crovia capture --all` after the article's JSON
changed. Each page is captured plainly and then by the browser, which names the plain capture
as its twin. Held here: the sentence the page's script fetches is in the browser capture's main
text and rendered DOM and not in the plain one's; the screenshot is a PNG of the stated viewport
width, kept under its digest; an edit of the JSON alone is an edited browser version that `crovia
diff` shows; a wall is blocked with its evidence and no version; a script that never answers
makes the page partial, naming it; a page that never loads is failed; requests to another
loopback address or port are refused and listed, and their servers see none; no Chromium of the
crawl is left; `crovia verify` reports the verdict and the twin.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from crovia_spider.capture.browser import png_size
from crovia_spider.capture.chromium import session_processes
from ledger.store import BodyStore
from tests.capture.browser_site import EDITED, SENTENCE, script_site
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, crovia, leaves, run_crawl
from tests.feedserver import FeedServer

pytestmark = pytest.mark.slow
QUICK = [
    "-s", "CROVIA_BROWSER_SECONDS=6", "-s", "DOWNLOAD_TIMEOUT=6", "-s", "RETRY_TIMES=0",
]  # fmt: skip
SESSION = re.compile(r"browser session ([0-9a-f]{16}):")


@dataclass
class Captured:
    tmp_path: Path
    rounds: list[subprocess.CompletedProcess[str]]
    asked_elsewhere: list[str]  # paths the other two servers were asked

    def captures(self, name: str, mode: str = "") -> list[dict[str, Any]]:
        return [
            e
            for e in leaves(self.tmp_path)
            if e["axiom_type"] == "AX.CAPTURE"
            and e["body"]["url"].endswith(f"/articles/{name}")
            and e["body"].get("mode", "") == mode
        ]

    def blob(self, digest: str) -> bytes:
        return BodyStore(self.tmp_path / "ledger").get(digest)  # refuses bytes not the digest's

    def text(self, envelope: dict[str, Any]) -> str:
        return self.blob(envelope["body"]["text"]["sha256"]).decode("utf-8")

    def exchanges(self, envelope: dict[str, Any]) -> list[dict[str, Any]]:
        manifest = json.loads(self.blob(envelope["body"]["browser"]["exchanges_sha256"]))
        return manifest["exchanges"]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Captured:
    tmp_path = tmp_path_factory.mktemp("browser")
    with (
        FeedServer() as server,
        FeedServer(host="127.0.0.2") as other,
        FeedServer() as third,
    ):
        first = run_crawl(tmp_path, script_site(server, other, third), *QUICK, timeout=300)
        assert first.returncode == 0, first.stderr[-3000:]
        again = subprocess.run(
            [str(BIN / "crovia"), "capture", "--all", "-s", "LOG_LEVEL=INFO",
             "-s", "CROVIA_POLITE_DELAYS=0", *QUICK],
            cwd=PROJECT_ROOT, env=crawl_env(tmp_path), capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr[-3000:]
        elsewhere = [r.path for r in other.requests] + [r.path for r in third.requests]
    return Captured(tmp_path, [first, again], elsewhere)


def test_the_sentence_the_script_fetches_is_in_the_browser_capture_only(captured):
    (plain, _), (browser, _) = captured.captures("js"), captured.captures("js", "browser")
    assert SENTENCE not in captured.text(plain)
    assert SENTENCE in captured.text(browser)
    facts = browser["body"]["browser"]
    assert facts["verdict"] == "complete" and "reasons" not in facts
    assert facts["twin"] == plain["axiom_id"]  # the plain capture of the same URL, same run
    assert browser["body"]["outcome"] == "first" and browser["predecessors"] == []
    assert SENTENCE in captured.blob(facts["dom"]["sha256"]).decode("utf-8")
    assert SENTENCE.encode() not in captured.blob(browser["body"]["body_sha256"])  # the shell


def test_the_screenshot_is_a_png_of_the_viewport_width_kept_under_its_digest(captured):
    (browser, _) = captured.captures("js", "browser")
    facts = browser["body"]["browser"]
    png = captured.blob(facts["screenshot"]["sha256"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert png_size(png) == (facts["screenshot"]["width"], facts["screenshot"]["height"])
    assert facts["screenshot"]["width"] == facts["viewport"]["width"] == 1280
    assert facts["software"]["browser"].startswith("Chromium ")


def test_every_request_of_the_page_is_listed_with_its_kept_bytes(captured):
    (browser, _) = captured.captures("js", "browser")
    exchanges = captured.exchanges(browser)
    asked = [e["url"].split("/", 3)[3] for e in exchanges]
    assert asked == ["articles/js", "static/app.js", "api/article.json"]
    assert [e["resource_type"] for e in exchanges] == ["document", "script", "fetch"]
    for exchange in exchanges:
        assert exchange["status"] == 200
        for name in ("body_sha256", "request_head_sha256", "response_head_sha256"):
            captured.blob(exchange[name])  # kept, and the bytes of their digest
    assert SENTENCE.encode() in captured.blob(exchanges[2]["body_sha256"])
    assert exchanges[0]["body_sha256"] == browser["body"]["body_sha256"]
    assert browser["body"]["browser"]["requests"] == 3


def test_an_edit_of_the_json_alone_is_a_new_browser_version_crovia_diff_shows(captured):
    plain = captured.captures("js")
    browser = captured.captures("js", "browser")
    assert [e["body"]["outcome"] for e in plain] == ["first", "unchanged"]  # the shell is the same
    assert [e["body"]["outcome"] for e in browser] == ["first", "edited"]
    assert browser[1]["predecessors"] == [browser[0]["axiom_id"]]  # its own chain
    assert browser[1]["body"]["browser"]["twin"] == plain[1]["axiom_id"]
    shown = crovia(captured.tmp_path, "diff", browser[1]["axiom_id"], "--ledger-dir",
                   str(captured.tmp_path / "ledger"))  # fmt: skip
    assert shown.returncode == 1, shown.stderr
    assert f"-{SENTENCE}" in shown.stdout.splitlines()
    assert f"+{EDITED}" in shown.stdout.splitlines()


def test_a_wall_is_blocked_names_its_evidence_and_starts_no_version(captured):
    for browser in captured.captures("wall", "browser"):
        body = browser["body"]
        assert body["browser"]["verdict"] == "blocked"
        assert body["outcome"] == "failed" and body["status"] == 403
        reasons = body["browser"]["reasons"]
        assert "header cf-mitigated: challenge" in reasons
        assert "title 'Just a moment...'" in reasons
        assert "the page loads Cloudflare's challenge platform" in reasons
        assert "text" not in body  # nothing of the wall is read as the vendor's text


def test_a_script_that_never_answers_makes_the_page_partial_naming_it(captured):
    (browser, _) = captured.captures("slow", "browser")
    facts = browser["body"]["browser"]
    assert facts["verdict"] == "partial"
    assert browser["body"]["outcome"] == "first"  # partial is still a version
    assert any(r.startswith("cut ") and r.endswith("/static/never.js: no answer within the"
               " page's 6 s") for r in facts["reasons"])  # fmt: skip
    (cut,) = [e for e in captured.exchanges(browser) if e.get("cut")]
    assert cut["url"].endswith("/static/never.js") and "status" not in cut


def test_a_page_that_never_loads_is_failed(captured):
    for browser in captured.captures("hang", "browser"):
        body = browser["body"]
        assert body["browser"]["verdict"] == "failed" and body["outcome"] == "failed"
        assert "status" not in body and "screenshot" not in body["browser"]
        assert "timed out" in body["browser"]["reasons"][0]


def test_requests_to_other_addresses_are_refused_listed_and_never_sent(captured):
    assert captured.asked_elsewhere == []  # neither server saw a request
    for browser in captured.captures("refused", "browser"):
        facts = browser["body"]["browser"]
        assert facts["verdict"] == "partial" and facts["refused"] == 2
        refused = {
            e["url"].rsplit("/", 1)[1]: e for e in captured.exchanges(browser) if e.get("refused")
        }
        assert set(refused) == {"secret", "pixel.png"}
        assert "127.0.0.2 is a loopback address" in refused["secret"]["refused"]
        assert "status" not in refused["secret"] and "body_sha256" not in refused["pixel.png"]


def test_no_chromium_of_the_crawl_is_left(captured):
    for done in captured.rounds:
        sessions = SESSION.findall(done.stderr)
        assert sessions, done.stderr[-2000:]
        for token in sessions:
            assert session_processes(token) == []


def test_crovia_verify_reports_the_verdict_and_the_twin(captured):
    (plain, browser) = captured.captures("slow")[0], captured.captures("slow", "browser")[0]
    receipt = captured.tmp_path / "browser.json"
    proved = crovia(captured.tmp_path, "prove", browser["axiom_id"], "--out", str(receipt),
                    "--ledger-dir", str(captured.tmp_path / "ledger"))  # fmt: skip
    assert proved.returncode == 0, proved.stderr
    shown = crovia(captured.tmp_path, "verify", str(receipt), "--any-key")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "browser capture partial" in shown.stdout
    assert f"twin {plain['axiom_id']}" in shown.stdout


def test_crovia_audit_holds_every_blob_of_the_page_to_its_digest(captured, tmp_path):
    ledger = tmp_path / "ledger"
    shutil.copytree(captured.tmp_path / "ledger", ledger)
    whole = crovia(captured.tmp_path, "audit", "--bodies", "--ledger-dir", str(ledger))
    assert whole.returncode == 0, whole.stdout + whole.stderr
    (browser, _) = captured.captures("js", "browser")
    script = captured.exchanges(browser)[1]["body_sha256"]  # kept nowhere else: app.js
    path = BodyStore(ledger).path(script)
    path.write_bytes(gzip.compress(b"document.title = 'swapped';"))
    swapped = crovia(captured.tmp_path, "audit", "--bodies", "--ledger-dir", str(ledger))
    assert swapped.returncode == 1, swapped.stdout + swapped.stderr
    assert f"capture record {browser['axiom_id']} (exchange 1, body_sha256)" in (
        swapped.stdout + swapped.stderr
    )


def test_crovia_history_shows_each_chain_with_its_own_versions(captured):
    """A browser capture is shown as one, and its chain numbers its own versions: the plain
    chain of `js` is first, unchanged (one version); the browser's is first, edited (two)."""
    plain, browser = captured.captures("js"), captured.captures("js", "browser")
    shown = crovia(captured.tmp_path, "history", plain[0]["body"]["item"])
    assert shown.returncode == 0, shown.stderr
    lines = {e["axiom_id"]: "" for e in plain + browser}
    for line in shown.stdout.splitlines():
        for axiom_id in lines:
            if line.rstrip().endswith(axiom_id):
                lines[axiom_id] = " ".join(line.split()[1:-1])
    assert lines[plain[0]["axiom_id"]].startswith("first: version 1, HTTP 200, text ")
    assert lines[plain[1]["axiom_id"]].startswith("unchanged: HTTP 200, text ")
    assert lines[browser[0]["axiom_id"]].startswith(
        "browser capture first: version 1, complete, HTTP 200, text "
    )
    assert lines[browser[1]["axiom_id"]].startswith(
        "browser capture edited: version 2, complete, HTTP 200, text "
    )
