"""Issue 44, change events: a vendor with a feed and a watched usage policy, six real crawls.

The rounds are tests/changes/vendor.py's: a new feed item and an edited sentence in round 2, a bot
wall (403, `cf-mitigated: challenge`) in round 3, 410 Gone in rounds 4 and 5, 200 again in round 6.
`crovia changes --json` must list exactly new, edited, unreachable, removed (at round 5 only, two
captures in a row at least CROVIA_REMOVAL_SPAN apart) and returned, each naming the signed records
that prove it, which are the ledger's own leaves.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.changes.vendor import NEW_SENTENCE, OLD_SENTENCE, POSTS, script_vendor
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, leaves, run_crawl
from tests.feedserver import FeedServer

pytestmark = pytest.mark.slow
RULE = {"CROVIA_REMOVAL_SPAN": "1s", "CROVIA_REMOVAL_CAPTURES": "2"}
EXPECTED = ["new", "edited", "unreachable", "removed", "returned"]


def crovia(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "crovia"), *args],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path, **{**RULE, **env}),
        capture_output=True,
        text=True,
        timeout=120,
    )


def changes(tmp_path: Path, *args: str) -> list[dict]:
    shown = crovia(tmp_path, "changes", "--json", *args)
    assert shown.returncode == 0, shown.stderr[-2000:]
    return json.loads(shown.stdout)["events"]


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp_path = tmp_path_factory.mktemp("six")
    seen: dict = {"tmp": tmp_path, "after": {}}
    with FeedServer() as server:
        feeds = script_vendor(server)
        for number in range(1, 7):
            crawled = run_crawl(tmp_path, feeds)
            assert crawled.returncode == 0, crawled.stderr[-3000:]
            seen["after"][number] = [e["kind"] for e in changes(tmp_path)]
        seen["requests"] = len(server.requests_for("policies/usage"))
        seen["url"] = server.url("policies/usage")
        seen["base"] = server.base
    return seen


def captures(tmp_path: Path) -> list[tuple[int, dict]]:
    return [(n, e) for n, e in enumerate(leaves(tmp_path)) if e["axiom_type"] == "AX.CAPTURE"]


def test_exactly_the_scripted_changes_round_by_round(rounds):
    after = rounds["after"]
    assert after[1] == []
    assert after[2] == ["new", "edited"]
    assert after[3] == ["new", "edited", "unreachable"]
    assert after[4] == after[3]  # one 410 is no removal
    assert after[5] == EXPECTED[:4]
    assert after[6] == EXPECTED
    assert rounds["requests"] == 6  # the watched page was captured at every crawl (every = 1s)


def test_each_event_names_the_records_that_prove_it(rounds):
    tmp_path = rounds["tmp"]
    by_leaf = dict(enumerate(leaves(tmp_path)))
    shots = captures(tmp_path)
    assert [e["body"]["status"] for _, e in shots] == [200, 200, 403, 410, 410, 200]
    events = {e["kind"]: e for e in changes(tmp_path)}
    for event in events.values():
        for ref in event["records"]:
            assert by_leaf[ref["leaf_index"]]["axiom_id"] == ref["axiom_id"]
        assert event["leaf_index"] == event["records"][-1]["leaf_index"]
        assert event["id"].startswith("chg_")
    c1, c2, c3, c4, c5, c6 = (envelope for _, envelope in shots)

    edited = events["edited"]
    assert [r["axiom_id"] for r in edited["records"]] == [c1["axiom_id"], c2["axiom_id"]]
    assert edited["after"]["axiom_id"] == c1["axiom_id"]
    assert edited["removed_text"] == [OLD_SENTENCE] and edited["added_text"] == [NEW_SENTENCE]
    assert f"-{OLD_SENTENCE}\n+{NEW_SENTENCE}\n" in edited["diff"]
    assert edited["url"] == rounds["url"] and edited["vendor"] == "lab_policies"

    wall = events["unreachable"]
    assert [r["axiom_id"] for r in wall["records"]] == [c3["axiom_id"]]
    assert wall["after"]["axiom_id"] == c2["axiom_id"]
    assert "cf-mitigated: challenge" in wall["detail"]
    # A wall is never a version: the next text is judged against round 2's.
    assert c3["body"]["outcome"] == "failed" and c6["body"]["outcome"] == "unchanged"

    removed = events["removed"]
    ids = [r["axiom_id"] for r in removed["records"]]
    assert ids == [c2["axiom_id"], c4["axiom_id"], c5["axiom_id"]]
    assert removed["at"] == c5["body"]["captured_at"][:19] + "Z"
    assert "HTTP 410 at 2 captures in a row" in removed["detail"]

    back = events["returned"]
    assert [r["axiom_id"] for r in back["records"]] == [c5["axiom_id"], c6["axiom_id"]]

    new = events["new"]
    assert new["title"] == POSTS[1][1] and new["vendor"] == "lab"
    fetches = [e for e in by_leaf.values() if e["axiom_type"] == "AX.FETCH"]
    assert [r["role"] for r in new["records"]] == ["fetch", "fetch", "item"]
    assert new["records"][0]["axiom_id"] == fetches[0]["axiom_id"]
    assert new["records"][1]["axiom_id"] == fetches[1]["axiom_id"]
    assert by_leaf[new["records"][2]["leaf_index"]]["body"]["title"] == POSTS[1][1]


def test_the_watched_page_is_an_item_observed_once(rounds):
    tmp_path = rounds["tmp"]
    watched = [
        e
        for e in leaves(tmp_path)
        if e["axiom_type"] == "AX.OBS" and e["body"]["vendor"] == "lab_policies"
    ]
    assert len(watched) == 1
    record = watched[0]["body"]["spider_record"]
    assert record["url"] == record["source_url"] == rounds["url"]
    assert record["source_status"] == 0  # nothing was fetched to observe it
    assert "fetch" not in watched[0]["object"]
    runs = [
        json.loads(line) for line in (tmp_path / "ledger" / "runs.jsonl").read_text().splitlines()
    ]
    assert [f["vendor"] for f in runs[0]["feeds"]] == ["lab"]  # no fetch claimed for it
    assert runs[0]["watched"][0]["new"] == 1 and runs[1]["watched"][0]["duplicate"] == 1


def test_filters_and_the_text_form(rounds):
    tmp_path = rounds["tmp"]
    assert [e["kind"] for e in changes(tmp_path, "--vendor", "lab")] == ["new"]
    assert [e["kind"] for e in changes(tmp_path, "--kind", "removed")] == ["removed"]
    all_events = changes(tmp_path)
    late = changes(tmp_path, "--since", all_events[3]["at"])
    assert [e["kind"] for e in late] == EXPECTED[3:]
    shown = crovia(tmp_path, "changes")
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    assert [line.split()[1] for line in lines if not line.startswith(" ")] == EXPECTED
    assert f"    | -{OLD_SENTENCE}" in lines and f"    | +{NEW_SENTENCE}" in lines
    assert sum(1 for line in lines if line.startswith("    between ")) == 5
    # The default rule (1 hour) proves no removal from two captures seconds apart.
    strict = crovia(tmp_path, "changes", "--json", CROVIA_REMOVAL_SPAN="1h")
    kinds = [e["kind"] for e in json.loads(strict.stdout)["events"]]
    assert "removed" not in kinds and "returned" not in kinds


def test_a_watched_page_waits_for_its_interval(tmp_path):
    with FeedServer() as server:
        feeds = script_vendor(server, every="1h")
        for _ in range(2):
            crawled = run_crawl(tmp_path, feeds)
            assert crawled.returncode == 0, crawled.stderr[-3000:]
        assert len(server.requests_for("policies/usage")) == 1
        assert len(server.requests_for("feed.xml")) == 2


@pytest.fixture(scope="module")
def published(rounds) -> Path:
    out = rounds["tmp"] / "site"
    done = crovia(rounds["tmp"], "publish", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def test_publish_writes_an_atom_feed_feedparser_reads(rounds, published):
    import feedparser

    parsed = feedparser.parse((published / "changes.atom").read_bytes())
    assert not parsed.bozo, parsed.bozo_exception
    events = changes(rounds["tmp"])
    entries = parsed.entries
    assert [e.tags[0].term for e in entries] == EXPECTED[::-1]  # newest first
    for entry, event in zip(entries, events[::-1], strict=True):
        assert entry.id == f"urn:crovia:change:{event['id']}"
        assert entry.link == event["url"]
        related = [link.href for link in entry.links if link.rel == "related"]
        assert [f"v/{r['axiom_id']}" for r in event["records"]] == related[: len(event["records"])]
        assert entry.updated.startswith(event["at"][:19])
    edited = entries[EXPECTED[::-1].index("edited")]
    content = edited.content[0]
    assert content.type == "text/plain"
    assert f"-{OLD_SENTENCE}" in content.value and f"+{NEW_SENTENCE}" in content.value
    # The page's <title> holds markup: it is text in the feed, escaped by the writer.
    assert "Usage <b>policies</b> & <script>alert(1)</script>" in edited.title
    assert b"<script>" not in (published / "changes.atom").read_bytes()


def test_publish_writes_a_json_feed_our_reader_reads(rounds, published):
    from crovia_spider.feed.jsonfeed import parse_jsonfeed

    body = (published / "changes.json").read_bytes()
    parsed = parse_jsonfeed(body, {"content-location": "http://127.0.0.1/changes.json"})
    assert not parsed.failed and parsed.malformed_entries == 0
    events = changes(rounds["tmp"])
    assert [e["id"] for e in parsed.entries] == [e["id"] for e in events[::-1]]
    assert [e["link"] for e in parsed.entries] == [e["url"] for e in events[::-1]]
    size = int((published / "checkpoint").read_text().splitlines()[1])
    for item, event in zip(json.loads(body)["items"], events[::-1], strict=True):
        crovia_part = item["_crovia"]
        assert crovia_part["kind"] == event["kind"]
        assert crovia_part["axiom_ids"] == [r["axiom_id"] for r in event["records"]]
        assert crovia_part["leaf_indexes"] == [r["leaf_index"] for r in event["records"]]
        assert crovia_part["checkpoint_size"] == size
        assert max(crovia_part["leaf_indexes"]) < size
        for axiom_id in crovia_part["axiom_ids"]:  # every record's receipt is published
            assert (published / "receipts" / f"{axiom_id}.json").is_file()


def test_the_edit_page_shows_both_sentences_as_text_in_chromium(rounds, published):
    from playwright.sync_api import sync_playwright

    from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

    (edited,) = [e for e in changes(rounds["tmp"]) if e["kind"] == "edited"]
    page_file = published / "changes" / f"{edited['id']}.html"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = chromium.new_page()
            page.goto(page_file.as_uri())
            text = page.inner_text("body")
            title = page.title()
            scripts = page.eval_on_selector_all("script, b", "nodes => nodes.length")
        finally:
            chromium.close()
    assert OLD_SENTENCE in text and NEW_SENTENCE in text
    markup = "Usage <b>policies</b> & <script>alert(1)</script>"
    assert markup in title and markup in text
    assert scripts == 0  # the title's markup is text, not elements
