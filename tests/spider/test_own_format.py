"""A spider written from `scrapy genspider -t feed` keeps every guarantee of the base, whatever it
reads: the fetch record's entries are the items it yields for a body (count and identity digest),
and `crovia history` / `crovia absent` read the kept body again with the spider's own reading.

Each spider here is generated into a package of the test's own, registered through a settings
module (SCRAPY_SETTINGS_MODULE) that both `scrapy crawl` and `crovia` read, and crawled against
tests/fixtures/feeds on 127.0.0.1.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.crawl import BIN, PROJECT_ROOT, crawl_env, envelopes, fetch_records, run_crawl

NOTES = "lab_notes_sample.jsonl"  # three notes, one JSON object a line
NOTE_URLS = [f"https://notes.example.org/n/{n}" for n in (1, 2, 3)]
IMPORTS = "import hashlib\nimport json\n\nfrom crovia_spider.spiders.base import fetch_evidence\n"

# The documented way for a format of one's own: the spider yields the body's entries.
PARSE_ENTRIES = """
    fixtures = ("lab_notes_sample.jsonl",)

    def parse_entries(self, response):
        for line in response.body.decode("utf-8").splitlines():
            note = json.loads(line)
            yield {"id": note["id"], "title": note["title"], "link": note["url"],
                   "summary": note["text"], "published": note["date"]}
"""
# The way the old template left open: the spider makes and yields the items itself.
READ_ENTRIES = """
    fixtures = ("lab_notes_sample.jsonl",)

    def read_entries(self, parsed, feed, response, observed_at):
        sha256 = hashlib.sha256(response.body).hexdigest()
        for line in response.body.decode("utf-8").splitlines():
            note = json.loads(line)
            entry = {"id": note["id"], "title": note["title"], "link": note["url"],
                     "summary": note["text"], "published": note["date"]}
            item = self.entry_item(entry, feed, response, observed_at)
            item.fetch = fetch_evidence(response, sha256, observed_at)
            item.body = response.body
            yield item
"""
# An RSS spider with its own reading of an entry (the guid of a source that reuses them).
ENTRY_ITEM = """
    def entry_item(self, entry, feed, response, observed_at):
        item = super().entry_item(entry, feed, response, observed_at)
        item.guid = "lab:" + item.guid
        return item
"""


def generate(tmp_path: Path, name: str, body: str) -> dict[str, str]:
    """`scrapy genspider -t feed NAME` into a package of the test's own, with `body` added to the
    class; the environment of a crawl (and of `crovia`) that knows the spider."""
    code = tmp_path / "code"  # not tmp_path itself, whose ledger/ would shadow the package
    package = code / "own_spiders"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (code / "own_settings.py").write_text(
        "from crovia_spider.settings import *  # noqa: F403\n\n"
        'SPIDER_MODULES = ["crovia_spider.spiders", "own_spiders"]\n'
        'NEWSPIDER_MODULE = "own_spiders"\n'
    )
    env = crawl_env(tmp_path, PYTHONPATH=str(code), SCRAPY_SETTINGS_MODULE="own_settings")
    subprocess.run(
        [str(BIN / "scrapy"), "genspider", "-t", "feed", name, "https://notes.example.org/"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    source = package / f"{name}.py"
    source.write_text(IMPORTS + source.read_text() + body)
    return env


def crovia(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "crovia"), *args], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def crawl(tmp_path, env, server, name, fixture):
    feeds = [{"vendor": "lab", "url": server.url(fixture), "spider": name}]
    proc = run_crawl(tmp_path, feeds, spider=name, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (record,) = fetch_records(tmp_path)
    return record["body"], envelopes(tmp_path)


@pytest.mark.parametrize(
    "hook", [PARSE_ENTRIES, READ_ENTRIES], ids=["parse_entries", "read_entries"]
)
def test_a_format_of_ones_own_keeps_its_fetch_entries(tmp_path, feed_server, hook):
    env = generate(tmp_path, "lab_notes", hook)
    body, items = crawl(tmp_path, env, feed_server, "lab_notes", NOTES)
    assert [item["body"]["spider_record"]["url"] for item in items] == NOTE_URLS
    assert body["outcome"] == "new_body"
    entries = body["entries"]
    assert (entries["count"], entries["in_body"], entries["over_limit"], entries["unread"]) == (
        3, 3, 0, 0,
    )  # fmt: skip
    identities = [item["object"]["identity"] for item in items]
    from ledger.records.fetch import entries_digest

    assert entries["identities_sha256"] == entries_digest(identities)

    history = crovia(env, "history", "--url", NOTE_URLS[1])
    assert history.returncode == 0, history.stderr
    assert "proves nothing" not in history.stdout and "held it" in history.stdout
    present = crovia(env, "absent", "--url", NOTE_URLS[1], "--at", "2100-01-01")
    assert present.returncode == 1, present.stdout + present.stderr
    gone = "https://notes.example.org/n/9"
    absent = crovia(env, "absent", "--url", gone, "--vendor", "lab", "--at", "2100-01-01")
    assert absent.returncode == 0, absent.stdout + absent.stderr


def test_an_own_reading_of_entries_is_the_one_read_again(tmp_path, feed_server):
    env = generate(tmp_path, "lab_rss", ENTRY_ITEM)
    body, items = crawl(tmp_path, env, feed_server, "lab_rss", "openai_news_rss_prefix.xml")
    assert items and all(i["object"]["identity"]["guid"].startswith("lab:") for i in items)
    assert body["entries"]["count"] == len(items)
    url = items[0]["body"]["spider_record"]["url"]
    history = crovia(env, "history", "--url", url)
    assert history.returncode == 0, history.stdout + history.stderr
    present = crovia(env, "absent", "--url", url, "--at", "2100-01-01")
    assert present.returncode == 1, present.stdout + present.stderr


def test_the_spider_test_crawls_a_spider_against_its_own_format(tmp_path, feed_server):
    from tests.spider.test_spiders import crawls_its_fixtures

    env = generate(tmp_path, "lab_notes", PARSE_ENTRIES)
    assert crawls_its_fixtures(tmp_path, feed_server, "lab_notes", env=env) == (NOTES,)
