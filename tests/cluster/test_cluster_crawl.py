"""A crawl on a cluster gives the ledger a local crawl gives: one sequencer, three workers, 60 feeds
on 12 loopback hosts, against `scrapy crawl` of the same feeds into another ledger."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ledger.store import BodyStore
from tests.cluster.harness import Cluster, feeds_on_hosts, ledger_lines, what_was_recorded
from tests.crawl import run_crawl, write_feeds
from tests.feedserver import FeedServer
from tests.sitefixture import PAGE_SELECTORS, vendor_site


def test_three_workers_give_the_ledger_a_local_crawl_gives(tmp_path: Path, redis_server) -> None:
    local_dir, cluster_dir = tmp_path / "local", tmp_path / "cluster"
    local_dir.mkdir()
    cluster_dir.mkdir()
    with feeds_on_hosts(hosts=12, per_host=5) as (servers, feeds):
        assert len(feeds) == 60
        local = run_crawl(local_dir, feeds, timeout=240)
        assert local.returncode == 0, local.stderr[-3000:]
        with Cluster(cluster_dir, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            for name in ("w1", "w2", "w3"):
                cluster.worker(name)
            done = cluster.crawl()
            assert done.returncode == 0, done.stdout + done.stderr + cluster.log("sequencer")
            assert "60 feeds (0 failed)" in done.stdout, done.stdout
            status = json.loads(cluster.run("workers", "--redis", cluster.url, "--json").stdout)
        requests = sum(len(server.requests) for server in servers)

    local_items, local_fetches = what_was_recorded(local_dir / "ledger")
    items, fetches = what_was_recorded(cluster_dir / "ledger")
    assert len(local_fetches) == 60 and len(local_items) > 60
    assert items == local_items
    assert fetches == local_fetches
    # Every worker took part, and each feed (and each host's robots.txt) was fetched once per
    # crawl: 60 + 12 for the local crawl, and at most three robots.txt a host for the cluster.
    workers = {worker["name"] for worker in status["workers"]}
    assert workers == {"w1", "w2", "w3"}
    assert 60 + 12 + 60 + 12 <= requests <= 60 + 12 + 60 + 36
    assert status["queue"] == {
        "waiting": 0, "pending": 0, "oldest_seconds": 0.0, "redelivered": 0, "refused": 0,
        "runs_waiting": 0,
    }  # fmt: skip
    # One run record, the whole ledger sealed, and the audit clean.
    runs = (cluster_dir / "ledger" / "runs.jsonl").read_text().splitlines()
    assert len(runs) == 1 and json.loads(runs[0])["outcome"] == "finished"
    audit = cluster.run("audit", "--ledger-dir", str(cluster_dir / "ledger"))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert f"audit ok: {len(ledger_lines(cluster_dir / 'ledger'))} leaves" in audit.stdout
    # The workers' logs name no signing key; the sequencer's children signed everything.
    for name in ("w1", "w2", "w3"):
        assert "signing.key" not in cluster.log(name)


def test_a_second_crawl_on_the_cluster_sends_conditional_gets(tmp_path: Path, redis_server):
    """The feed state stays with the sequencer and travels in the jobs: the second run's fetches
    are conditional, answered 304, and its fetch records say not_modified as a local one's."""
    with feeds_on_hosts(hosts=2, per_host=2) as (servers, feeds):
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            cluster.worker("w1")
            first = cluster.crawl()
            assert first.returncode == 0, first.stdout + first.stderr
            second = cluster.crawl()
            assert second.returncode == 0, second.stdout + second.stderr
        conditional = [r for s in servers for r in s.requests if "if-none-match" in r.headers]
    assert len(conditional) == 4
    outcomes = [
        e["body"]["outcome"]
        for e in ledger_lines(tmp_path / "ledger")
        if e.get("axiom_type") == "AX.FETCH"
    ]
    assert sorted(outcomes[4:]) == ["not_modified"] * 4, outcomes


