"""Honest provenance: a feed served by someone other than its vendor names that party (`relay` in
its [[feeds]] entry, docs/spider.md "Relays"). The entry is validated; a crawl of a relayed feed on
127.0.0.1 signs the relay in every fetch record and item; `crovia verify` and `crovia feeds list`
say "via <relay>", control characters escaped; a feed without a relay keeps its records' shape."""

from __future__ import annotations

import json

import pytest

from crovia_spider.cli import main
from crovia_spider.config.feeds import RELAY_CHARS, load_feeds
from crovia_spider.exceptions import ConfigError
from ledger.records.fetch import new_fetch_envelope
from ledger.store import Ledger
from tests.crawl import PROJECT_ROOT, crovia, envelopes, fetch_records, run_crawl
from tests.feedserver import Reply
from tests.vectors.make_vectors import TEST_KEY
from tests.web.corpus import receipt_bytes

RELAY = "Olshansk/rss-feeds (GitHub)"
RSS = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Lab</title>'
    b"<link>https://lab.example.org/</link><description>x</description><item><title>Post</title>"
    b"<link>https://lab.example.org/posts/1</link><guid>https://lab.example.org/posts/1</guid>"
    b"</item></channel></rss>"
)
ENTRY = '[[feeds]]\nvendor = "lab"\nurl = "https://relay.example.org/lab.xml"\n'


def load(tmp_path, text):
    path = tmp_path / "feeds.toml"
    path.write_text(text, encoding="utf-8")
    return load_feeds(path)


def test_a_relay_is_read_and_an_entry_without_one_names_none(tmp_path):
    (feed,) = load(tmp_path, ENTRY + f"relay = {json.dumps(RELAY)}\n")
    assert feed.relay == RELAY
    (own,) = load(tmp_path, ENTRY)
    assert own.relay == ""


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("42", "'relay' must be a string"),
        ('""', "1 to 80 characters, not 0"),
        (json.dumps("x" * (RELAY_CHARS + 1)), "1 to 80 characters, not 81"),
        (json.dumps("evil\u001b[2Jrelay"), "printable text"),
        (json.dumps("two\nlines"), "printable text"),
        (json.dumps("right\u202eto left"), "printable text"),
        (json.dumps(" padded"), "outer spaces"),
    ],
)
def test_a_bad_relay_names_the_file_entry_and_reason(tmp_path, value, reason):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, ENTRY + f"relay = {value}\n")
    message = str(caught.value)
    assert str(tmp_path / "feeds.toml") in message and "vendor 'lab'" in message
    assert reason in message


def test_the_default_list_marks_every_third_party_feed_as_a_relay():
    feeds = load_feeds(PROJECT_ROOT / "config" / "feeds.toml")
    third_party = ("raw.githubusercontent.com", "rsshub", "feedburner", "rss.app", "politepol")
    relayed = {f.vendor for f in feeds if any(host in f.url for host in third_party)}
    assert relayed == {"anthropic_news", "meta_ai_blog", "mistral_news"}
    assert all(f.relay == RELAY for f in feeds if f.vendor in relayed)
    assert not any(f.relay for f in feeds if f.vendor not in relayed)


FIELDS = dict(spider="vendor_press", vendor="lab", feed_url="https://lab.example.org/f.xml",
                  outcome="failed", fetched_at="2026-06-18T05:00:00.000000Z", run_hash="0" * 64,
              error="refused", issued_at="2026-06-18T05:00:01Z")  # fmt: skip


def test_a_fetch_record_without_a_relay_keeps_its_shape():
    own = new_fetch_envelope(**FIELDS)
    assert "relay" not in own["body"]
    assert new_fetch_envelope(**FIELDS, relay=RELAY)["body"] == {**own["body"], "relay": RELAY}


