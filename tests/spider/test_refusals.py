"""A crawl that must not run fetches nothing and exits non-zero with one clear line."""

from __future__ import annotations

import pytest

from ledger.keys import load_signing_key
from ledger.store import Ledger
from tests.crawl import crawl_env, run_crawl


@pytest.fixture
def feeds(feed_server):
    return [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]


def refused(proc, feed_server, message):
    assert proc.returncode != 0
    assert message in proc.stderr
    assert feed_server.requests == []  # not even robots.txt


def test_locked_ledger(tmp_path, feed_server, feeds):
    env = crawl_env(tmp_path)
    key = load_signing_key(env["CROVIA_SIGNING_KEY_FILE"])
    with Ledger.open(tmp_path / "ledger", signing_key=key, lock_timeout=5):
        proc = run_crawl(tmp_path, feeds, "-s", "CROVIA_LOCK_TIMEOUT=0.3")
    refused(proc, feed_server, f"crawl refused: ledger {tmp_path / 'ledger'} is busy")


def test_missing_key_says_how_to_make_one(tmp_path, feed_server, feeds):
    key = tmp_path / "nowhere" / "signing.key"
    env = crawl_env(tmp_path, CROVIA_SIGNING_KEY_FILE=str(key))
    proc = run_crawl(tmp_path, feeds, env=env)
    refused(proc, feed_server, f"crovia keygen --out {key}")
    assert not key.exists()  # the crawl never makes a key of its own


def test_invalid_feed_list(tmp_path, feed_server):
    toml = f'[[feeds]]\nvendor = "openai"\nurl = "{feed_server.url("a.xml")}"\ndelay = "soon"\n'
    proc = run_crawl(tmp_path, toml)
    refused(proc, feed_server, "[[feeds]] entry 1 (vendor 'openai'): 'delay' must be a number")


def test_invalid_classification_rules(tmp_path, feed_server, feeds):
    rules = tmp_path / "classify.toml"
    rules.write_text('version = "x"\n[[rules]]\nvendor = ["a"]\ndecision_hint = "MAYBE"\n')
    proc = run_crawl(tmp_path, feeds, env=crawl_env(tmp_path, CROVIA_CLASSIFY_FILE=str(rules)))
    refused(proc, feed_server, "decision_hint must be one of")
