"""Feed health (issue 17): `crovia feeds list` is one line per feed (vendor, state, last success,
last new item, items in the ledger), `--failing` and `--json`; `crovia feeds check` validates the
config files without starting Scrapy, naming file, entry and key."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from tests.crawl import (
    PROJECT_ROOT,
    crawl_env,
    crovia,
    envelopes,
    run_crawl,
    run_records,
    write_feeds,
)
from tests.feedserver import Reply


@pytest.fixture
def crawled_twice(tmp_path, feed_server):
    feeds = [
        {"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")},
        {"vendor": "gone", "url": feed_server.script("gone.xml", Reply(404, b"gone"))},
        {"vendor": "later", "url": feed_server.url("google_blog_ai_rss_prefix.xml")},
        {"vendor": "off", "url": feed_server.url("bair_blog_rss_trim3.xml"), "enabled": False},
    ]
    write_feeds(tmp_path / "feeds.toml", feeds)
    for _ in range(2):
        proc = run_crawl(tmp_path, None, "-a", "vendor=openai,gone")
        assert proc.returncode == 0, proc.stderr[-2000:]
    return tmp_path


def test_feeds_list_is_one_line_per_feed_with_its_health(crawled_twice):
    proc = crovia(crawled_twice, "feeds", "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    rows = {line.split()[0]: line for line in lines[1:]}
    assert lines[0].split()[:2] == ["VENDOR", "STATE"] and len(rows) == 4 == len(lines) - 1
    first, second = run_records(crawled_twice)
    items = Counter(env["body"]["vendor"] for env in envelopes(crawled_twice))
    assert "ok" in rows["openai"].split()
    assert first["started_at"][:16] in rows["openai"]  # last new item: the first crawl
    assert second["started_at"][:16] in rows["openai"]  # last success: the second (304)
    assert rows["openai"].split()[-1] == str(items["openai"]) != "0"
    assert f"failing 2 times since {first['started_at'][:16]}" in rows["gone"]
    assert "never fetched" in rows["later"]
    assert "disabled" in rows["off"]


def test_feeds_list_failing_and_json(crawled_twice):
    proc = crovia(crawled_twice, "feeds", "list", "--failing")
    assert proc.returncode == 0
    assert [line.split()[0] for line in proc.stdout.splitlines()[1:]] == ["gone"]
    proc = crovia(crawled_twice, "feeds", "list", "--json")
    rows = {row["vendor"]: row for row in json.loads(proc.stdout)}
    assert rows["gone"]["state"] == "failing" and rows["gone"]["failures"] == 2
    assert rows["gone"]["last_success"] is None and rows["gone"]["items"] == 0
    assert rows["openai"]["state"] == "ok" and rows["openai"]["items"] > 0
    assert rows["later"]["state"] == "never fetched"
    assert rows["off"]["state"] == "disabled" and rows["off"]["enabled"] is False
    failing = json.loads(crovia(crawled_twice, "feeds", "list", "--json", "--failing").stdout)
    assert [row["vendor"] for row in failing] == ["gone"]


def test_feeds_check_accepts_the_projects_config():
    proc = subprocess.run(
        [sys.executable, "-m", "crovia_spider", "feeds", "check"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "feeds.toml" in proc.stdout and "classify.toml" in proc.stdout


BAD = [
    (
        "CROVIA_FEEDS_FILE",
        '[[feeds]]\nvendor = "a"\nurl = "https://example.org/a.xml"\n\n'
        '[[feeds]]\nvendor = "b"\nurl = "https://example.org/b.xml"\nenabld = false\n',
        "[[feeds]] entry 2 (vendor 'b'): unknown key(s) enabld",
    ),
    (
        "CROVIA_CLASSIFY_FILE",
        'version = "1"\n[[rules]]\nvendor = ["a"]\ndecision_hnt = "NEUTRAL"\n',
        "decision_hnt",
    ),
    ("CROVIA_SCHEDULE_FILE", '[[jobs]]\nname = "a"\nseal = true\nevry = "1h"\n', "evry"),
]


@pytest.mark.parametrize(("setting", "text", "message"), BAD, ids=[b[0] for b in BAD])
def test_feeds_check_names_file_entry_and_key(tmp_path, setting, text, message):
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    write_feeds(tmp_path / "feeds.toml", [{"vendor": "a", "url": "https://example.org/a.xml"}])
    env = crawl_env(tmp_path, **{setting: str(bad)})
    # Without Scrapy: a config check must not cost a crawler's start-up.
    code = (
        "import sys; from crovia_spider.cli import main; code = main(['feeds', 'check']);"
        " assert 'scrapy' not in sys.modules and 'twisted' not in sys.modules, 'Scrapy loaded';"
        " sys.exit(code)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert str(bad) in proc.stderr and message in proc.stderr