def test_crovia_verify_escapes_control_characters_of_a_signed_relay(tmp_path, capsys):
    """Config refuses them, but a receipt is anyone's: a relay that clears the screen is shown
    escaped, as the CLI shows all receipt text."""
    hostile = "evil\x1b[2J\u202erelay"
    with Ledger.open(tmp_path / "ledger", signing_key=TEST_KEY) as ledger:
        (issued,) = ledger.issue([new_fetch_envelope(**FIELDS, relay=hostile)])
        ledger.seal(run_id="relay")
        receipt = ledger.receipt(issued.axiom_id)
    (tmp_path / "r.json").write_bytes(receipt_bytes(receipt))
    assert main(["verify", str(tmp_path / "r.json"), "--any-key"]) == 0
    said = capsys.readouterr().out
    assert "via evil\\x1b[2J\\u202erelay fetched at" in said
    assert "\x1b" not in said and "\u202e" not in said


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, module_feed_server):
    """One crawl of two feeds: a relayed one and a vendor's own."""
    tmp = tmp_path_factory.mktemp("relay")
    for name in ("relayed.xml", "own.xml"):
        module_feed_server.script(name, Reply(200, RSS, {"Content-Type": "application/rss+xml"}))
    feeds = [
        {"vendor": "lab", "url": module_feed_server.url("relayed.xml"), "relay": RELAY},
        {"vendor": "own", "url": module_feed_server.url("own.xml")},
    ]
    proc = run_crawl(tmp, feeds)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp


def by_vendor(records):
    return {record["body"]["vendor"]: record for record in records}


def test_a_crawl_signs_the_relay_in_fetch_records_and_items(crawled):
    records = by_vendor(fetch_records(crawled))
    assert records["lab"]["body"]["relay"] == RELAY
    assert "relay" not in records["own"]["body"]
    items = by_vendor(envelopes(crawled))
    assert items["lab"]["body"]["relay"] == RELAY
    assert "relay" not in items["own"]["body"]
    reference = {"axiom_subtype", "category", "fingerprint", "published", "receipt_hash", "schema",
                 "spider", "spider_record", "summary", "title", "vendor"}  # fmt: skip
    assert items["own"]["body"].keys() == reference
    assert items["lab"]["body"].keys() == reference | {"relay"}


def verify(tmp, axiom_id, out):
    proved = crovia(tmp, "prove", axiom_id, "--ledger-dir", str(tmp / "ledger"), "--out", str(out))
    assert proved.returncode == 0, proved.stderr
    checked = crovia(tmp, "verify", str(out), "--any-key")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    return checked.stdout


def test_crovia_verify_says_via_the_relay(crawled, tmp_path):
    record = by_vendor(fetch_records(crawled))["lab"]
    said = verify(crawled, record["axiom_id"], tmp_path / "fetch.json")
    assert f"feed lab ({record['body']['feed_url']}) via {RELAY} fetched at" in said
    assert f"vendor:      lab via {RELAY}" in said
    item = by_vendor(envelopes(crawled))["lab"]
    assert f"vendor:      lab via {RELAY}" in verify(crawled, item["axiom_id"], tmp_path / "i.json")
    own = by_vendor(envelopes(crawled))["own"]
    assert " via " not in verify(crawled, own["axiom_id"], tmp_path / "own.json")


def test_crovia_feeds_list_says_via_the_relay(crawled):
    listed = crovia(crawled, "feeds", "list")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:]}
    assert f"lab via {RELAY}  " in rows["lab"] and " via " not in rows["own"]
    rows_json = json.loads(crovia(crawled, "feeds", "list", "--json").stdout)
    as_json = {row["vendor"]: row for row in rows_json}
    assert (as_json["lab"]["relay"], as_json["own"]["relay"]) == (RELAY, "")


def test_the_default_list_reads_each_vendor_from_its_own_site():
    """A relay stays only beside the vendor's own source, switched off; the vendors that publish
    no feed are read from their own sites' sitemaps (docs/spider.md, "Unchecked entries")."""
    feeds = {f.vendor: f for f in load_feeds(PROJECT_ROOT / "config" / "feeds.toml")}
    assert not any(f.enabled for f in feeds.values() if f.relay)
    own = {"anthropic": "www.anthropic.com", "meta_ai": "ai.meta.com", "mistral": "mistral.ai"}
    for vendor, host in own.items():
        feed = feeds[vendor]
        assert (feed.kind, feed.host, feed.enabled, feed.relay) == ("sitemap", host, True, "")
        assert feed.include and all(host.replace(".", "\\.") in p for p in feed.include)
    enabled = [f for f in feeds.values() if f.enabled]
    assert all(not f.relay for f in enabled)
