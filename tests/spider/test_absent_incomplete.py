"""Issue 30, observations 3 and 4: absence only from a body read whole, and re-reading bounded.

Real crawls against 127.0.0.1 into a real ledger. A body whose entries were not all read (past
CROVIA_MAX_ENTRIES_PER_FEED, or one holding `&#xD800;`) never makes `crovia absent` answer absent
(exit 4, "cannot tell", saying whether the raw body names the URL), and `crovia history` draws no
bracket from it; the fetch record signs what the body held besides what was read. A hostile kept
body is read again in the crawl's worker under its ceilings, once: the second question is answered
from the read-again cache. Fetch records from before these counts still verify and answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from ledger.store.entry_cache import CACHE_FILE, EntryCache
from tests.crawl import crawl_env, crovia, fetch_records, run_crawl
from tests.feedserver import Reply

CANNOT_TELL = 4


def rss(items: list[str], bad: str = "") -> bytes:
    """An RSS body of one entry per link; the entry whose link is `bad` has `&#xD800;` in its
    title (a reference XML cannot encode)."""
    entries = "".join(
        f"<item><title>Post {n}{'&#xD800;' if link == bad else ''}</title><link>{link}</link>"
        f"<guid>{link}</guid><description>About {n}</description></item>"
        for n, link in enumerate(items)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Lab</title>'
        f"<link>https://lab.example.org/</link><description>x</description>{entries}"
        "</channel></rss>"
    ).encode()


POSTS = [f"https://lab.example.org/posts/{n}?a=1&b=2" for n in range(5)]
CAP = ("-s", "CROVIA_MAX_ENTRIES_PER_FEED=3")


def crawl(tmp: Path, server, body: bytes, *extra: str, **env: str) -> dict:
    url = server.script("lab.xml", Reply(200, body, {"Content-Type": "application/rss+xml"}))
    proc = run_crawl(tmp, [{"vendor": "lab", "url": url}], *extra, env=crawl_env(tmp, **env))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return fetch_records(tmp)[-1]


def absent(tmp: Path, url: str, at: str, *extra: str):
    ledger = str(tmp / "ledger")
    return crovia(tmp, "absent", "--url", url, "--at", at, "--vendor", "lab",
                  "--ledger-dir", ledger, *extra)  # fmt: skip


def test_an_entry_past_the_cap_is_never_absent(tmp_path, feed_server):
    record = crawl(tmp_path, feed_server, rss(POSTS), *CAP)
    at = record["body"]["fetched_at"]
    proc = absent(tmp_path, POSTS[4], at)
    assert proc.returncode == CANNOT_TELL, proc.stdout + proc.stderr
    # The record signs what the body held: 5 entries, 3 read, 2 past the limit.
    assert record["body"]["entries"] | {"identities_sha256": ""} == {
        "count": 3, "identities_sha256": "", "limit": 3, "in_body": 5, "over_limit": 2, "unread": 0
    }  # fmt: skip
    assert "cannot tell" in proc.stdout and "2 past the entry limit" in proc.stdout
    # the URL is in the body XML-escaped (`&amp;`): the byte search finds it all the same
    assert "the body mentions it" in proc.stdout
    answer = json.loads(absent(tmp_path, POSTS[4], at, "--json").stdout)
    assert (answer["verdict"], answer["exit_code"]) == ("cannot tell", CANNOT_TELL)
    assert answer["feeds"][0]["fetch"]["mentions"] is True
    # an entry that was read is present; a URL the body does not name cannot be called absent
    # either, and the body does not mention it
    assert absent(tmp_path, POSTS[0], at).returncode == 1
    never = absent(tmp_path, "https://lab.example.org/never", at)
    assert never.returncode == CANNOT_TELL and "does not mention it" in never.stdout


def test_an_entry_the_reader_drops_is_never_absent(tmp_path, feed_server):
    record = crawl(tmp_path, feed_server, rss(POSTS[:3], bad=POSTS[1]))
    proc = absent(tmp_path, POSTS[1], record["body"]["fetched_at"])
    assert proc.returncode == CANNOT_TELL, proc.stdout + proc.stderr
    entries = record["body"]["entries"]
    assert (entries["count"], entries["in_body"], entries["unread"]) == (2, 3, 1)
    assert "1 unreadable" in proc.stdout and "the body mentions it" in proc.stdout


def test_history_draws_no_gone_by_bracket_from_a_fetch_not_read_whole(tmp_path, feed_server):
    item = POSTS[0]
    seen = crawl(tmp_path, feed_server, rss([item]), *CAP)
    past_cap = crawl(tmp_path, feed_server, rss([*POSTS[1:4], item]), *CAP)  # item 4th of 4
    gone = crawl(tmp_path, feed_server, rss(POSTS[1:3]), *CAP)
    proc = crovia(tmp_path, "history", "--url", item, "--ledger-dir", str(tmp_path / "ledger"),
                  "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [feed] = json.loads(proc.stdout)["feeds"]
    brackets = {key: seen and seen["axiom_id"] for key, seen in feed["brackets"].items()}
    assert brackets["last_with"] == seen["axiom_id"]
    assert brackets["first_without_after"] == gone["axiom_id"]  # not the fetch past the cap
    middle = feed["fetches"][1]
    assert middle["axiom_id"] == past_cap["axiom_id"]
    assert middle["held"] is None and middle["undecided"] and middle["mentions"] is True
    text = crovia(tmp_path, "history", "--url", item, "--ledger-dir", str(tmp_path / "ledger"))
    assert "cannot tell (the body mentions it)" in text.stdout
    # at the fetch past the cap, absent cannot tell; at the next, complete fetch it is absent
    assert absent(tmp_path, item, past_cap["body"]["fetched_at"]).returncode == CANNOT_TELL
    assert absent(tmp_path, item, gone["body"]["fetched_at"]).returncode == 0


# feedparser's loose parser holds ~150 bytes per character of a tag: ~375 MB for this one, read
# by the crawl under its default ceilings, past a CLI ceiling of 256 MB.
LONG_TAG = (
    b'<rss version="2.0"><channel><title>t</title><item><title>a</title>'
    b"<link>https://x.test/a</link><link " + b"y" * 2_500_000 + b"></item></channel></rss>"
)
MEMORY_ERROR = "MemoryError: parsing needed more memory than it may use (CROVIA_PARSE_MEMORY_MB)"


def test_a_hostile_kept_body_is_read_again_under_the_ceiling_once(tmp_path, feed_server):
    record = crawl(tmp_path, feed_server, LONG_TAG)
    assert record["body"]["outcome"] == "new_body", record["body"]
    digest, at = record["body"]["body_sha256"], record["body"]["fetched_at"]
    ledger = str(tmp_path / "ledger")
    env = crawl_env(tmp_path, CROVIA_PARSE_MEMORY_MB="256")
    ask = ("absent", "--url", "https://x.test/b", "--at", at, "--vendor", "lab", "--ledger-dir",
           ledger)  # fmt: skip
    first = _crovia_env(env, *ask)
    assert first.returncode == CANNOT_TELL, first.stdout + first.stderr
    assert MEMORY_ERROR in first.stdout  # the worker's ceiling, not the CLI's own process
    cache = EntryCache(tmp_path / "ledger")
    assert cache.hits(digest) == 0
    second = _crovia_env(env, *ask)
    assert second.returncode == CANNOT_TELL and MEMORY_ERROR in second.stdout
    assert cache.hits(digest) == 1  # the second question took the first one's answer
    # a larger ceiling is not held to a failure under a smaller one: it reads the body
    roomy = _crovia_env(crawl_env(tmp_path), *ask)
    assert roomy.returncode == 0, roomy.stdout + roomy.stderr
    assert (tmp_path / "ledger" / CACHE_FILE).is_file()


def _crovia_env(env: dict[str, str], *args: str):
    import subprocess

    from tests.crawl import BIN, PROJECT_ROOT

    return subprocess.run([str(BIN / "crovia"), *args], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_a_cached_answer_is_held_to_the_signed_record(tmp_path, feed_server):
    record = crawl(tmp_path, feed_server, rss(POSTS[:2]))
    at = record["body"]["fetched_at"]
    assert absent(tmp_path, POSTS[3], at).returncode == 0
    # Someone edits the cache to hide an entry: the answer is refused, not believed.
    import sqlite3

    db = sqlite3.connect(tmp_path / "ledger" / CACHE_FILE)
    (value,) = db.execute("SELECT value FROM reads").fetchone()
    forged = json.loads(value)
    forged["identities"] = forged["identities"][:1]
    forged["in_body"] = 1
    db.execute("UPDATE reads SET value = ?", (json.dumps(forged).encode(),))
    db.commit()
    db.close()
    refused = absent(tmp_path, POSTS[1], at)
    assert refused.returncode == 2 and "fetch_entries" in refused.stderr, refused.stderr


def _old_record(tmp: Path, body: bytes, limit: int, fetched_at: str) -> dict:
    """Issue a fetch record as the crawl issued them before issue 30: `entries` of
    {count, identities_sha256, limit} only (and keep its body), with the ledger's own writer."""
    from crovia_spider.spiders.reread import body_identities
    from ledger.keys import load_signing_key
    from ledger.records.fetch import entries_digest, new_fetch_envelope
    from ledger.store import BodyStore, Ledger

    final_url = "https://lab.example.org/feed.xml"
    signed = {"vendor": "lab", "feed_url": final_url, "entries": {"limit": limit}}
    identities = body_identities(body, signed, final_url)
    env = crawl_env(tmp)  # creates the key
    with Ledger.open(tmp / "ledger", signing_key=load_signing_key(env["CROVIA_SIGNING_KEY_FILE"])) \
            as ledger:  # fmt: skip
        digest = BodyStore(tmp / "ledger").put(body)
        envelope = new_fetch_envelope(
            spider="vendor_press", vendor="lab", feed_url=final_url, outcome="new_body",
            fetched_at=fetched_at, run_hash="0" * 64, body_sha256=digest,
            fetch={"body_sha256": digest, "fetched_at": fetched_at, "final_url": final_url,
                   "status": 200},
            entries={"count": len(identities), "identities_sha256": entries_digest(identities),
                     "limit": limit},
        )  # fmt: skip
        [issued] = ledger.issue([envelope])
        ledger.seal()
    return {**envelope, "axiom_id": issued.axiom_id}


