"""Every spider of the project runs against the fixtures it names (`fixtures`: samples of the
format it reads), so a new spider cannot land untested; and the two ways of adding one (a config
entry, `scrapy genspider -t feed`) work."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.crawl import (
    BIN,
    PROJECT_ROOT,
    crawl_env,
    envelopes,
    fetch_records,
    run_crawl,
    run_records,
)

FIXTURES = ("arxiv_cs_ai_rss2_2026-04-27_trim3.xml", "openai_news_rss_prefix.xml")


def scrapy_list(env: dict[str, str] | None = None, *args: str) -> list[str]:
    proc = subprocess.run(
        [str(BIN / "scrapy"), "list", *args], cwd=PROJECT_ROOT, env=env, capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    return proc.stdout.split()


def crawl_with(tmp_path, server, spider, *args, env=None, new_spider=False, fixtures=FIXTURES):
    feeds = [
        {"vendor": f"v{i}", "url": server.url(name), "spider": spider, "new_spider": new_spider}
        for i, name in enumerate(fixtures)
    ]
    return run_crawl(tmp_path, feeds, *args, spider=spider, env=env)


def spider_fixtures(spider: str, env: dict[str, str] | None = None) -> tuple[str, ...]:
    """The fixtures `spider` names, as the project loads it (FeedSpider.fixtures)."""
    code = (
        "import json, sys\nfrom crovia_spider.spiders.project_spiders import project_spider\n"
        "print(json.dumps(project_spider(sys.argv[1]).fixtures))"
    )
    proc = subprocess.run(
        [str(BIN / "python"), "-c", code, spider], cwd=PROJECT_ROOT, env=env,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return tuple(json.loads(proc.stdout))


def crawls_its_fixtures(tmp_path, server, spider, *args, env=None) -> tuple[str, ...]:
    """Crawl `spider` against its own fixtures and hold it to every guarantee of the base: each
    sample read whole, every entry an item, the fetch record's entries those items, `crovia
    absent` answering from the kept body, the ledger sound. Returns the fixtures crawled."""
    env = env or crawl_env(tmp_path)
    fixtures = spider_fixtures(spider, env)
    proc = crawl_with(tmp_path, server, spider, *args, env=env, fixtures=fixtures)
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = envelopes(tmp_path)
    assert items and {item["body"]["spider"] for item in items} == {spider}
    assert run_records(tmp_path)[0]["totals"]["new"] == len(items)
    records = [record["body"] for record in fetch_records(tmp_path)]
    assert [record["outcome"] for record in records] == ["new_body"] * len(fixtures)
    for record in records:
        read = [i for i in items if i["object"]["fetch"]["body_sha256"] == record["body_sha256"]]
        assert record["entries"]["count"] == record["entries"]["in_body"] == len(read) > 0
    url = items[-1]["body"]["spider_record"]["url"]
    ask = [str(BIN / "crovia"), "absent", "--url", url, "--at", "2100-01-01"]
    present = subprocess.run(ask, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
    assert present.returncode == 1, present.stdout + present.stderr
    audit = subprocess.run([str(BIN / "crovia"), "audit"], cwd=PROJECT_ROOT, env=env)
    assert audit.returncode == 0
    return fixtures


@pytest.mark.parametrize("spider", scrapy_list())  # the project's own config/feeds.toml
def test_every_project_spider_crawls_its_fixtures(tmp_path, feed_server, spider):
    if crawls_its_fixtures(tmp_path, feed_server, spider) == FIXTURES:
        assert run_records(tmp_path)[0]["totals"]["new"] == 9


def test_a_config_entry_makes_a_spider(tmp_path, feed_server):
    (tmp_path / "feeds.toml").write_text(
        f'[[feeds]]\nvendor = "lab"\nurl = "{feed_server.url(FIXTURES[1])}"\nspider = "lab_notes"\n'
        "new_spider = true\n"
    )
    assert "lab_notes" in scrapy_list(crawl_env(tmp_path))
    proc = crawl_with(tmp_path, feed_server, "lab_notes", new_spider=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (env,) = {e["body"]["axiom_subtype"] for e in envelopes(tmp_path)}
    assert env == "news.lab_notes.v1"


def test_genspider_template_writes_a_working_subclass(tmp_path, feed_server):
    package = tmp_path / "generated_spiders"
    package.mkdir()
    (package / "__init__.py").write_text("")
    env = crawl_env(tmp_path, PYTHONPATH=str(tmp_path))
    settings = ("-s", "NEWSPIDER_MODULE=generated_spiders")
    subprocess.run(
        [str(BIN / "scrapy"), "genspider", "-t", "feed", *settings, "deep_notes",
         "https://notes.example.org/feed.xml"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    source = (package / "deep_notes.py").read_text()
    assert "class DeepNotesSpider(FeedSpider):" in source and 'name = "deep_notes"' in source
    modules = ("-s", "SPIDER_MODULES=crovia_spider.spiders,generated_spiders")
    assert "deep_notes" in scrapy_list(env, *modules)
    proc = crawl_with(tmp_path, feed_server, "deep_notes", *modules, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert run_records(tmp_path)[0]["totals"]["new"] == 9


def test_vendor_argument_crawls_one_feed(tmp_path, feed_server):
    proc = crawl_with(tmp_path, feed_server, "vendor_press", "-a", "vendor=v1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [feed["vendor"] for feed in run_records(tmp_path)[0]["feeds"]] == ["v1"]
    assert not feed_server.requests_for(FIXTURES[0])


def test_seals_every_n_leaves_and_once_at_the_end(tmp_path, feed_server):
    settings = ("-s", "CROVIA_SEAL_EVERY=4", "-s", "CROVIA_ISSUE_BATCH=2")
    proc = crawl_with(tmp_path, feed_server, "vendor_press", *settings)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seals = (tmp_path / "ledger" / "seals.jsonl").read_text().splitlines()
    counts = [json.loads(seal)["leaf_count"] for seal in seals]
    # two automatic seals, then the one every crawl ends with: 9 items, 2 fetch records
    assert counts == [4, 8, 11]
