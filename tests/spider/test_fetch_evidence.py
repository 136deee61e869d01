"""Issue 8, acceptance: every envelope signs the fetch it came from, and the ledger keeps the body.

One real crawl of feeds on 127.0.0.1 (plain files with validators, a redirect on the feed's own
host, a gzip-encoded answer, an answer without validators). The server records what it sent, so
each envelope's `object.fetch.body_sha256` is checked against the bytes really served; `crovia
body` gives them back; a changed byte in a kept body makes `crovia audit` fail naming the body.
"""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from ledger.canonical import canonical_json
from ledger.store import BodyStore
from tests.conftest import FEEDS
from tests.crawl import crovia, envelopes, leaves, run_crawl
from tests.feedserver import FeedServer, Reply

PLAIN = "openai_news_rss_reserialized_trim3.xml"
ARXIV = "arxiv_cs_ai_rss2_2026-04-27_trim3.xml"
MOVED_TO = "bair_blog_rss_trim3.xml"
ZIPPED = (FEEDS / "google_blog_ai_rss_prefix.xml").read_bytes()
BARE = (FEEDS / "huggingface_blog_rss_prefix.xml").read_bytes()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("evidence")
    with FeedServer(FEEDS) as server:
        zipped = {"Content-Type": "application/rss+xml", "Content-Encoding": "gzip"}
        feeds = {
            "openai": server.url(PLAIN),
            "arxiv_cs_ai": server.url(ARXIV),
            "bair": server.script("moved.xml", Reply(301, b"", {"Location": "/" + MOVED_TO})),
            "google": server.script("zipped.xml", Reply(200, gzip.compress(ZIPPED), zipped)),
            "huggingface": server.script(
                "bare.xml", Reply(200, BARE, {"Content-Type": "text/xml"})
            ),
        }
        proc = run_crawl(tmp_path, [{"vendor": v, "url": u} for v, u in feeds.items()])
        served = {
            vendor: server.sent_bodies(path)
            for vendor, path in {
                "openai": PLAIN, "arxiv_cs_ai": ARXIV, "bair": MOVED_TO,
                "google": "zipped.xml", "huggingface": "bare.xml",
            }.items()
        }  # fmt: skip
        base = server.base
    assert proc.returncode == 0, proc.stderr[-3000:]
    issued = envelopes(tmp_path)
    assert {env["body"]["vendor"] for env in issued} == set(feeds)
    return tmp_path, issued, served, base


def test_every_envelope_signs_the_sha256_of_the_bytes_the_server_sent(crawled):
    _, issued, served, _ = crawled
    for env in issued:
        [sent] = served[env["body"]["vendor"]]
        if env["body"]["vendor"] == "google":  # evidence is of the body after content decoding
            sent = gzip.decompress(sent)
        assert env["object"]["fetch"]["body_sha256"] == sha(sent)


def test_the_fetch_block_records_final_url_status_time_and_validators_when_sent(crawled):
    _, issued, _, base = crawled
    by_vendor = {env["body"]["vendor"]: env for env in issued}
    plain = by_vendor["openai"]["object"]["fetch"]
    assert set(plain) == {"final_url", "status", "body_sha256", "etag", "last_modified",
                          "fetched_at"}  # fmt: skip
    assert plain["final_url"] == f"{base}/{PLAIN}" and plain["status"] == 200
    assert plain["etag"].startswith('"') and plain["last_modified"].endswith(" GMT")
    assert plain["fetched_at"] == by_vendor["openai"]["body"]["spider_record"]["observed_at"]
    moved = by_vendor["bair"]
    assert moved["object"]["fetch"]["final_url"] == f"{base}/{MOVED_TO}"
    assert moved["body"]["spider_record"]["source_url"] == f"{base}/moved.xml"
    bare = by_vendor["huggingface"]["object"]["fetch"]
    assert set(bare) == {"final_url", "status", "body_sha256", "fetched_at"}  # none sent: none kept
    assert by_vendor["arxiv_cs_ai"]["object"]["arxiv"]["id"]  # beside the other extras


def test_one_kept_file_per_distinct_body(crawled):
    tmp_path, issued, _, _ = crawled
    cited = {env["object"]["fetch"]["body_sha256"] for env in issued}
    kept = {p.name.removesuffix(".gz") for p in (tmp_path / "ledger" / "bodies").rglob("*.gz")}
    assert kept == cited and len(cited) == 5
    leftovers = [p for p in (tmp_path / "ledger" / "bodies").rglob("*") if p.suffix == ".tmp"]
    assert leftovers == []


def test_crovia_body_reproduces_the_bytes_served(crawled, tmp_path):
    ledger_dir, issued, served, _ = crawled
    firsts = {}
    for env in issued:
        firsts.setdefault(env["body"]["vendor"], env)
    for vendor, env in firsts.items():
        out = tmp_path / f"{vendor}.body"
        proc = crovia(ledger_dir, "body", env["axiom_id"], "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        [sent] = served[vendor]
        assert out.read_bytes() == (gzip.decompress(sent) if vendor == "google" else sent)


def test_the_crawl_audits_clean_and_a_changed_byte_in_a_kept_body_fails_naming_it(crawled):
    ledger_dir, issued, served, _ = crawled
    assert crovia(ledger_dir, "audit").returncode == 0
    [sent] = served["openai"]
    path = BodyStore(ledger_dir / "ledger").path(sha(sent))
    original = path.read_bytes()
    changed = bytearray(sent)
    changed[len(changed) // 2] ^= 0x20
    path.write_bytes(gzip.compress(bytes(changed), mtime=0))
    try:
        proc = crovia(ledger_dir, "audit")
        # The feed's fetch record is signed before its items: the first leaf citing the body.
        cites = [n for n, env in enumerate(leaves(ledger_dir)) if env["body"]["vendor"] == "openai"]
        record = leaves(ledger_dir)[cites[0]]
        assert record["axiom_type"] == "AX.FETCH"
        assert proc.returncode == 1
        assert (
            f"leaf {cites[0]}: fetch record {record['axiom_id']}: kept body {sha(sent)}"
            in proc.stderr
        )
        item = next(env for env in issued if env["body"]["vendor"] == "openai")
        body = crovia(ledger_dir, "body", item["axiom_id"])
        assert body.returncode == 1 and sha(sent) in body.stderr
    finally:
        path.write_bytes(original)


def test_the_fetch_evidence_is_signed_with_the_envelope(crawled, tmp_path):
    # A copy of the ledger whose line says another body was fetched no longer audits.
    ledger_dir, _, _, _ = crawled
    copy = tmp_path / "copy"
    (copy / "ledger").mkdir(parents=True)
    for path in (ledger_dir / "ledger").iterdir():
        if path.is_file():
            (copy / "ledger" / path.name).write_bytes(path.read_bytes())
    lines = (copy / "ledger" / "axiom_ledger.jsonl").read_bytes().splitlines(keepends=True)
    env = json.loads(lines[0])
    env["object"]["fetch"]["status"] = 203
    lines[0] = canonical_json(env) + b"\n"
    (copy / "ledger" / "axiom_ledger.jsonl").write_bytes(b"".join(lines))
    proc = crovia(copy, "audit")
    assert proc.returncode == 1 and "leaf 0" in proc.stderr