def test_a_worker_needs_no_config_for_a_spider_made_from_it(tmp_path: Path, redis_server) -> None:
    """A spider made from feeds.toml (`new_spider = true`) runs on a worker whose machine has no
    feeds.toml, key or ledger: the job names it, and the worker makes it as the loader would."""
    bare = {k: v for k, v in os.environ.items() if not k.startswith("CROVIA_")}
    bare["CROVIA_FEEDS_FILE"] = str(tmp_path / "nowhere" / "feeds.toml")
    with feeds_on_hosts(hosts=1, per_host=2) as (_, feeds):
        for feed in feeds:
            feed.update(spider="lab_press", new_spider=True)
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            cluster.worker("bare", env=bare)
            done = cluster.crawl()
            assert done.returncode == 0, done.stdout + done.stderr + cluster.log("bare")
    assert "crawl lab_press: run lab_press_" in done.stdout
    assert "2 feeds (0 failed)" in done.stdout
    spiders = {e["body"]["spider"] for e in ledger_lines(tmp_path / "ledger")
               if e.get("axiom_type") == "AX.FETCH"}  # fmt: skip
    assert spiders == {"lab_press"}


def test_every_kind_of_source_gives_the_same_records_on_a_cluster(tmp_path: Path, redis_server):
    """A sitemap index walked (its parts and their bodies), a listing page read by selectors and
    a JSON Feed: the records a worker's reading gives are those of a local crawl."""
    local_dir, cluster_dir = tmp_path / "local", tmp_path / "cluster"
    local_dir.mkdir()
    cluster_dir.mkdir()
    with FeedServer(host="127.0.0.2") as server:
        urls = vendor_site(server)
        feeds = [
            {"vendor": "lab", "url": urls["robots.txt"], "kind": "sitemap",
             "include": ["/news/"], "exclude": ["/tag/"], "capture": False},
            {"vendor": "lab_news", "url": urls["news"], "kind": "page",
             "selectors": PAGE_SELECTORS, "capture": False},
            {"vendor": "lab_notes", "url": urls["feed.json"], "kind": "jsonfeed"},
        ]  # fmt: skip
        write_feeds(local_dir / "feeds.toml", _toml(feeds))
        local = run_crawl(local_dir, None, timeout=240)
        assert local.returncode == 0, local.stderr[-3000:]
        with Cluster(cluster_dir, redis_server.url) as cluster:
            write_feeds(cluster_dir / "feeds.toml", _toml(feeds))
            cluster.sequencer()
            cluster.worker("w1")
            done = cluster.crawl()
            assert done.returncode == 0, done.stdout + done.stderr + cluster.log("sequencer")
    local_items, local_fetches = what_was_recorded(local_dir / "ledger")
    items, fetches = what_was_recorded(cluster_dir / "ledger")
    assert len(local_items) == 3 + 3 + 2 and len(local_fetches) == 3
    assert (items, fetches) == (local_items, local_fetches)
    walk = next(e["body"] for e in ledger_lines(cluster_dir / "ledger")
            if e.get("axiom_type") == "AX.FETCH" and e["body"]["vendor"] == "lab")  # fmt: skip
    assert len(walk["parts"]) == 3
    store = BodyStore(cluster_dir / "ledger")
    assert all(store.get(part["body_sha256"]) for part in walk["parts"])
    audit = cluster.run("audit", "--ledger-dir", str(cluster_dir / "ledger"))
    assert audit.returncode == 0, audit.stdout + audit.stderr


def _toml(feeds: list[dict]) -> str:
    """feeds.toml text of `feeds`, whose values may be tables (a page's selectors)."""
    tables = []
    for feed in feeds:
        lines = ["[[feeds]]"]
        for key, value in feed.items():
            if isinstance(value, dict):
                pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
                lines.append(f"{key} = {{ {pairs} }}")
            else:
                lines.append(f"{key} = {json.dumps(value)}")
        tables.append("\n".join(lines) + "\n")
    return "\n".join(tables)
