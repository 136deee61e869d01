"""Issue 18: a signed fetch record (AX.FETCH) for every fetch of every feed, and an item's timeline.

Six crawls of one feed on 127.0.0.1 whose content changes: the item is not there yet, appears, is
edited, the server answers 304, the server fails, the item has left. `crovia history` must give
the exact brackets and versions, `crovia absent` 0 / 1 / 3 at the right times, every fetch record
must verify pinned, and a changed byte in a kept body must fail the audit naming the body and the
fetch record.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from ledger.keys import key_id, load_signing_key
from ledger.store import BodyStore
from tests.crawl import (
    crawl_env,
    crawl_replies,
    crovia,
    envelopes,
    fetch_records,
    leaves,
    run_crawl,
)
from tests.feedserver import Reply

ITEM = "https://lab.example.org/posts/x"
OTHER = ("https://lab.example.org/posts/a", "https://lab.example.org/posts/b")


def rss(items: list[tuple[str, str]]) -> bytes:
    entries = "".join(
        f"<item><title>{title}</title><link>{link}</link><guid>{link}</guid>"
        "<pubDate>Thu, 18 Jun 2026 00:00:00 -0400</pubDate>"
        f"<description>About {title}</description></item>"
        for link, title in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Lab</title>'
        f"<link>https://lab.example.org/</link><description>x</description>{entries}"
        "</channel></rss>"
    ).encode()


BASE = [(OTHER[0], "Post A"), (OTHER[1], "Post B")]
BODIES = {
    "before": rss(BASE),
    "appeared": rss([(ITEM, "Post X"), *BASE]),
    "edited": rss([(ITEM, "Post X, corrected"), *BASE]),
    "left": rss([(OTHER[1], "Post B"), (OTHER[0], "Post A")]),
}


def ok(name: str) -> Reply:
    etag = '"' + hashlib.sha256(BODIES[name]).hexdigest()[:16] + '"'
    return Reply(200, BODIES[name], {"Content-Type": "application/rss+xml", "ETag": etag})


# What each of the six crawls is answered with.
CRAWLS = (
    ("before", ok("before")),
    ("appeared", ok("appeared")),
    ("edited", ok("edited")),
    ("not modified", Reply(304)),
    ("failed", Reply(404, b"gone for now")),
    ("left", ok("left")),
)


@pytest.fixture(scope="module")
def six(tmp_path_factory, module_feed_server):
    tmp = tmp_path_factory.mktemp("six")
    records = crawl_replies(tmp, module_feed_server, CRAWLS)
    return tmp, records, module_feed_server


def by_crawl(records: list[dict]) -> dict[str, dict]:
    assert len(records) == len(CRAWLS)
    return {name: record for (name, _), record in zip(CRAWLS, records, strict=True)}


def test_every_fetch_is_signed_with_what_it_found(six):
    tmp, records, server = six
    rec = by_crawl(records)
    outcomes = [r["body"]["outcome"] for r in records]
    assert outcomes == [
        "new_body", "new_body", "new_body", "not_modified", "failed", "new_body"
    ]  # fmt: skip
    assert [r["object"].get("fetch", {}).get("status") for r in records] == [
        200, 200, 200, 304, 404, 200
    ]  # fmt: skip
    assert [r["body"].get("entries", {}).get("count") for r in records] == [2, 3, 3, 3, None, 2]
    # Each 200 body is kept and named by the record; the 304 confirms the body it validated.
    sha = {name: hashlib.sha256(body).hexdigest() for name, body in BODIES.items()}
    assert rec["edited"]["body"]["body_sha256"] == sha["edited"]
    assert rec["not modified"]["body"]["body_sha256"] == sha["edited"]
    assert rec["not modified"]["body"]["entries"] == rec["edited"]["body"]["entries"]
    assert "body_sha256" not in rec["not modified"]["object"]["fetch"]
    # The 304 record carries the validators its request sent, as the server saw them.
    sent = server.requests_for("lab.xml")[3].headers["if-none-match"]
    assert rec["not modified"]["body"]["sent"] == {"if_none_match": sent}
    assert rec["failed"]["body"]["error"] and "body_sha256" not in rec["failed"]["body"]
    store = BodyStore(tmp / "ledger")
    for name in ("before", "appeared", "edited", "left"):
        assert store.get(sha[name]) == BODIES[name]
    # A fetch record precedes the items of its fetch in the ledger.
    kinds = [env["axiom_type"] for env in leaves(tmp)]
    assert kinds[:4] == ["AX.FETCH", "AX.OBS", "AX.OBS", "AX.FETCH"]


def test_a_body_fetched_again_unchanged_says_so(tmp_path, feed_server):
    url = feed_server.script("same.xml", ok("before"))
    for _ in range(2):
        assert run_crawl(tmp_path, [{"vendor": "lab", "url": url}]).returncode == 0
    first, second = fetch_records(tmp_path)
    # The first crawl stored validators, so the second asked conditionally; the scripted
    # server still answered 200 with the same bytes.
    assert (first["body"]["outcome"], second["body"]["outcome"]) == ("new_body", "unchanged_body")
    assert second["body"]["sent"]
    assert second["body"]["entries"] == first["body"]["entries"]


def history(tmp: Path, *args: str) -> dict:
    proc = crovia(tmp, "history", *args, "--ledger-dir", str(tmp / "ledger"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_history_gives_the_exact_brackets_and_versions(six):
    tmp, records, _ = six
    rec = by_crawl(records)
    versions = [env for env in envelopes(tmp) if env["object"]["primary_source_url"] == ITEM]
    assert len(versions) == 2 and versions[1]["predecessors"] == [versions[0]["axiom_id"]]
    for ask in ((versions[1]["axiom_id"],), ("--url", ITEM), ("--vendor", "lab", "--title", "x")):
        shown = history(tmp, *ask)
        assert [v["axiom_id"] for v in shown["versions"]] == [v["axiom_id"] for v in versions]
        assert shown["versions"][1]["predecessors"] == [versions[0]["axiom_id"]]
        [feed] = shown["feeds"]
        brackets = {key: seen and seen["axiom_id"] for key, seen in feed["brackets"].items()}
        assert brackets == {
            "last_without": rec["before"]["axiom_id"],
            "first_with": rec["appeared"]["axiom_id"],
            "last_with": rec["not modified"]["axiom_id"],  # the 304 confirms the edited body
            "first_without_after": rec["left"]["axiom_id"],  # the failure proves nothing
        }
        assert [f["held"] for f in feed["fetches"]] == [False, True, True, True, None, False]
        assert [f["fetched_at"] for f in feed["fetches"]] == [
            r["body"]["fetched_at"] for r in records
        ]
    text = crovia(tmp, "history", "--url", ITEM, "--ledger-dir", str(tmp / "ledger")).stdout
    assert rec["before"]["axiom_id"] in text and rec["left"]["axiom_id"] in text


def absent(tmp: Path, at: str, url: str = ITEM, *extra: str):
    ledger = str(tmp / "ledger")
    return crovia(tmp, "absent", "--url", url, "--at", at, "--ledger-dir", ledger, *extra)


def test_absent_answers_0_before_and_after_1_while_there_3_before_the_first_fetch(six):
    tmp, records, _ = six
    rec = by_crawl(records)
    at = {name: r["body"]["fetched_at"] for name, r in rec.items()}
    assert absent(tmp, "2020-01-01").returncode == 3
    expected = {"before": 0, "appeared": 1, "edited": 1, "not modified": 1, "failed": 1, "left": 0}
    for name, code in expected.items():
        proc = absent(tmp, at[name])
        assert proc.returncode == code, (name, proc.stdout, proc.stderr)
    # It names the fetch record and the body that prove it.
    proc = absent(tmp, at["left"], ITEM, "--json")
    answer = json.loads(proc.stdout)
    assert answer["verdict"] == "absent"
    assert answer["feeds"][0]["fetch"]["axiom_id"] == rec["left"]["axiom_id"]
    assert answer["feeds"][0]["fetch"]["body_sha256"] == rec["left"]["body"]["body_sha256"]
    # A URL the ledger never saw: absent from the named feed, whose body is read again.
    never = "https://lab.example.org/never"
    assert absent(tmp, at["edited"], never, "--vendor", "lab").returncode == 0
    assert absent(tmp, at["edited"], OTHER[0], "--vendor", "lab").returncode == 1
    # Usage: no item and no feed named, or a bad time.
    assert absent(tmp, at["edited"], never).returncode == 2
    assert absent(tmp, "yesterday").returncode == 2


def test_every_fetch_record_verifies_pinned(six, tmp_path):
    tmp, records, _ = six
    key = load_signing_key(tmp / "keys" / "signing.key")
    pin = key.verify_key.encode().hex()
    for record in records:
        out = tmp_path / f"{record['axiom_id']}.json"
        proved = crovia(tmp, "prove", record["axiom_id"], "--ledger-dir", str(tmp / "ledger"),
                        "--out", str(out))  # fmt: skip
        assert proved.returncode == 0, proved.stderr
        checked = crovia(tmp, "verify", str(out), "--pubkey", pin)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        body = record["body"]
        assert f"feed lab ({body['feed_url']}) fetched at {body['fetched_at']}" in checked.stdout
        if body["outcome"] == "new_body":
            status = record["object"]["fetch"]["status"]
            count = body["entries"]["count"]
            assert f"HTTP {status}, body {body['body_sha256']}, {count} entries" in checked.stdout
        pinned = key_id(key.verify_key.encode())
        verdict = json.loads(crovia(tmp, "verify", str(out), "--key-id", pinned, "--json").stdout)
        assert verdict["ok"] and verdict["key_pinned"] and verdict["fetch"]


def test_the_entry_digest_recomputed_from_the_kept_body_equals_the_signed_one(six):
    from crovia_spider.spiders.reread import body_identities
    from ledger.records.fetch import entries_digest

    tmp, records, _ = six
    store = BodyStore(tmp / "ledger")
    checked = 0
    for record in records:
        body = record["body"]
        if body["outcome"] not in ("new_body", "unchanged_body"):
            continue
        final_url = record["object"]["fetch"]["final_url"]
        found = body_identities(store.get(body["body_sha256"]), body, final_url)
        assert entries_digest(found) == body["entries"]["identities_sha256"]
        checked += 1
    assert checked == 4


def test_a_changed_byte_in_a_kept_body_fails_the_audit_naming_body_and_fetch_record(six):
    tmp, records, _ = six
    assert crovia(tmp, "audit").returncode == 0
    left = by_crawl(records)["left"]  # its items were all seen before: only the record cites it
    digest = left["body"]["body_sha256"]
    path = BodyStore(tmp / "ledger").path(digest)
    original = path.read_bytes()
    changed = bytearray(BODIES["left"])
    changed[len(changed) // 2] ^= 0x20
    path.write_bytes(gzip.compress(bytes(changed), mtime=0))
    try:
        proc = crovia(tmp, "audit")
        assert proc.returncode == 1
        assert f"fetch record {left['axiom_id']}" in proc.stderr
        assert f"kept body {digest} holds other bytes" in proc.stderr
        assert not re.search(r"leaf (\d+)\b.*\bleaf \1\b", proc.stderr)  # the leaf named once
        # `crovia absent` reading that body refuses it too (not an answer: 2, naming the check)
        refused = absent(tmp, left["body"]["fetched_at"])
        assert refused.returncode == 2 and "fetch_body" in refused.stderr
    finally:
        path.write_bytes(original)


def test_an_older_ledger_gains_fetch_records_and_nothing_signed_changes(tmp_path, feed_server):
    from ledger.store import Ledger
    from tests.vectors.make_vectors import sample_envelope

    key = load_signing_key(_key(tmp_path))
    with Ledger.open(tmp_path / "ledger", signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(3)])
        ledger.seal()
    # The feed state of a crawl before fetch records: validators, but no body they name.
    state = {
        feed_server.url("old.xml"): {
            "etag": '"v1"', "last_modified": "", "identity_rule": 3, "vendor": "lab"
        }
    }  # fmt: skip
    (tmp_path / "ledger" / "feeds_state.json").write_text(json.dumps(state))
    before = {name: (tmp_path / "ledger" / name).read_bytes()
              for name in ("axiom_ledger.jsonl", "seals.jsonl")}  # fmt: skip
    url = feed_server.script("old.xml", Reply(304), ok("before"))
    feeds = [{"vendor": "lab", "url": url}]
    for _ in range(2):
        assert run_crawl(tmp_path, feeds).returncode == 0
    for name, data in before.items():
        assert (tmp_path / "ledger" / name).read_bytes().startswith(data), name
    records = fetch_records(tmp_path)
    assert [r["body"]["outcome"] for r in records] == ["not_modified", "new_body"]
    # The 304 to validators stored before fetch records names no body: it proves nothing.
    assert "body_sha256" not in records[0]["body"] and "entries" not in records[0]["body"]
    assert records[0]["body"]["sent"] == {"if_none_match": '"v1"'}
    assert crovia(tmp_path, "audit").returncode == 0


def _key(tmp_path: Path) -> Path:
    crawl_env(tmp_path)  # creates the key
    return tmp_path / "keys" / "signing.key"


def test_crovia_body_gives_the_body_a_fetch_record_names(six, tmp_path):
    tmp, records, _ = six
    rec = by_crawl(records)
    ledger = str(tmp / "ledger")
    for name, expected in (("appeared", "appeared"), ("not modified", "edited")):
        out = tmp_path / f"{name}.xml"
        done = crovia(tmp, "body", rec[name]["axiom_id"], "--ledger-dir", ledger, "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert out.read_bytes() == BODIES[expected]
    failed = crovia(tmp, "body", rec["failed"]["axiom_id"], "--ledger-dir", ledger)
    assert failed.returncode == 2 and "names no body" in failed.stderr


def test_a_damaged_ledger_line_is_named_not_a_traceback(six, tmp_path):
    import shutil

    tmp, records, _ = six
    copy = tmp_path / "copy"
    shutil.copytree(tmp / "ledger", copy / "ledger")
    lines = (copy / "ledger" / "axiom_ledger.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = b"not json\n"
    (copy / "ledger" / "axiom_ledger.jsonl").write_bytes(b"".join(lines))
    ledger = str(copy / "ledger")
    shown = crovia(tmp, "history", "--url", ITEM, "--ledger-dir", ledger)
    assert shown.returncode == 1 and "leaf 1 is not JSON" in shown.stderr, shown.stderr
    assert "Traceback" not in shown.stderr
    at = records[-1]["body"]["fetched_at"]
    answer = crovia(tmp, "absent", "--url", ITEM, "--at", at, "--ledger-dir", ledger)
    assert answer.returncode == 2 and "leaf 1 is not JSON" in answer.stderr, answer.stderr
