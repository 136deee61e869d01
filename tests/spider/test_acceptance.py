"""Issue 4's acceptance: real crawls of real feed captures into a fresh ledger.

One module-scoped ledger takes two crawls over the same (unchanged) feeds: the first issues exactly
one envelope per distinct item, the ledger audits clean and receipts verify; the second sends
conditional requests, records 304 for every feed and issues nothing.
"""

from __future__ import annotations

import json
import re

import feedparser
import pytest

from ledger.keys import load_signing_key, public_key_hex
from tests.conftest import FEEDS
from tests.crawl import crovia, envelopes, feed_outcome, leaves, run_crawl, run_records

SAMPLES = {
    "arxiv_cs_ai": "arxiv_cs_ai_rss2_2026-04-27_trim3.xml",
    "arxiv_cs_lg": "arxiv_cs_lg_rss2_trim3.xml",
    "arxiv_cs_cl": "arxiv_cs_cl_rss2_trim3.xml",
    "arxiv_multi": "arxiv_multi_cs_lg_ai_cl_stat_ml_rss2_2026-09-24_trim4.xml",
    "arxiv_hep_ex_legacy": "arxiv_hep-ex_rss1_rdf_2018-05-23_RECONSTRUCTED_trim3.rdf",
    "arxiv_api": "arxiv_api_query_atom_cs_ai_lg.atom",
    "openai": "openai_news_rss_prefix.xml",
    "openai_reserialized": "openai_news_rss_reserialized_trim3.xml",
    "google_deepmind": "google_deepmind_blog_rss_full.xml",
    "google_ai_blog": "google_blog_ai_rss_prefix.xml",
    "huggingface": "huggingface_blog_rss_prefix.xml",
    "meta_engineering_ai": "meta_engineering_ai_research_wp_trim3.xml",
    "aws_blog": "aws_blog_typepad_2009.atom",
    "nvidia_newsroom": "nvidia_newsroom_ipressroom_TRANSCRIBED_trim9.xml",
    "bair": "bair_blog_rss_trim3.xml",
    "anthropic_news": "anthropic_news_GENERATED_olshansk.xml",
    "mistral_client_python_releases": "mistral_client_python_github_releases_prefix.atom",
    "together_ai": "together_ai_blog_webflow_prefix.xml",
}
_ARXIV_ID = re.compile(r"arxiv\.org/abs/([^v\s]+?)(?:v\d+)?$")


def expected_identities() -> set[str]:
    """Distinct items of the samples, from feedparser alone (not the project's code)."""
    found = set()
    for name in SAMPLES.values():
        for entry in feedparser.parse((FEEDS / name).read_bytes()).entries:
            link = entry.get("link", "")
            match = _ARXIV_ID.search(link)
            found.add(f"https://arxiv.org/abs/{match[1]}" if match else link)
    return found


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, module_feed_server):
    """A ledger after two crawls over the unchanged samples: (tmp dir, first proc, second proc)."""
    tmp = tmp_path_factory.mktemp("acceptance")
    feeds = [{"vendor": v, "url": module_feed_server.url(n)} for v, n in SAMPLES.items()]
    first = run_crawl(tmp, feeds)
    first_requests = list(module_feed_server.requests)
    module_feed_server.clear()
    second = run_crawl(tmp, feeds)
    return tmp, first, second, first_requests, list(module_feed_server.requests)


def test_first_crawl_issues_one_envelope_per_distinct_item(crawled):
    tmp, first, *_ = crawled
    assert first.returncode == 0, first.stderr[-3000:]
    issued = envelopes(tmp)
    targets = [env["subject"]["target_id"] for env in issued]
    assert len(targets) == len(set(targets))
    assert set(targets) == expected_identities()
    record = run_records(tmp)[0]
    assert record["totals"]["new"] == len(issued)
    assert all(feed["status"] == 200 and not feed["error"] for feed in record["feeds"])


