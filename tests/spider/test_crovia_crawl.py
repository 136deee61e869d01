"""`crovia crawl` is `scrapy crawl vendor_press -a vendor=...` from the one CLI, from any folder of
the project, with the same items and exit status; misspelt vendors and spiders get a suggestion.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.crawl import BIN, PROJECT_ROOT, crawl_env, envelopes, run_crawl, write_feeds

FAST = {"CROVIA_POLITE_DELAYS": "0"}


def crovia_crawl(tmp_path: Path, *args: str, cwd: Path = PROJECT_ROOT, **env: str):
    return subprocess.run(
        [str(BIN / "crovia"), "crawl", *args],
        cwd=cwd,
        env=crawl_env(tmp_path, **FAST, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def three(feed_server):
    return [
        {"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")},
        {"vendor": "google_ai", "url": feed_server.url("google_blog_ai_rss_prefix.xml")},
        {"vendor": "huggingface", "url": feed_server.url("huggingface_blog_rss_prefix.xml")},
    ]


def _items(tmp_path: Path) -> list[tuple[str, str, str]]:
    return sorted(
        (env["body"]["vendor"], env["subject"]["target_id"], env["body"]["fingerprint"])
        for env in envelopes(tmp_path)
    )


def test_crovia_crawl_issues_what_scrapy_crawl_issues(tmp_path, three):
    by_scrapy, by_crovia = tmp_path / "scrapy", tmp_path / "crovia"
    for base in (by_scrapy, by_crovia):
        base.mkdir()
        write_feeds(base / "feeds.toml", three)
    scrapy = run_crawl(by_scrapy, None, "-a", "vendor=openai,hugging*")
    # From a sub-folder of the project, as a user in docs/ would type it.
    crovia = crovia_crawl(by_crovia, "openai", "hugging*", cwd=PROJECT_ROOT / "docs")
    assert scrapy.returncode == crovia.returncode == 0, crovia.stderr[-2000:]
    issued = _items(by_crovia)
    assert issued and issued == _items(by_scrapy)
    assert {vendor for vendor, _, _ in issued} == {"openai", "huggingface"}


def test_crovia_crawl_skip_and_exit_status(tmp_path, three, feed_server):
    write_feeds(tmp_path / "feeds.toml", three)
    proc = crovia_crawl(tmp_path, "--skip", "openai", "--skip", "google_*")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {vendor for vendor, _, _ in _items(tmp_path)} == {"huggingface"}
    # A refused crawl (no feed left) exits as `scrapy crawl` does, before any request.
    feed_server.requests.clear()
    proc = crovia_crawl(tmp_path, "openai", "--skip", "open*")
    refused = run_crawl(tmp_path, None, "-a", "vendor=openai", "-a", "skip=open*")
    assert proc.returncode == refused.returncode != 0
    assert feed_server.requests == []


def test_a_misspelt_vendor_gets_a_suggestion(tmp_path, three, feed_server):
    write_feeds(tmp_path / "feeds.toml", three)
    proc = crovia_crawl(tmp_path, "opnai")
    assert proc.returncode != 0
    assert "no feed with vendor 'opnai' for spider 'vendor_press'; did you mean 'openai'?" in (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr
    scrapy = run_crawl(tmp_path, None, "-a", "vendor=opnai")
    assert scrapy.returncode == proc.returncode
    assert "did you mean 'openai'?" in scrapy.stderr
    # One misspelt id among good ones is not quietly dropped either.
    scrapy = run_crawl(tmp_path, None, "-a", "vendor=openai,hugingface")
    assert scrapy.returncode != 0 and "did you mean 'huggingface'?" in scrapy.stderr
    assert feed_server.requests == []


def test_a_misspelt_spider_gets_a_suggestion(tmp_path, three, feed_server):
    write_feeds(tmp_path / "feeds.toml", three)
    proc = run_crawl(tmp_path, None, spider="vendor_pres")
    assert proc.returncode == 2 and "did you mean 'vendor_press'?" in proc.stderr
    proc = crovia_crawl(tmp_path, "--spider", "vendor_pres")
    assert proc.returncode == 2 and "did you mean 'vendor_press'?" in proc.stderr


def test_a_spider_without_feeds_says_so(tmp_path, three, feed_server):
    lab = {"vendor": "lab", "url": feed_server.url("a.xml"), "spider": "lab", "enabled": False,
           "new_spider": True}  # fmt: skip
    write_feeds(tmp_path / "feeds.toml", [*three, lab])
    proc = run_crawl(tmp_path, None, spider="lab")
    assert proc.returncode != 0
    assert "'*'" not in proc.stderr
    assert "spider 'lab' has no enabled feed" in proc.stderr


def test_crovia_crawl_from_outside_the_project_uses_the_projects_settings(tmp_path, three):
    write_feeds(tmp_path / "feeds.toml", three)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    proc = crovia_crawl(tmp_path, "openai", cwd=outside)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {vendor for vendor, _, _ in _items(tmp_path)} == {"openai"}
    assert not os.listdir(outside)
