"""Sources of kind watch: validated before anything runs, added with `crovia feeds add --watch`,
and a watched page nobody answers is a failed capture and an `unreachable` change, the crawl
exiting 0 (as `make crawl` offline)."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from crovia_spider.config.feeds import MAX_WATCH_URLS, feed_from_table, load_feeds
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, leaves, run_crawl

WATCH = {"vendor": "lab_watch", "kind": "watch", "urls": ["https://lab.example/policy"]}


def test_a_watch_source_reads_its_urls_and_interval():
    feed = feed_from_table({**WATCH, "every": "2h"})
    assert feed.url == "https://lab.example/policy" and feed.urls == (feed.url,)
    assert feed.captures and feed.every == "2h"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"urls": []}, "'urls' must hold 1 to"),
        ({"urls": [f"https://lab.example/{n}" for n in range(MAX_WATCH_URLS + 1)]}, "1 to 50"),
        ({"urls": "https://lab.example/"}, "a list of page URLs"),
        ({"urls": ["ftp://lab.example/"]}, r"an absolute http\(s\) URL"),
        ({"urls": ["https://lab.example/a", "https://lab.example/a"]}, "lists a URL twice"),
        ({"url": "https://lab.example/"}, "lists its pages in 'urls'"),
        ({"every": "1x"}, "is not an interval"),
        ({"every": "0s"}, "is not an interval"),
        ({"capture": False}, "capture = false is refused"),
        ({"kind": "feed", "url": "https://lab.example/f"}, 'option of kind "watch"'),
    ],
)
def test_a_bad_watch_entry_is_refused_saying_why(change, reason):
    with pytest.raises((TypeError, ValueError), match=reason):
        feed_from_table({**WATCH, **change})


def test_the_default_list_watches_unchecked_policy_pages():
    feeds = load_feeds(PROJECT_ROOT / "config" / "feeds.toml")
    watched = [f for f in feeds if f.kind == "watch"]
    assert {"openai_policies", "anthropic_policies"} <= {f.vendor for f in watched}
    assert "https://openai.com/policies/usage-policies/" in watched[0].urls
    readme = (PROJECT_ROOT / "docs" / "spider.md").read_text(encoding="utf-8")
    unchecked = readme.split("### Unchecked entries", 1)[1].split("\n### ", 1)[0]
    assert all(f.vendor in unchecked for f in watched)


def feeds_add(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "crovia"), "feeds", "add", *args, "--feeds-file", str(tmp_path / "f.toml")],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_feeds_add_watch_appends_a_watch_source(tmp_path):
    (tmp_path / "f.toml").write_text(
        '# mine\n[[feeds]]\nvendor = "a"\nurl = "https://a.example/f"\n'
    )
    added = feeds_add(tmp_path, "https://lab.example/legal/aup", "--watch", "--every", "6h")
    assert added.returncode == 0, added.stderr
    assert "added lab_watch: watched page https://lab.example/legal/aup" in added.stdout
    _, watch = load_feeds(tmp_path / "f.toml")
    assert (watch.vendor, watch.kind, watch.urls, watch.every) == (
        "lab_watch", "watch", ("https://lab.example/legal/aup",), "6h"
    )  # fmt: skip
    assert (tmp_path / "f.toml").read_text().startswith("# mine\n")
    again = feeds_add(tmp_path, "https://lab.example/legal/aup", "--watch", "--vendor", "b")
    assert again.returncode == 2 and "is configured already, as 'lab_watch'" in again.stderr
    bad = feeds_add(tmp_path, "https://lab.example/x", "--watch", "--every", "soon")
    assert bad.returncode == 2 and "not an interval" in bad.stderr
    assert len(load_feeds(tmp_path / "f.toml")) == 2


@pytest.mark.slow
def test_a_watched_page_nobody_answers_is_unreachable_and_the_crawl_exits_0(tmp_path):
    with socket.socket() as closed:  # a port nobody listens on: refused at once, on loopback
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"http://127.0.0.1:{port}/policy"
    crawled = run_crawl(tmp_path, f'[[feeds]]\nvendor = "w"\nkind = "watch"\nurls = ["{url}"]\n')
    assert crawled.returncode == 0, crawled.stderr[-3000:]
    (capture,) = [e for e in leaves(tmp_path) if e["axiom_type"] == "AX.CAPTURE"]
    assert capture["body"]["outcome"] == "failed" and capture["body"]["url"] == url
    shown = subprocess.run(
        [str(BIN / "crovia"), "changes", "--json"],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    (event,) = json.loads(shown.stdout)["events"]
    assert event["kind"] == "unreachable" and event["after"] is None
    assert event["records"][0]["axiom_id"] == capture["axiom_id"]