def test_envelopes_carry_the_reference_shape(crawled):
    tmp, *_ = crawled
    record = run_records(tmp)[0]
    for env in envelopes(tmp):
        spider_record = env["body"]["spider_record"]
        assert len(spider_record) == 17
        assert spider_record["parent_run_hash"] == record["parent_run_hash"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", spider_record["observed_at"])
        assert len(spider_record["summary_excerpt"]) <= 1000
        assert not re.search(r"<(p|a|div|img|script|style|br)\b", spider_record["summary_excerpt"])
        assert spider_record["source_status"] == 200
        assert env["confidence"]["ruleset"]["version"]


def test_arxiv_metadata_goes_to_envelope_object(crawled):
    tmp, *_ = crawled
    by_target = {env["subject"]["target_id"]: env for env in envelopes(tmp)}
    env = by_target["https://arxiv.org/abs/2604.21935"]
    assert env["object"]["arxiv"] == {"id": "2604.21935", "version": 1, "announce_type": "new"}
    assert env["body"]["spider_record"]["summary_excerpt"].startswith(
        "arXiv:2604.21935v1 Announce Type: new Abstract: Although language models"
    )
    legacy = by_target["https://arxiv.org/abs/1805.09166"]
    assert legacy["object"]["arxiv"]["announce_type"] == "cross"
    assert legacy["decision"] == "CROSSLIST"


def test_ledger_audits_and_receipts_verify(crawled):
    tmp, *_ = crawled
    pubkey = public_key_hex(load_signing_key(tmp / "keys" / "signing.key"))
    audit = crovia(tmp, "audit", "--pubkey", pubkey)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    issued = envelopes(tmp)
    for env in (issued[0], issued[len(issued) // 2], issued[-1]):
        receipt = tmp / f"{env['axiom_id']}.json"
        proved = crovia(tmp, "prove", env["axiom_id"], "--out", str(receipt))
        assert proved.returncode == 0, proved.stderr
        verdict = crovia(tmp, "verify", str(receipt), "--pubkey", pubkey)
        assert verdict.returncode == 0, verdict.stdout + verdict.stderr
        assert json.loads(receipt.read_text())["envelope"] == env


def test_every_crawl_ends_sealed(crawled):
    tmp, *_ = crawled
    seals = [json.loads(line) for line in (tmp / "ledger" / "seals.jsonl").read_text().splitlines()]
    assert seals[-1]["leaf_count"] == len(leaves(tmp))


def test_second_crawl_sends_conditional_requests_and_issues_nothing(crawled):
    tmp, _, second, first_requests, second_requests = crawled
    assert second.returncode == 0, second.stderr[-3000:]
    sent = {r.path: r.headers for r in second_requests if r.path != "/robots.txt"}
    assert len(sent) == len(SAMPLES)
    assert all("if-none-match" in h and "if-modified-since" in h for h in sent.values())
    assert not any("if-none-match" in r.headers for r in first_requests)
    record = run_records(tmp)[1]
    assert record["totals"]["new"] == record["totals"]["updated"] == 0
    for vendor in SAMPLES:
        outcome = feed_outcome(record, vendor)
        assert outcome["status"] == 304 and outcome["not_modified"]
    assert len(envelopes(tmp)) == run_records(tmp)[0]["totals"]["new"]


def test_run_record_counts_add_up(crawled):
    tmp, *_ = crawled
    for feed in run_records(tmp)[0]["feeds"]:
        accounted = feed["new"] + feed["updated"] + feed["duplicate"] + feed["dropped"]
        assert accounted == feed["items_seen"], feed["vendor"]
        assert len(feed["sha256"]) == 64 and feed["bytes"] == len(
            (FEEDS / SAMPLES[feed["vendor"]]).read_bytes()
        )


def test_the_closing_summary_states_the_run_records_totals(crawled):
    tmp, first, *_ = crawled
    record = run_records(tmp)[0]
    totals = record["totals"]
    assert f"run {record['run_id']} finished in " in first.stderr
    assert (
        f"feeds {len(SAMPLES)} ok, 0 unchanged, 0 failed; items {totals['new']} new,"
        f" 0 updated, {totals['dropped']} dropped, {totals['duplicate']} duplicate;"
    ) in first.stderr
