"""Five capture rounds of a vendor site whose pages change (tests/capture/pages.py).

Round 1 is a crawl (its three new items' pages captured after the feed), rounds 2 to 5 are
`crovia capture --all` from cron. Each page's records, `crovia history` and `crovia diff` must give
exactly the versions, the removal and the move the site scripted; the footer that changes on
every fetch is never a version. Every record verifies pinned, and a changed byte in a kept page
makes `crovia audit` exit 1 naming the body and the record.
"""

from __future__ import annotations

import gzip
import itertools
import json
import subprocess
from pathlib import Path

import pytest

from ledger.store import BodyStore
from tests.capture.pages import EDIT, PARAGRAPHS, script_site
from tests.crawl import crovia, leaves, run_crawl
from tests.feedserver import FeedServer
from tests.scratch import FAST

pytestmark = pytest.mark.slow
EXPECTED = {
    "edited": ["first", "unchanged", "edited", "unchanged", "unchanged"],
    "gone": ["first", "unchanged", "removed", "removed", "removed"],
    "moving": ["first", "unchanged", "moved", "unchanged", "unchanged"],
}


def capture_round(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return crovia(tmp_path, "capture", "--all", *FAST, *extra)


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FeedServer]:
    tmp_path = tmp_path_factory.mktemp("rounds")
    with FeedServer() as server:
        feeds = script_site(server)
        crawled = run_crawl(tmp_path, feeds)
        assert crawled.returncode == 0, crawled.stderr[-2000:]
        for number in range(4):
            metrics = (
                ("-s", f"CROVIA_METRICS_FILE={tmp_path / 'metrics.prom'}") if number == 3 else ()
            )
            done = capture_round(tmp_path, *metrics)
            assert done.returncode == 0, done.stderr[-2000:]
        yield tmp_path, server


