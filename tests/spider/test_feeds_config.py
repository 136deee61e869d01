"""config/feeds.toml validation: a bad entry fails with the file, the entry and the reason."""

from __future__ import annotations

import pytest

from crovia_spider.config.feeds import feeds_for_spider, load_feeds
from crovia_spider.exceptions import ConfigError
from tests.crawl import PROJECT_ROOT


def load(tmp_path, text):
    path = tmp_path / "feeds.toml"
    path.write_text(text)
    return load_feeds(path)


def test_project_default_list_is_valid_and_complete():
    feeds = load_feeds(PROJECT_ROOT / "config" / "feeds.toml")
    urls = {feed.url for feed in feeds}
    for needed in (
        "https://export.arxiv.org/rss/cs.AI",
        "https://export.arxiv.org/rss/cs.LG",
        "https://export.arxiv.org/rss/cs.CL",
        "https://export.arxiv.org/rss/stat.ML",
        "https://openai.com/news/rss.xml",
        "https://deepmind.google/blog/rss.xml",
        "https://huggingface.co/blog/feed.xml",
        "https://bair.berkeley.edu/blog/feed.xml",
    ):
        assert needed in urls
    assert all(feed.spider == "vendor_press" for feed in feeds)


def test_defaults(tmp_path):
    (feed,) = load(tmp_path, '[[feeds]]\nvendor = "a"\nurl = "https://a.example.org/feed"\n')
    assert (feed.spider, feed.category, feed.enabled, feed.delay) == (
        "vendor_press",
        "news",
        True,
        None,
    )


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ('vendor = "a"', "missing required key 'url'"),
        ('url = "https://a.example.org/"', "missing required key 'vendor'"),
        ('vendor = "A b"\nurl = "https://a.example.org/"', "use lower-case letters"),
        ('vendor = "a"\nurl = "ftp://a.example.org/"', "an absolute http(s) URL is required"),
        ('vendor = "a"\nurl = "/feed.xml"', "an absolute http(s) URL is required"),
        ('vendor = "a"\nurl = "https://a.example.org/"\nenabeld = false', "unknown key(s) enabeld"),
        ('vendor = "a"\nurl = "https://a.example.org/"\nenabled = "no"', "must be true or false"),
        ('vendor = "a"\nurl = "https://a.example.org/"\ndelay = -1', "between 0 and 3600"),
        ('vendor = "a"\nurl = "https://a.example.org/"\ndelay = true', "a number of seconds"),
        ('vendor = "a"\nurl = "https://a.example.org/"\nspider = "x-y"', "'spider' = 'x-y'"),
    ],
)
def test_bad_entries_name_file_entry_and_reason(tmp_path, entry, reason):
    good = '[[feeds]]\nvendor = "ok"\nurl = "https://ok.example.org/"\n'
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, f"{good}\n[[feeds]]\n{entry}\n")
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'feeds.toml'}: [[feeds]] entry 2")
    assert reason in message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "no [[feeds]] entries"),
        ("[[feeds]\n", "cannot read the feed list"),
        (
            '[[feeds]]\nvendor = "a"\nurl = "https://a.example.org/"\n'
            '[[feeds]]\nvendor = "a"\nurl = "https://b.example.org/"\n',
            "entry 2: duplicate vendor 'a'",
        ),
        (
            '[[feeds]]\nvendor = "a"\nurl = "https://a.example.org/"\n'
            '[[feeds]]\nvendor = "b"\nurl = "https://a.example.org/"\n',
            "entry 2: duplicate url",
        ),
    ],
)
def test_bad_files(tmp_path, text, reason):
    with pytest.raises(ConfigError, match=reason.replace("[", r"\[")):
        load(tmp_path, text)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the feed list"):
        load_feeds(tmp_path / "absent.toml")


def test_selecting_feeds(tmp_path):
    feeds = load(
        tmp_path,
        '[[feeds]]\nvendor = "a"\nurl = "https://a.example.org/"\n'
        '[[feeds]]\nvendor = "b"\nurl = "https://b.example.org/"\nenabled = false\n'
        '[[feeds]]\nvendor = "c"\nurl = "https://c.example.org/"\nspider = "other"\n'
        "new_spider = true\n",
    )
    assert [f.vendor for f in feeds_for_spider(feeds, "vendor_press")] == ["a"]
    assert [f.vendor for f in feeds_for_spider(feeds, "vendor_press", "b")] == ["b"]
    assert [f.vendor for f in feeds_for_spider(feeds, "other")] == ["c"]
    with pytest.raises(ConfigError, match="no feed with vendor 'c' for spider 'vendor_press'"):
        feeds_for_spider(feeds, "vendor_press", "c")


def test_selecting_feeds_by_pattern_and_skipping(tmp_path):
    feeds = load(
        tmp_path,
        '[[feeds]]\nvendor = "arxiv_cs_ai"\nurl = "https://a.example.org/"\n'
        '[[feeds]]\nvendor = "arxiv_cs_lg"\nurl = "https://b.example.org/"\n'
        '[[feeds]]\nvendor = "arxiv_old"\nurl = "https://c.example.org/"\nenabled = false\n'
        '[[feeds]]\nvendor = "openai"\nurl = "https://d.example.org/"\n',
    )
    vendors = lambda **kw: [f.vendor for f in feeds_for_spider(feeds, "vendor_press", **kw)]  # noqa: E731
    assert vendors(vendor="arxiv_*") == ["arxiv_cs_ai", "arxiv_cs_lg"]
    assert vendors(vendor="arxiv_old, openai") == ["arxiv_old", "openai"]
    assert vendors(skip="arxiv_*") == ["openai"]
    assert vendors(vendor="arxiv_*", skip="arxiv_cs_lg") == ["arxiv_cs_ai"]
    with pytest.raises(ConfigError, match="once 'arxiv_\\*,openai' is skipped"):
        feeds_for_spider(feeds, "vendor_press", skip="arxiv_*,openai")
