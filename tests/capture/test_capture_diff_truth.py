"""`crovia diff` tells the truth about takedowns (issue 43, obs 2), against three capture rounds
of a site on 127.0.0.1 (a crawl, then `crovia capture --all` twice):

- `taken`: the same article twice, then 410 Gone. diff said "no change in the main text" and
  exited 0, comparing the one version with itself: cron read it as nothing happened. Now exit 1,
  "removed since", naming the capture that saw it.
- `never`: 404 from the first capture. It was signed "removed", a page never seen there. Now its
  captures are "failed", and diff says it was never seen there (exit 3).
- `one`: the same article three times: one version, nothing to compare (exit 3), never "no
  change", which is said of two versions only.
- `soft`: the article, then the same URL answering a menu alone (a soft takedown): exit 1, "no
  main text since", naming the capture.
- `back`: the article, 410, the article again: exit 1, the removal and the return each named.
- an item of a feed without captures: nothing to compare, exit 3 (docs said 2): one table,
  docs/spider.md "Captures", held here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.capture.pages import HTML, PARAGRAPHS, article
from tests.crawl import BIN, PROJECT_ROOT, crovia, leaves, run_crawl
from tests.feedserver import FeedServer, Reply
from tests.scratch import FAST
from tests.spider.feedtext import item, rss

pytestmark = pytest.mark.slow
NAMES = ("taken", "never", "one", "soft", "back")
GONE = Reply(status=410, body=b"<html><body><p>Gone</p></body></html>", headers=HTML)
MISSING = Reply(status=404, body=b"<html><body><p>Not found</p></body></html>", headers=HTML)
MENU_ONLY = Reply(
    body=b"<!doctype html><html><body><nav><a href='/'>Home</a> <a href='/news'>News</a>"
    b" <a href='/about'>About</a></nav><footer><a href='/terms'>Terms</a></footer></body></html>",
    headers=HTML,
)


def script_site(server: FeedServer) -> str:
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    cards = "".join(f'<li class="card"><a href="/a/{n}">{n}</a></li>' for n in NAMES)
    server.script(
        "news", Reply(body=f"<html><body><ul>{cards}</ul></body></html>".encode(), headers=HTML)
    )
    text = article("Post", PARAGRAPHS)
    server.script("a/taken", text, text, GONE)
    server.script("a/never", MISSING)
    server.script("a/one", text)
    server.script("a/soft", text, MENU_ONLY)
    server.script("a/back", text, GONE, text)
    wire = rss(item("Wire story", "https://wire.example.org/story"))
    server.script("wire.xml", Reply(body=wire, headers={"Content-Type": "application/rss+xml"}))
    return (
        f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
        'selectors = { item = "li.card", link = "a", title = "a" }\n\n'
        f'[[feeds]]\nvendor = "wire"\nurl = "{server.url("wire.xml")}"\n'
    )


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("takedowns")
    with FeedServer() as server:
        crawled = run_crawl(tmp_path, script_site(server))
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        for _ in range(2):
            done = crovia(tmp_path, "capture", "--all", *FAST)
            assert done.returncode == 0, done.stderr[-3000:]
    return tmp_path


def chain(tmp_path: Path, name: str) -> list[dict]:
    return [
        {**e["body"], "axiom_id": e["axiom_id"]}
        for e in leaves(tmp_path)
        if e["axiom_type"] == "AX.CAPTURE" and e["body"]["url"].endswith(f"/a/{name}")
    ]


def item_of(tmp_path: Path, link_end: str) -> str:
    for envelope in leaves(tmp_path):
        link = envelope["body"].get("spider_record", {}).get("url", "")
        if envelope["axiom_type"] == "AX.OBS" and link.endswith(link_end):
            return envelope["axiom_id"]
    raise AssertionError(link_end)


def test_a_removal_after_the_last_version_is_reported(rounds):
    captures = chain(rounds, "taken")
    assert [c["outcome"] for c in captures] == ["first", "unchanged", "removed"]
    shown = crovia(rounds, "diff", item_of(rounds, "/a/taken"))
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert "no change in the main text" not in shown.stdout
    assert (
        f"removed since: HTTP 410 at {captures[2]['captured_at']}, seen by capture" in shown.stdout
    )
    assert captures[2]["axiom_id"] in shown.stdout
    as_json = json.loads(crovia(rounds, "diff", item_of(rounds, "/a/taken"), "--json").stdout)
    assert as_json["exit_code"] == 1
    assert [(e["what"], e["axiom_id"]) for e in as_json["after"]] == [
        ("removed", captures[2]["axiom_id"])
    ]


def test_a_page_never_seen_there_is_never_removed(rounds):
    captures = chain(rounds, "never")
    assert [c["outcome"] for c in captures] == ["failed"] * 3
    assert all(c["status"] == 404 for c in captures)
    shown = crovia(rounds, "diff", item_of(rounds, "/a/never"))
    assert shown.returncode == 3, shown.stdout + shown.stderr
    assert "was never seen there" in shown.stderr and "removed since" not in shown.stdout
    history = crovia(rounds, "history", item_of(rounds, "/a/never")).stdout
    assert "removed" not in history and history.count("failed: HTTP 404") == 3


def test_one_version_is_nothing_to_compare_not_no_change(rounds):
    shown = crovia(rounds, "diff", item_of(rounds, "/a/one"))
    assert shown.returncode == 3, shown.stdout + shown.stderr
    assert (
        "has one version" in shown.stderr
        and "2 captures since, the newest unchanged" in shown.stderr
    )
    assert "no change" not in shown.stdout + shown.stderr


def test_a_page_answering_without_its_article_is_reported(rounds):
    captures = chain(rounds, "soft")
    assert [c["outcome"] for c in captures] == ["first", "failed", "failed"]
    shown = crovia(rounds, "diff", item_of(rounds, "/a/soft"))
    assert shown.returncode == 1, shown.stdout + shown.stderr
    lines = [line for line in shown.stdout.splitlines() if line.startswith("no main text since")]
    assert len(lines) == 2 and captures[1]["axiom_id"] in lines[0], shown.stdout


def test_a_removal_and_the_return_are_each_named(rounds):
    captures = chain(rounds, "back")
    assert [c["outcome"] for c in captures] == ["first", "removed", "unchanged"]
    shown = crovia(rounds, "diff", item_of(rounds, "/a/back"))
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert f"removed since: HTTP 410 at {captures[1]['captured_at']}" in shown.stdout
    assert f"there again: HTTP 200 at {captures[2]['captured_at']}" in shown.stdout
    # Up to a time before the removal, there is nothing to report.
    before = crovia(rounds, "diff", item_of(rounds, "/a/back"), "--to", captures[0]["captured_at"])
    assert before.returncode == 0 and "version" in before.stdout and "removed" not in before.stdout


def test_an_item_without_captures_is_nothing_to_compare(rounds):
    shown = crovia(rounds, "diff", item_of(rounds, "wire.example.org/story"))
    assert shown.returncode == 3, shown.stdout + shown.stderr
    assert "was never captured (its source captures no page" in shown.stderr
    # A usage error stays 2: neither an item nor a capture record.
    fetch = next(e for e in leaves(rounds) if e["axiom_type"] == "AX.FETCH")["axiom_id"]
    assert crovia(rounds, "diff", fetch).returncode == 2


def test_the_documented_exit_table_is_the_one_diff_follows():
    """docs/spider.md holds one exit table for crovia diff; `--help` and the module say the same
    four codes."""
    doc = (PROJECT_ROOT / "docs" / "spider.md").read_text()
    table = doc[doc.index("| exit | `crovia diff` found |") :].split("\n\n", 1)[0]
    rows = [line.split("|")[1].strip() for line in table.splitlines()[2:]]
    assert rows == ["0", "1", "2", "3"]
    assert "removed" in table.splitlines()[3] and "never captured" in table.splitlines()[5]
    helped = subprocess.run(
        [str(BIN / "crovia"), "diff", "--help"], capture_output=True, text=True, check=True
    ).stdout
    flat = " ".join(helped.split())
    for said in ("Exit 0 the same", "1 a difference", "2 usage error", "3 nothing to compare"):
        assert said in flat, flat
