"""`crovia feeds import-opml` and `crovia feeds list`."""

from __future__ import annotations

import json

from tests.crawl import crovia, run_crawl

OPML = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0">
  <head><title>Subscriptions</title></head>
  <body>
    <outline text="AI labs" title="AI labs">
      <outline type="rss" text="OpenAI News" title="OpenAI News" xmlUrl="https://openai.com/news/rss.xml"/>
      <outline type="rss" text="BAIR Blog" xmlUrl="https://bair.berkeley.edu/blog/feed.xml"/>
      <outline type="rss" text="OpenAI News" xmlUrl="https://openai.com/news/rss"/>
      <outline type="rss" text="Gopher" xmlUrl="gopher://old.example.org/feed"/>
    </outline>
    <outline text="no feed here" htmlUrl="https://example.org/"/>
  </body>
</opml>
"""


def test_import_opml_appends_new_feeds_and_keeps_the_file_valid(tmp_path):
    feeds = tmp_path / "feeds.toml"
    feeds.write_text(
        '# my feeds\n[[feeds]]\nvendor = "bair"\nurl = "https://bair.berkeley.edu/blog/feed.xml"\n'
    )
    (tmp_path / "subs.opml").write_text(OPML)
    proc = crovia(
        tmp_path, "feeds", "import-opml", str(tmp_path / "subs.opml"), "--feeds-file", str(feeds)
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 added, 1 already configured, 1 skipped" in proc.stdout
    text = feeds.read_text()
    assert text.startswith("# my feeds\n")
    (tmp_path / "ledger").mkdir()  # `feeds list` needs a ledger directory, even an empty one
    listed = json.loads(
        crovia(tmp_path, "feeds", "list", "--feeds-file", str(feeds), "--json").stdout
    )
    assert [(f["vendor"], f["url"]) for f in listed] == [
        ("bair", "https://bair.berkeley.edu/blog/feed.xml"),
        ("openai_news", "https://openai.com/news/rss.xml"),
        ("openai_news_2", "https://openai.com/news/rss"),
    ]


def test_import_refuses_what_is_not_opml(tmp_path):
    (tmp_path / "x.opml").write_text("<rss/>")
    proc = crovia(tmp_path, "feeds", "import-opml", str(tmp_path / "x.opml"), "--feeds-file",
                  str(tmp_path / "feeds.toml"))  # fmt: skip
    assert proc.returncode == 2 and "not an OPML file" in proc.stderr
    assert not (tmp_path / "feeds.toml").exists()


def test_list_shows_each_feeds_last_outcome(tmp_path, feed_server):
    feeds = [
        {"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")},
        {"vendor": "gone", "url": feed_server.url("gone.xml")},
        {"vendor": "later", "url": feed_server.url("later.xml"), "enabled": False},
    ]
    assert run_crawl(tmp_path, feeds).returncode == 0
    proc = crovia(tmp_path, "feeds", "list")
    assert proc.returncode == 0, proc.stderr
    header, openai, gone, later = proc.stdout.splitlines()
    assert header.split()[:2] == ["VENDOR", "STATE"]
    assert openai.split()[:2] == ["openai", "ok"] and openai.split()[-1] == "6"
    assert gone.split()[:4] == ["gone", "failing", "1", "times"]
    assert later.split()[:2] == ["later", "disabled"]
    rows = json.loads(crovia(tmp_path, "feeds", "list", "--json").stdout)
    assert rows[0]["last_run"]["status"] == 200 and rows[0]["last_run"]["new"] == 6
    assert rows[1]["last_run"]["error"] == "HTTP 404"
