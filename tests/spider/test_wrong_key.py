"""A crawl with a key other than the ledger's is refused before it fetches, changing no byte."""

from __future__ import annotations

from ledger.keys import generate_signing_key, key_id, load_signing_key
from tests.crawl import crawl_env, run_crawl
from tests.ledger.store.test_writer_key import snapshot


def test_a_crawl_with_another_key_is_refused_and_the_ledger_is_unchanged(tmp_path, feed_server):
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    first = run_crawl(tmp_path, feeds)
    assert first.returncode == 0, first.stderr[-2000:]
    ledger_dir = tmp_path / "ledger"
    before = snapshot(ledger_dir)
    assert "seals.jsonl" in before and "ledger.lock" in before
    feed_server.requests.clear()
    other_file = tmp_path / "other" / "signing.key"
    other = generate_signing_key(other_file)
    env = crawl_env(tmp_path, CROVIA_SIGNING_KEY_FILE=str(other_file))
    proc = run_crawl(tmp_path, feeds, env=env)
    own = load_signing_key(tmp_path / "keys" / "signing.key")
    assert proc.returncode != 0
    assert "crawl refused" in proc.stderr
    assert key_id(bytes(own.verify_key)) in proc.stderr
    assert key_id(bytes(other.verify_key)) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert feed_server.requests == []  # not even robots.txt
    assert snapshot(ledger_dir) == before