def captures(tmp_path: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for envelope in leaves(tmp_path):
        if envelope["axiom_type"] == "AX.CAPTURE":
            name = envelope["body"]["url"].rsplit("/", 1)[1]
            out.setdefault(name, []).append(envelope)
    return out


def item_of(tmp_path: Path, name: str) -> str:
    for envelope in leaves(tmp_path):
        link = envelope["body"].get("spider_record", {}).get("url", "")
        if envelope["axiom_type"] == "AX.OBS" and link.endswith(name):
            return envelope["axiom_id"]
    raise AssertionError(name)


def test_each_page_has_exactly_the_scripted_versions_removal_and_move(rounds):
    tmp_path, server = rounds
    found = captures(tmp_path)
    assert {name: [e["body"]["outcome"] for e in chain] for name, chain in found.items()} == (
        EXPECTED
    )
    for name, chain in found.items():
        # One chain per page: each capture names the one before it.
        assert chain[0]["predecessors"] == []
        for before, after in itertools.pairwise(chain):
            assert after["predecessors"] == [before["axiom_id"]]
        assert {e["body"]["item"] for e in chain} == {item_of(tmp_path, name)}
    # The footer changed on every fetch (every body differs) and no unchanged capture is a
    # version: the main text's digest is what tells them apart.
    edited = found["edited"]
    assert len({e["body"]["body_sha256"] for e in edited}) == 5
    assert len({e["body"]["text"]["sha256"] for e in edited}) == 2
    moved = found["moving"][2]["body"]
    assert moved["final_url"] == server.url("articles/moved-here")
    assert moved["redirects"] == [server.url("articles/moving")]
    gone = found["gone"][2]["body"]
    assert gone["status"] == 410 and gone["final_url"] == server.url("articles/gone")
    for chain in found.values():
        for envelope in chain:
            body = envelope["body"]
            assert body["ip_address"] == "127.0.0.1"
            assert body["headers"]["content_type"] == "text/html; charset=utf-8"
            if body["outcome"] == "removed":  # a "Gone" page holds no article (issue 43)
                assert "text" not in body and body["error"].startswith("no main text: ")
                continue
            assert body["text"]["extractor"].startswith("trafilatura ")


def test_kept_text_is_the_article_without_its_footer(rounds):
    tmp_path, _ = rounds
    store = BodyStore(tmp_path / "ledger")
    first, _, edited, *_ = captures(tmp_path)["edited"]
    text = store.get(first["body"]["text"]["sha256"]).decode()
    assert all(p in text for p in PARAGRAPHS) and "nonce" not in text and "Home" not in text
    assert len(text) == first["body"]["text"]["length"]
    assert EDIT in store.get(edited["body"]["text"]["sha256"]).decode()
    page = store.get(first["body"]["body_sha256"])
    assert b"nonce" in page and len(page) == first["body"]["body_length"]
    head = store.get(first["body"]["response_head_sha256"])
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and head.endswith(b"\r\n\r\n")
    request = store.get(first["body"]["request_head_sha256"])
    assert request.startswith(b"GET /articles/edited HTTP/1.1\r\n")


def test_history_shows_page_versions_removal_and_move(rounds):
    tmp_path, _ = rounds
    for name, outcomes in EXPECTED.items():
        shown = crovia(tmp_path, "history", item_of(tmp_path, name), "--json")
        assert shown.returncode == 0, shown.stderr
        page = json.loads(shown.stdout)["page"]["captures"]
        assert [c["outcome"] for c in page] == outcomes
        text = crovia(tmp_path, "history", item_of(tmp_path, name)).stdout
        assert "(captures, AX.CAPTURE)" in text
        versions = sum(1 for o in outcomes if o in ("first", "edited", "moved"))
        assert f"version {versions}," in text and f"version {versions + 1}," not in text
    moved = crovia(tmp_path, "history", item_of(tmp_path, "moving")).stdout
    assert "moved: version 2, HTTP 200, at " in moved and "/articles/moved-here" in moved
    assert "removed: HTTP 410" in crovia(tmp_path, "history", item_of(tmp_path, "gone")).stdout


def test_diff_prints_the_edit_and_names_both_records(rounds):
    tmp_path, _ = rounds
    chain = captures(tmp_path)["edited"]
    shown = crovia(tmp_path, "diff", item_of(tmp_path, "edited"))
    assert shown.returncode == 1, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"--- {chain[0]['axiom_id']} (first, captured ")
    assert lines[1].startswith(f"+++ {chain[2]['axiom_id']} (edited, captured ")
    assert f"-{PARAGRAPHS[1]}" in lines and f"+{EDIT}" in lines
    assert sum(1 for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---")) == 2
    # --to before the edit: one version on both sides, no difference.
    before = chain[1]["body"]["captured_at"]
    same = crovia(tmp_path, "diff", chain[4]["axiom_id"], "--to", before)
    assert same.returncode == 0 and "no change in the main text" in same.stdout
    # A time before any capture has no version.
    early = crovia(tmp_path, "diff", item_of(tmp_path, "edited"), "--to", "2001-01-01T00:00:00Z")
    assert early.returncode == 3 and "no captured version" in early.stderr
    # A date is a time too (midnight UTC); a time that is none is a usage error; a fetch
    # record is no item with a page.
    dated = crovia(tmp_path, "diff", item_of(tmp_path, "edited"), "--to", "2001-01-01")
    assert dated.returncode == 3
    wrong = crovia(tmp_path, "diff", item_of(tmp_path, "edited"), "--to", "yesterday")
    assert wrong.returncode == 2 and "not a date or ISO 8601 time" in wrong.stderr
    fetch = next(e for e in leaves(tmp_path) if e["axiom_type"] == "AX.FETCH")["axiom_id"]
    not_item = crovia(tmp_path, "diff", fetch)
    assert not_item.returncode == 2 and "neither an item nor a capture" in not_item.stderr
    # The moved page kept its text, but a move is a change (issue 43): exit 1, naming it.
    moved = crovia(tmp_path, "diff", item_of(tmp_path, "moving"))
    assert moved.returncode == 1 and "no change in the main text" in moved.stdout
    assert "moved: the page " in moved.stdout and "/articles/moved-here" in moved.stdout


def test_the_page_and_the_monitor_give_the_same_verdict(rounds, tmp_path):
    """The captures the crawl signed: valid in the page's own verifier (its scripts under Node,
    pinned to the crawl's key) and in `crovia monitor` over the published log."""
    from tests.web.corpus import trust_root
    from tests.web.test_differential import Case, page_outcomes

    source, _ = rounds
    pubkey = crovia(source, "pubkey").stdout.split()[2]
    records = [c for chain in captures(source).values() for c in chain]
    cases = []
    for envelope in records:
        receipt = tmp_path / f"{envelope['axiom_id']}.json"
        assert crovia(source, "prove", envelope["axiom_id"], "--out", str(receipt)).returncode == 0
        cases.append(Case(envelope["axiom_id"], receipt.read_bytes(), trust_root(pubkey)))
    assert [row[:2] for row in page_outcomes(cases)] == [("valid", None)] * len(records)
    published = tmp_path / "pub"
    assert crovia(source, "publish", str(published)).returncode == 0
    vkey = crovia(source, "pubkey").stdout.splitlines()[2].split(": ", 1)[1]
    state = tmp_path / "monitor.json"
    followed = crovia(source, "monitor", str(published), "--vkey", vkey, "--state", str(state))
    assert followed.returncode == 0, followed.stdout + followed.stderr
    leaves_now = len(leaves(source))
    assert f"+{leaves_now} entries verified" in followed.stdout + followed.stderr


def test_every_capture_verifies_pinned_and_a_changed_page_fails_the_audit(rounds, tmp_path):
    source, _ = rounds
    pubkey = crovia(source, "pubkey").stdout.split()[2]
    chain = captures(source)["edited"]
    for envelope in [c for chains in captures(source).values() for c in chains]:
        receipt = tmp_path / f"{envelope['axiom_id']}.json"
        proved = crovia(source, "prove", envelope["axiom_id"], "--out", str(receipt))
        assert proved.returncode == 0, proved.stderr
        verified = crovia(source, "verify", str(receipt), "--pubkey", pubkey)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "captured at" in verified.stdout
    assert crovia(source, "audit").returncode == 0
    # A changed byte in one kept page: the audit names the body and the capture record.
    digest = chain[2]["body"]["body_sha256"]
    path = source / "ledger" / "bodies" / digest[:2] / f"{digest}.gz"
    original = path.read_bytes()
    page = bytearray(gzip.decompress(original))
    page[20] ^= 1
    path.write_bytes(gzip.compress(bytes(page), mtime=0))
    try:
        audited = crovia(source, "audit")
        assert audited.returncode == 1
        said = audited.stdout + audited.stderr
        assert digest in said and chain[2]["axiom_id"] in said and "body_sha256" in said
    finally:
        path.write_bytes(original)


def test_stats_counts_captures_apart_from_items(rounds):
    """`crovia stats` (and `crovia feeds list`, which reads its counts) counts a vendor's items,
    not its page captures, whose target is their page: 3 items, 1 fetch record, 15 captures."""
    tmp_path, _ = rounds
    shown = crovia(tmp_path, "stats", "--json")
    assert shown.returncode == 0, shown.stderr
    stats = json.loads(shown.stdout)
    assert stats["vendors"] == {"lab": 3}
    assert stats["fetch_records"] == 1 and stats["page_captures"] == 15
    text = crovia(tmp_path, "stats").stdout
    assert "page captures: 15" in text and "lab: 3 items" in text


def test_run_records_and_metrics_count_the_captures(rounds):
    """Each run record counts its captures by vendor and outcome (only a run that captured has
    `captures`), and the Prometheus metrics sum them over the runs."""
    tmp_path, _ = rounds
    runs = [
        json.loads(line) for line in (tmp_path / "ledger" / "runs.jsonl").read_text().splitlines()
    ]
    assert [r["captures"] for r in runs] == [
        {"lab": {"first": 3}},
        {"lab": {"unchanged": 3}},
        {"lab": {"edited": 1, "moved": 1, "removed": 1}},
        {"lab": {"removed": 1, "unchanged": 2}},
        {"lab": {"removed": 1, "unchanged": 2}},
    ]
    text = (tmp_path / "metrics.prom").read_text()
    expected = {"first": 3, "unchanged": 7, "edited": 1, "moved": 1, "removed": 3}
    for outcome, count in expected.items():
        line = f'crovia_pages_captured_total{{outcome="{outcome}",vendor="lab"}} {count}.0'
        assert line in text, text
