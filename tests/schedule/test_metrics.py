"""Metrics an operator can monitor (issue 17, obs 11): `crovia schedule --metrics-port` serves them
over 127.0.0.1, and with CROVIA_METRICS_FILE every crawl writes them for node-exporter's textfile
collector. Both are parsed with prometheus-client's own parser and must say what the run record
(runs.jsonl) and the ledger say: per feed its last success, failures in a row and fetches by
outcome; items issued by vendor and change; leaves and the lag of seal, stamp and publish.

Crawls are real (`scrapy crawl` against tests/feedserver.py on 127.0.0.1), one feed of three
missing (HTTP 404) so the failure metrics count something.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from crovia_spider.demo_tsa import OPENSSL, OpenSslTsa, TestPki
from tests.crawl import (
    BIN,
    FAST_SETTINGS,
    PROJECT_ROOT,
    crawl_env,
    crovia,
    run_crawl,
    run_records,
)
from tests.schedule.conftest import write_schedule

OPENAI = "openai_news_rss_prefix.xml"
ARXIV = "arxiv_cs_ai_rss2_2026-04-27_trim3.xml"


def three_feeds(server) -> list[dict[str, str]]:
    return [
        {"vendor": "openai", "url": server.url(OPENAI)},
        {"vendor": "arxiv_cs_ai", "url": server.url(ARXIV)},
        {"vendor": "gone_lab", "url": server.url("no_such_feed.xml")},  # 404 every time
    ]


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of Prometheus text, read by prometheus-client."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def expected(runs: list[dict], leaves: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """What the metrics must say, computed here from the run records and the leaf count alone."""
    want: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    fetches: Counter[tuple[str, str]] = Counter()
    for run in runs:
        finished = datetime.fromisoformat(run["finished_at"].replace("Z", "+00:00")).timestamp()
        for feed in run["feeds"]:
            vendor = feed["vendor"]
            failed = bool(feed["error"]) or feed["status"] not in (200, 304)
            outcome = "failed" if failed else "not_modified" if feed["status"] == 304 else "ok"
            fetches[vendor, outcome] += 1
            streak = ("crovia_feed_consecutive_failures", (("vendor", vendor),))
            want[streak] = want.get(streak, 0) + 1 if failed else 0
            if not failed:
                want["crovia_feed_last_success_timestamp_seconds", (("vendor", vendor),)] = finished
            for change in ("new", "updated"):
                key = ("crovia_items_issued_total", (("change", change), ("vendor", vendor)))
                want[key] = want.get(key, 0) + feed[change]
    for (vendor, outcome), n in fetches.items():
        want["crovia_feed_fetches_total", (("outcome", outcome), ("vendor", vendor))] = n
    want["crovia_crawl_runs_total", (("outcome", "finished"), ("spider", "vendor_press"))] = len(
        runs
    )
    want["crovia_ledger_leaves", ()] = leaves
    return want


def leaf_count(base: Path) -> int:
    return len((base / "ledger" / "axiom_ledger.jsonl").read_bytes().splitlines())


def assert_matches_the_run_record(got: dict, base: Path) -> None:
    runs = run_records(base)
    want = expected(runs, leaf_count(base))
    assert {k: got.get(k) for k in want} == want
    # The failing feed never succeeded: no last-success sample rather than a made-up 0.
    assert ("crovia_feed_last_success_timestamp_seconds", (("vendor", "gone_lab"),)) not in got
    assert got["crovia_feed_consecutive_failures", (("vendor", "gone_lab"),)] == len(runs) >= 1
    # Every crawl seals at its end: sealing does not lag; no TSA or calendar is configured, so
    # stamping says so and has no lag to grow (issue 33, obs 9).
    assert got["crovia_covered_leaves", (("stage", "sealed"),)] == leaf_count(base) > 0
    assert got["crovia_lag_seconds", (("stage", "sealed"),)] == 0
    assert got["crovia_covered_leaves", (("stage", "stamped"),)] == 0
    assert got["crovia_stage_configured", (("stage", "stamped"),)] == 0
    assert ("crovia_lag_seconds", (("stage", "stamped"),)) not in got
    assert got["crovia_ledger_bytes", ()] == (base / "ledger" / "axiom_ledger.jsonl").stat().st_size


def test_schedule_serves_metrics_on_loopback_that_match_the_run_record(
    tmp_path, feed_server, start_scheduler
):
    from tests.crawl import write_feeds

    write_feeds(tmp_path / "feeds.toml", three_feeds(feed_server))
    args = ", ".join(f'"{a}"' for a in FAST_SETTINGS)
    schedule = write_schedule(
        tmp_path / "schedule.toml",
        f'[[jobs]]\nname = "harvest"\nspider = "vendor_press"\nargs = [{args}]\nevery = "3s"\n'
        '\n[[jobs]]\nname = "publish"\npublish = true\nevery = "1h"\n',
    )
    env = crawl_env(tmp_path)
    env.pop("CROVIA_PUBLISH_DIR", None)
    scheduler = start_scheduler(["--config", str(schedule), "--metrics-port", "0"], env)
    # A configured job that will not run says so at start (issue 17, obs 8), never vanishes.
    scheduler.wait_for(r"job=publish skipped: CROVIA_PUBLISH_DIR is unset")
    (line,) = scheduler.wait_for(r"metrics at http://127\.0\.0\.1:\d+/metrics")
    url = re.search(r"http://\S+", line)[0]
    scheduler.wait_for(r"job=harvest finished", count=2, timeout=90)
    # Crawls go on every 3 s: take a scrape between two of them, which neither the run record
    # nor the ledger nor its seals moved under and where every leaf is sealed (a crawl appends
    # its fetch records before it records its run, so the record alone does not say).
    ledger = tmp_path / "ledger"
    watched = [ledger / "runs.jsonl", ledger / "axiom_ledger.jsonl", ledger / "seals.jsonl"]
    for _ in range(60):
        before = [path.read_bytes() for path in watched]
        with urllib.request.urlopen(url, timeout=10) as answer:
            assert answer.headers["Content-Type"].startswith("text/plain")
            text = answer.read().decode()
        got = samples(text)
        sealed = got.get(("crovia_covered_leaves", (("stage", "sealed"),)))
        if [path.read_bytes() for path in watched] == before and sealed == len(
            before[1].splitlines()
        ):
            break
        time.sleep(0.25)
    else:
        pytest.fail("no scrape fell between two crawls")
    assert scheduler.stop() == 0
    assert len(json.loads(f"[{','.join(before[0].decode().splitlines())}]")) >= 2
    for path, content in zip(watched, before, strict=True):
        path.write_bytes(content)  # the run record and the ledger as scraped
    assert_matches_the_run_record(got, tmp_path)
    assert ("crovia_lag_seconds", (("stage", "published"),)) not in got  # no CROVIA_PUBLISH_DIR


def test_metrics_server_listens_on_loopback_only_by_default():
    from crovia_spider.cli import build_parser

    args = build_parser().parse_args(["schedule", "--metrics-port", "9108"])
    assert (args.metrics_host, args.metrics_port) == ("127.0.0.1", 9108)


def test_every_crawl_writes_the_metrics_file_atomically(tmp_path, feed_server):
    metrics = tmp_path / "textfile" / "crovia.prom"
    env = crawl_env(tmp_path, CROVIA_METRICS_FILE=str(metrics))
    proc = run_crawl(tmp_path, three_feeds(feed_server), env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    first = samples(metrics.read_text())
    assert_matches_the_run_record(first, tmp_path)

    # A line that is no run record (a hand edit, a torn copy) is counted, not fatal.
    with (tmp_path / "ledger" / "runs.jsonl").open("ab") as runs:
        runs.write(b'{"not": "a run record"}\n')
    proc = run_crawl(tmp_path, None, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    second = samples(metrics.read_text())
    assert second["crovia_runs_unreadable_lines", ()] == 1
    records = run_records(tmp_path)
    good = [r for r in records if "finished_at" in r]
    assert len(good) == 2
    want = expected(good, leaf_count(tmp_path))
    assert {k: second.get(k) for k in want} == want
    assert second["crovia_feed_fetches_total", (("outcome", "failed"), ("vendor", "gone_lab"))] == 2
    # Written by rename: nothing but the file itself is left in node-exporter's directory.
    assert [p.name for p in metrics.parent.iterdir()] == ["crovia.prom"]


def test_a_crawl_without_the_setting_writes_no_metrics_file(tmp_path, feed_server):
    proc = run_crawl(tmp_path, three_feeds(feed_server)[:1])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not list(tmp_path.rglob("*.prom"))


def test_a_stage_not_configured_says_so_instead_of_lagging(tmp_path, feed_server):
    """Issue 33, obs 9: without a TSA or calendar the stamped stage is not configured (0) and has
    no lag sample, so an alert on its lag cannot fire on every install without stamps; with a
    TSA (OpenSSL's, on 127.0.0.1) it is configured (1) and its lag is measured again."""
    metrics = tmp_path / "crovia.prom"
    env = crawl_env(tmp_path, CROVIA_METRICS_FILE=str(metrics))
    for name in ("CROVIA_TSA_URLS", "CROVIA_OTS_CALENDARS", "CROVIA_PUBLISH_DIR"):
        env.pop(name, None)
    proc = run_crawl(tmp_path, three_feeds(feed_server)[:1], env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = samples(metrics.read_text())
    assert got["crovia_stage_configured", (("stage", "sealed"),)] == 1
    assert got["crovia_stage_configured", (("stage", "stamped"),)] == 0
    assert got["crovia_stage_configured", (("stage", "published"),)] == 0
    assert ("crovia_lag_seconds", (("stage", "stamped"),)) not in got
    assert ("crovia_lag_seconds", (("stage", "published"),)) not in got
    assert got["crovia_lag_seconds", (("stage", "sealed"),)] == 0

    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    pki = TestPki(tmp_path / "pki")
    with OpenSslTsa(pki) as tsa:
        stamping = {"CROVIA_TSA_URLS": tsa.url, "CROVIA_TSA_ROOTS": str(pki.root)}
        stamped = subprocess.run(
            [str(BIN / "crovia"), "stamp"], cwd=PROJECT_ROOT, env={**env, **stamping},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert stamped.returncode == 0 and tsa.hits >= 1, stamped.stdout + stamped.stderr
    proc = run_crawl(tmp_path, None, env={**env, **stamping})
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = samples(metrics.read_text())
    assert got["crovia_stage_configured", (("stage", "stamped"),)] == 1
    assert got["crovia_covered_leaves", (("stage", "stamped"),)] > 0
    assert ("crovia_lag_seconds", (("stage", "stamped"),)) in got
    assert crovia(tmp_path, "audit").returncode == 0
