"""A spider name no spider module defines is a new spider only when an entry says so with
`new_spider = true` (issue 33, obs 7). Before, `spider = "htmlist"` (for a spider `htmllist`)
silently made a new spider that read the page as RSS, and `crovia feeds check` passed it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from crovia_spider.config.feeds import load_feeds
from crovia_spider.exceptions import ConfigError
from tests.crawl import crovia, run_crawl

CODE_SPIDERS = ("vendor_press", "htmllist")  # as if a module defined a spider `htmllist`


def entry(vendor: str, spider: str, *extra: str) -> str:
    lines = [
        f'vendor = "{vendor}"',
        f'url = "https://{vendor}.example.org/f"',
        f'spider = "{spider}"',
    ]
    return "[[feeds]]\n" + "\n".join([*lines, *extra]) + "\n"


def load(tmp_path, text, spiders=CODE_SPIDERS):
    path = tmp_path / "feeds.toml"
    path.write_text(text)
    return load_feeds(path, spiders=spiders)


def test_a_misspelt_spider_is_refused_with_a_suggestion(tmp_path):
    with pytest.raises(ConfigError) as refused:
        load(tmp_path, entry("a", "vendor_press") + entry("lab", "htmlist"))
    message = str(refused.value)
    assert message.startswith(f"{tmp_path / 'feeds.toml'}: [[feeds]] entry 2 (vendor 'lab'): ")
    assert "unknown spider 'htmlist'" in message and "did you mean 'htmllist'?" in message
    assert "new_spider = true" in message


def test_a_new_spider_is_declared(tmp_path):
    feeds = load(tmp_path, entry("lab", "lab_notes", "new_spider = true") + entry("b", "lab_notes"))
    assert [(f.spider, f.new_spider) for f in feeds] == [("lab_notes", True), ("lab_notes", False)]


def test_an_undeclared_name_far_from_every_spider_is_refused_too(tmp_path):
    with pytest.raises(ConfigError, match="unknown spider 'lab_notes'") as refused:
        load(tmp_path, entry("lab", "lab_notes"))
    assert "did you mean" not in str(refused.value)


def test_a_typo_of_a_declared_new_spider_is_refused(tmp_path):
    text = entry("a", "lab_notes", "new_spider = true") + entry("b", "lab_ntoes")
    with pytest.raises(ConfigError, match=r"entry 2 .*did you mean 'lab_notes'"):
        load(tmp_path, text)


def test_new_spider_must_be_true_or_false(tmp_path):
    with pytest.raises(ConfigError, match="'new_spider' must be true or false"):
        load(tmp_path, entry("a", "lab_notes", 'new_spider = "yes"'))


def test_the_project_spiders_are_read_from_its_spider_modules(tmp_path):
    path = tmp_path / "feeds.toml"
    path.write_text(entry("a", "vendor_pres"))
    with pytest.raises(ConfigError, match="did you mean 'vendor_press'"):
        load_feeds(path)


def test_feeds_check_refuses_it(tmp_path):
    (tmp_path / "feeds.toml").write_text(entry("lab", "vendor_pres"))
    proc = crovia(tmp_path, "feeds", "check", "--feeds-file", str(tmp_path / "feeds.toml"))
    assert proc.returncode == 2
    assert "[[feeds]] entry 1 (vendor 'lab'): unknown spider 'vendor_pres'" in proc.stderr
    assert "did you mean 'vendor_press'?" in proc.stderr


def test_a_crawl_is_refused_before_any_request(tmp_path, feed_server):
    feeds = [
        {"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")},
        {"vendor": "lab", "url": feed_server.url("a.xml"), "spider": "vendor_pres"},
    ]
    proc = run_crawl(tmp_path, feeds)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "unknown spider 'vendor_pres'" in proc.stderr
    assert feed_server.requests == []


def test_spider_names_are_read_from_source_without_scrapy(tmp_path):
    package = tmp_path / "more_spiders"
    (package / "deep").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "deep" / "__init__.py").write_text("")
    (package / "deep" / "notes.py").write_text(
        "import scrapy_is_not_imported_here\n\nclass DeepNotes:\n    name = 'deep_notes'\n"
    )
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        " from crovia_spider.config.spider_modules import spider_names;"
        " print(sorted(spider_names(('crovia_spider.spiders', 'more_spiders'))));"
        " assert 'scrapy' not in sys.modules"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['deep_notes', 'vendor_press']"
