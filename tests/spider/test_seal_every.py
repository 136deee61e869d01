"""A real crawl with CROVIA_SEAL_EVERY=50 over 177 leaves seals at 50, 100, 150 and at its end."""

from __future__ import annotations

import json

from tests.crawl import crovia, envelopes, run_crawl
from tests.feedserver import Reply


def rss(items: int) -> bytes:
    entries = "".join(
        f"<item><title>Post {i}</title><link>https://lab.example.org/post-{i}</link>"
        f"<guid>https://lab.example.org/post-{i}</guid>"
        f"<pubDate>Thu, 18 Jun 2026 00:00:00 -0400</pubDate><description>Body {i}</description>"
        "</item>"
        for i in range(items)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Lab</title>'
        f"<link>https://lab.example.org/</link><description>x</description>{entries}"
        "</channel></rss>"
    ).encode()


def test_seals_follow_the_setting_not_the_batch(tmp_path, feed_server):
    url = feed_server.script("lab.xml", Reply(body=rss(177), headers={"Content-Type": "text/xml"}))
    proc = run_crawl(tmp_path, [{"vendor": "lab", "url": url}], "-s", "CROVIA_SEAL_EVERY=50")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(envelopes(tmp_path)) == 177
    seals = (tmp_path / "ledger" / "seals.jsonl").read_text().splitlines()
    # 177 items and the feed's fetch record (AX.FETCH)
    assert [json.loads(line)["leaf_count"] for line in seals] == [50, 100, 150, 178]
    audited = crovia(tmp_path, "audit", "--ledger-dir", str(tmp_path / "ledger"), "--json")
    assert audited.returncode == 0, audited.stderr
    assert json.loads(audited.stdout)["seals"] == 4