def test_old_fetch_records_without_the_counts_verify_and_answer(tmp_path):
    complete = _old_record(tmp_path, rss(POSTS[:2]), 3, "2026-06-01T00:00:00.000000Z")
    capped = _old_record(tmp_path, rss(POSTS[:4]), 3, "2026-06-02T00:00:00.000000Z")
    assert set(capped["body"]["entries"]) == {"count", "identities_sha256", "limit"}
    assert crovia(tmp_path, "audit").returncode == 0
    # A complete body still proves absence; one past its cap cannot (the counts are recomputed
    # from the kept body the record names), and says the body mentions the URL.
    assert absent(tmp_path, POSTS[3], complete["body"]["fetched_at"]).returncode == 0
    proc = absent(tmp_path, POSTS[3], capped["body"]["fetched_at"])
    assert proc.returncode == CANNOT_TELL, proc.stdout + proc.stderr
    assert "1 past the entry limit" in proc.stdout and "the body mentions it" in proc.stdout
    ledger = str(tmp_path / "ledger")
    for record in (complete, capped):
        out = tmp_path / f"{record['axiom_id']}.json"
        proved = crovia(tmp_path, "prove", record["axiom_id"], "--ledger-dir", ledger,
                        "--out", str(out))  # fmt: skip
        assert proved.returncode == 0, proved.stderr
        assert crovia(tmp_path, "verify", str(out), "--any-key").returncode == 0
