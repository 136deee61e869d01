"""arXiv id, version and announce type from every arXiv format the feeds use."""

from __future__ import annotations

import feedparser
import pytest

from crovia_spider.feed.arxiv import arxiv_meta
from tests.conftest import FEEDS


def metas(name: str) -> list[dict]:
    entries = feedparser.parse((FEEDS / name).read_bytes()).entries
    return [arxiv_meta(entry, entry.get("link", "")) for entry in entries]


def test_rss_2024_format():
    assert metas("arxiv_cs_ai_rss2_2026-04-27_trim3.xml")[0] == {
        "id": "2604.21935",
        "version": 1,
        "announce_type": "new",
    }


def test_every_announce_type_of_the_multi_category_feed():
    found = {
        m["announce_type"]
        for m in metas("arxiv_multi_cs_lg_ai_cl_stat_ml_rss2_2026-09-24_trim4.xml")
    }
    assert found == {"new", "cross", "replace"}


def test_legacy_rdf_titles():
    assert [
        (m["id"], m["version"], m["announce_type"])
        for m in metas("arxiv_hep-ex_rss1_rdf_2018-05-23_RECONSTRUCTED_trim3.rdf")
    ] == [("1805.08875", 1, "new"), ("1805.09166", 1, "cross"), ("1805.06430", 2, "replace")]


def test_api_atom_versioned_ids():
    found = metas("arxiv_api_query_atom_cs_ai_lg.atom")
    assert all(m is not None and m["version"] >= 1 and m["announce_type"] == "" for m in found)


@pytest.mark.parametrize(
    ("entry", "link", "expected"),
    [
        ({"summary": "arXiv:hep-th/9901001v3 Announce Type: replace-cross \nAbstract: x"},
         "https://arxiv.org/abs/hep-th/9901001", ("hep-th/9901001", 3, "replace-cross")),
        ({"title": "T. (arXiv:math.GT/0309136v1 [math.GT] UPDATED)"},
         "http://arxiv.org/abs/math.GT/0309136", ("math.GT/0309136", 1, "replace")),
        ({}, "https://arxiv.org/abs/2401.00001v4", ("2401.00001", 4, "")),
    ],
)  # fmt: skip
def test_old_style_ids_and_fallbacks(entry, link, expected):
    meta = arxiv_meta(entry, link)
    assert (meta["id"], meta["version"], meta["announce_type"]) == expected


def test_not_arxiv():
    assert (
        arxiv_meta({"summary": "arXiv:2401.00001v1 Announce Type: new"}, "https://openai.com/x")
        is None
    )
    assert arxiv_meta({}, "https://arxiv.org/list/cs.AI/new") is None


def test_an_id_that_is_no_url_is_passed_over():
    """A feed's own id is any text; one urlsplit refuses (an unclosed IPv6 bracket, found by the
    feed fuzz harness) made the whole entry fail. The link still names the paper."""
    entry = {"id": "http://[arxiv.org/abs/2401.00001v2"}
    meta = arxiv_meta(entry, "https://arxiv.org/abs/2401.00001v2")
    assert (meta["id"], meta["version"]) == ("2401.00001", 2)
    assert arxiv_meta(entry, "https://arxiv.org/list/cs.AI/new") is None
