"""Fingerprint and identity: deterministic, over identity and content only, documented formula."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from crovia_spider.items import FeedEntryItem
from pipelines.fingerprint import (
    FingerprintPipeline,
    canonical_link,
    fingerprint_doc,
    identity,
    target_id,
)


def item(**changes) -> FeedEntryItem:
    base = FeedEntryItem(
        vendor="openai", spider="vendor_press", category="news", source_url="https://f/rss",
        source_status=200, observed_at="2026-06-18T04:43:37.219665Z", parent_run_hash="0" * 64,
        title="A post", link="https://openai.com/index/a-post", guid="g1",
        published="Thu, 18 Jun 2026 00:00:00 -0400", description_html="<p>Body</p>",
    )  # fmt: skip
    base = replace(base, **changes)
    base.record = {"title": base.title, "url": base.link, "summary_excerpt": "Body",
                   "published": base.published}  # fmt: skip
    return base


def fingerprint(it: FeedEntryItem) -> str:
    doc = fingerprint_doc(it, target_id(it))
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def test_target_id_rules():
    assert target_id(item()) == "https://openai.com/index/a-post"
    assert target_id(item(link="HTTPS://OpenAI.com:443/index/a-post")) == (
        "https://openai.com/index/a-post"
    )
    # The fragment is kept: one page's anchors can be all that tells entries apart.
    assert target_id(item(link="https://code.claude.com/docs/en/changelog#2-1-238")) == (
        "https://code.claude.com/docs/en/changelog#2-1-238"
    )
    assert target_id(item(link="", guid="https://openai.com/p?id=1")) == "https://openai.com/p?id=1"
    assert target_id(item(link="", guid="g 1")) == "guid:openai:g%201"
    for hostile in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,<b>x</b>"):
        assert target_id(item(link="", guid=hostile)).startswith("guid:openai:")
    meta = {"id": "2606.19004", "version": 2, "announce_type": "replace"}
    arxiv = item(link="http://arxiv.org/abs/2606.19004", arxiv=meta, family="arxiv")
    assert target_id(arxiv) == "https://arxiv.org/abs/2606.19004"


def test_identity_is_scoped_to_the_family_and_combines_guid_and_link():
    assert identity(item()) == {
        "family": "openai", "guid": "g1", "link": "https://openai.com/index/a-post"
    }  # fmt: skip
    # Same link, distinct guids: distinct items. Same guid in another vendor's feed: another item.
    assert identity(item(guid="g2")) != identity(item())
    assert identity(item(vendor="reposter", family="reposter")) != identity(item())
    meta = {"id": "2606.19004", "version": 2, "announce_type": "replace"}
    arxiv = item(link="http://arxiv.org/abs/2606.19004v2", arxiv=meta, family="arxiv", guid="x")
    assert identity(arxiv) == {
        "family": "arxiv", "guid": "", "link": "https://arxiv.org/abs/2606.19004"
    }  # fmt: skip


def test_the_stage_sets_identity_and_the_documented_fingerprint():
    it = item()
    FingerprintPipeline(crawler=None).process_item(it)  # the stage needs no crawler to hash
    assert it.target_id == "https://openai.com/index/a-post"
    assert it.record["fingerprint"] == fingerprint(item())


def test_documented_formula_for_a_post():
    it = item()
    assert fingerprint_doc(it, target_id(it)) == {
        "v": 1, "target_id": "https://openai.com/index/a-post", "url": "https://openai.com/index/a-post",
        "title": "A post", "summary": "Body", "published": "Thu, 18 Jun 2026 00:00:00 -0400",
    }  # fmt: skip


def test_content_changes_change_the_fingerprint_and_run_data_does_not():
    same = fingerprint(item())
    assert fingerprint(item(observed_at="2027-01-01T00:00:00.000000Z", parent_run_hash="1" * 64,
                            source_status=203, vendor="other")) == same  # fmt: skip
    assert fingerprint(item(title="A post, edited")) != same


def test_arxiv_versions_and_cross_lists():
    def paper(version, announce, header_type):
        meta = {"id": "2606.19004", "version": version, "announce_type": announce}
        it = item(link="https://arxiv.org/abs/2606.19004", title="Spotlight", arxiv=meta)
        it.record["summary_excerpt"] = (
            f"arXiv:2606.19004v{version} Announce Type: {header_type} \nAbstract: RL post-training"
        )
        return fingerprint(it)

    # The same version listed as new in one category and cross in another: one fingerprint.
    assert paper(1, "new", "new") == paper(1, "cross", "cross")
    assert paper(2, "replace", "replace") != paper(1, "new", "new")


@given(st.text(), st.text())
def test_canonical_link_is_idempotent(host, path):
    url = f"https://{host.replace('/', '')}.example.org/{path}"
    try:
        once = canonical_link(url)
    except ValueError:
        return  # not a URL urllib can split: never a link feedparser gives
    assert canonical_link(once) == once
