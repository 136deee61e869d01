"""A paragraph hidden is an edit (issue 47, obs 3): real crawls with captures, on loopback.

A vendor's listing (a source of kind "page") links to one article per page of
tests/capture/hidden_pages.py. The crawl captures each article with PARAGRAPH shown; then each
article hides it (one way of hiding per article: HIDDEN) or wraps it in markup a reader still
sees (SHOWN), and `crovia capture --all` captures them again. Every hidden paragraph makes an
`edited` version whose `crovia diff` shows PARAGRAPH gone and nothing else; every paragraph still
shown is `unchanged` and `crovia diff` says so (exit 0). Every body differs between the two
fetches (a footer's nonce), so no outcome comes from the bytes alone.
"""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest

from tests.capture.hidden_pages import HIDDEN, PARAGRAPH, SHOWN, page
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, crovia, leaves, run_crawl
from tests.feedserver import FeedServer, Reply

pytestmark = pytest.mark.slow
HTML = {"Content-Type": "text/html; charset=utf-8"}
FAST = ["-s", "CROVIA_POLITE_DELAYS=0", "-s", "DOWNLOAD_DELAY=0", "-s", "RETRY_BACKOFF_BASE=0"]
NAMES = [f"hidden-{name}" for name in HIDDEN] + [f"shown-{name}" for name in SHOWN]
_NONCE = itertools.count(1)


def article(markup: str) -> Reply:
    return Reply(body=lambda: page(markup, footer=f"request {next(_NONCE)}"), headers=HTML)


def script_site(server: FeedServer) -> str:
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    cards = "".join(f'<li class="card"><a href="/articles/{n}">{n}</a></li>' for n in NAMES)
    server.script("news", Reply(body=f"<html><body><ul>{cards}</ul></body></html>".encode()))
    for kind, variants in (("hidden", HIDDEN), ("shown", SHOWN)):
        for name, markup in variants.items():
            server.script(f"articles/{kind}-{name}", article("<p>{p}</p>"), article(markup))
    return (
        f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
        'selectors = { item = "li.card", link = "a", title = "a" }\n'
    )


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("hidden")
    with FeedServer() as server:
        crawled = run_crawl(tmp_path, script_site(server))
        assert crawled.returncode == 0, crawled.stderr[-2000:]
        again = subprocess.run(
            [str(BIN / "crovia"), "capture", "--all", *FAST],
            cwd=PROJECT_ROOT,
            env=crawl_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 0, again.stderr[-2000:]
        for name in NAMES:
            bodies = server.sent_bodies(f"articles/{name}")
            assert len(bodies) == 2 and bodies[0] != bodies[1], name
    return tmp_path


def outcomes(tmp_path: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for envelope in leaves(tmp_path):
        if envelope["axiom_type"] == "AX.CAPTURE":
            name = envelope["body"]["url"].rsplit("/", 1)[1]
            found.setdefault(name, []).append(envelope["body"]["outcome"])
    return found


def item_of(tmp_path: Path, name: str) -> str:
    for envelope in leaves(tmp_path):
        link = envelope["body"].get("spider_record", {}).get("url", "")
        if envelope["axiom_type"] == "AX.OBS" and link.endswith(f"/articles/{name}"):
            return envelope["axiom_id"]
    raise AssertionError(name)


def test_a_hidden_paragraph_is_an_edited_version_and_a_shown_one_is_not(captured):
    expected = {f"hidden-{name}": ["first", "edited"] for name in HIDDEN}
    expected |= {f"shown-{name}": ["first", "unchanged"] for name in SHOWN}
    assert outcomes(captured) == expected


@pytest.mark.parametrize("name", list(HIDDEN))
def test_diff_shows_the_hidden_paragraph_gone(captured, name):
    shown = crovia(captured, "diff", item_of(captured, f"hidden-{name}"))
    assert shown.returncode == 1, shown.stdout + shown.stderr
    changed = [
        line
        for line in shown.stdout.splitlines()
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    assert changed == [f"-{PARAGRAPH}"]


def test_diff_of_a_paragraph_still_shown_says_no_change(captured):
    for name in SHOWN:
        same = crovia(captured, "diff", item_of(captured, f"shown-{name}"))
        # One version, captured again unchanged: nothing to compare, exit 3 ("no change" is
        # said of two versions only: issue 43).
        assert same.returncode == 3, (name, same.stdout, same.stderr)
        assert "has one version" in same.stderr and "the newest unchanged" in same.stderr, name
