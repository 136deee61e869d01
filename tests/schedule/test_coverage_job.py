"""`coverage = true` jobs: arXiv's signed completeness statement made every weekday by the
scheduler, without a person (docs/spider.md "arXiv, complete"; docs/operations.md).

Parsed and refused as the other job kinds are; run as `crovia arxiv coverage --record --from D`
(D: COVERAGE_DAYS before the run); in the default schedule after the daily arXiv crawl, which
harvests the OAI-PMH source, and before the hourly seal. For real: a crawl of an arXiv RSS feed
and of the loopback OAI-PMH fixture into a scratch ledger, then `crovia schedule` running only
the coverage job, which signs the days of its window (once: a second run signs nothing), leaves
a day older than the window to a run by hand, and whose record's receipt `crovia verify` accepts
under this site's key.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime, timedelta

import pytest

from crovia_spider.config.feeds import OAIPMH_KIND, feeds_for_spider, load_feeds
from crovia_spider.exceptions import ConfigError
from crovia_spider.schedule.children import job_command
from crovia_spider.schedule.config import COVERAGE_DAYS, load_schedule, parse_job
from ledger.keys import load_signing_key
from tests.crawl import crawl_env, crovia, leaves, run_crawl
from tests.schedule.conftest import ROOT, write_schedule
from tests.spider.oaipmh_server import OaiServer, Paper, rss

DEFAULT = ROOT / "config" / "schedule.toml"


def fire(job, after: datetime) -> datetime:
    return job.trigger.get_next_fire_time(None, after).astimezone(UTC)


def test_a_coverage_job_runs_crovia_arxiv_coverage_record_over_its_window() -> None:
    job = parse_job({"name": "cov", "coverage": True, "cron": "30 6 * * 1-5"})
    assert job.coverage and not job.is_seal and job.spider is None and job.args == ()
    assert job.action.startswith("crovia arxiv coverage --record --from ")
    assert job_command(job, ["never", "used"], today=date(2026, 11, 27)) == [
        sys.executable, "-m", "crovia_spider", "arxiv", "coverage", "--record",
        "--from", (date(2026, 11, 27) - timedelta(days=COVERAGE_DAYS)).isoformat(),
    ]  # fmt: skip
    # the window is the run's: the date is taken when the child is built, not when loaded
    today = datetime.now(UTC).date()
    assert job_command(job, [])[-1] == (today - timedelta(days=COVERAGE_DAYS)).isoformat()
    assert COVERAGE_DAYS >= 7  # a week's outage of the scheduler loses no day's statement


COVERAGE = 'name = "c"\ncoverage = true\nevery = "1d"\n'


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (COVERAGE.replace("true", '"yes"'), "job 'c': 'coverage' must be true"),
        (COVERAGE.replace("true", "false"), "job 'c': 'coverage' must be true"),
        (COVERAGE + 'spider = "vendor_press"\n', "job 'c': a job is one of"),
        (COVERAGE + "seal = true\n", "job 'c': a job is one of"),
        (COVERAGE + "stamp = true\n", "job 'c': a job is one of"),
        (COVERAGE + "publish = true\n", "job 'c': a job is one of"),
        (COVERAGE + 'args = ["--from", "2026-01-01"]\n', "a coverage job has no 'args'"),
        (COVERAGE.replace('every = "1d"\n', ""), "job 'c': give exactly one trigger"),
        (COVERAGE + 'cron = "30 6 * * *"\n', "job 'c': give exactly one trigger"),
        (COVERAGE + "jitter = -3\n", "'jitter' must be a whole number"),
        (COVERAGE + "colour = 1\n", "job 'c': unknown key(s) ['colour']"),
    ],
)
def test_a_bad_coverage_job_is_refused_on_load(tmp_path, body, reason) -> None:
    path = write_schedule(tmp_path / "bad.toml", "[[jobs]]\n" + body)
    with pytest.raises(ConfigError) as caught:
        load_schedule(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert reason in str(caught.value)


def test_a_valid_coverage_job_loads_beside_the_others(tmp_path) -> None:
    path = write_schedule(
        tmp_path / "s.toml",
        '[[jobs]]\nname = "cov"\ncoverage = true\ncron = "30 6 * * 1-5"\njitter = 60\n\n'
        '[[jobs]]\nname = "seal"\nseal = true\nevery = "1h"\n',
    )
    cov, seal = load_schedule(path)
    assert (cov.coverage, cov.jitter, cov.when) == (True, 60, "cron '30 6 * * 1-5' UTC")
    assert seal.is_seal and not seal.coverage


@pytest.mark.parametrize("sunday", ["2026-07-12", "2026-01-11"])  # summer (EDT), winter (EST)
def test_the_default_schedule_signs_coverage_after_each_arxiv_crawl_before_the_seal(sunday):
    jobs = {job.name: job for job in load_schedule(DEFAULT)}
    (coverage,) = [job for job in jobs.values() if job.coverage]
    arxiv, seal = jobs["arxiv"], jobs["seal"]
    # the arXiv crawl harvests the OAI-PMH source with the RSS feeds: the days it signs are read
    feeds = load_feeds(ROOT / "config" / "feeds.toml")
    spider_args = dict(a.split("=", 1) for a in arxiv.args if a != "-a")
    crawled = feeds_for_spider(feeds, arxiv.spider, **spider_args)
    assert any(f.kind == OAIPMH_KIND for f in crawled) and any(
        f.kind != OAIPMH_KIND for f in crawled
    )
    week = datetime.fromisoformat(sunday).replace(tzinfo=UTC)
    crawls, signs = [], []
    moment = week
    while (moment := fire(arxiv, moment + timedelta(seconds=1))) < week + timedelta(days=7):
        crawls.append(moment)
    moment = week
    while (moment := fire(coverage, moment + timedelta(seconds=1))) < week + timedelta(days=7):
        signs.append(moment)
    assert len(crawls) == len(signs) == 5  # Monday to Friday, after each announcement
    for crawled_at, signed_at in zip(crawls, signs, strict=True):
        # after the crawl's latest start (its jitter), before the first seal that follows it
        assert crawled_at + timedelta(seconds=arxiv.jitter or 0) < signed_at
        assert signed_at < fire(seal, crawled_at)
        assert coverage.jitter is None or fire(seal, crawled_at) - signed_at > timedelta(
            seconds=coverage.jitter
        )


TODAY = datetime.now(UTC).date()
DAY = TODAY - timedelta(days=2)  # inside the job's window
OLD = TODAY - timedelta(days=COVERAGE_DAYS + 6)  # before it
PAPERS = [Paper(f"2612.0040{n}", DAY.isoformat(), categories="cs.AI") for n in range(1, 4)]
NOT_LISTED = Paper("2612.00409", DAY.isoformat())  # announced by the RSS, never listed
ANCIENT = Paper("2612.00001", OLD.isoformat(), categories="cs.AI")


def coverage_records(tmp_path) -> list[dict]:
    return [e for e in leaves(tmp_path) if e["axiom_type"] == "AX.COVERAGE"]


def test_the_scheduler_signs_coverage_of_a_real_crawl(tmp_path, start_scheduler) -> None:
    with OaiServer([ANCIENT, *PAPERS], page_size=2) as server:
        server.rss["cs.AI"] = rss("cs.AI", DAY, [(p, "new") for p in [*PAPERS[:2], NOT_LISTED]])
        feeds = [
            {"vendor": "arxiv_cs_ai", "url": server.rss_url("cs.AI")},
            {"vendor": "arxiv_oai", "url": server.url, "kind": "oaipmh", "set": ["cs"]},
        ]
        # the daily arXiv job's crawl, its harvest started far enough back to list OLD too
        crawl = run_crawl(
            tmp_path, feeds, "-a", "vendor=arxiv_*", "-s", f"CROVIA_OAI_FROM={OLD.isoformat()}"
        )
        assert crawl.returncode == 0, crawl.stderr[-3000:]
    assert not coverage_records(tmp_path)
    schedule = write_schedule(
        tmp_path / "schedule.toml", '[[jobs]]\nname = "cov"\ncoverage = true\nevery = "1s"\n'
    )
    scheduler = start_scheduler(["--config", str(schedule)], crawl_env(tmp_path))

    first, second = scheduler.wait_for(r"job=cov finished", count=2, timeout=90)
    assert scheduler.stop() == 0

    since = (TODAY - timedelta(days=COVERAGE_DAYS)).isoformat()
    started = [line for line in scheduler.lines if "job=cov started pid=" in line]
    assert len(started) == 2 and "crovia arxiv coverage --record --from" in started[0]
    assert "recorded 1 coverage record(s)" in scheduler.log(), scheduler.log()
    # the first run signed and sealed; the second found nothing changed and wrote nothing
    (record,) = coverage_records(tmp_path)
    seals = (tmp_path / "ledger" / "seals.jsonl").read_text().splitlines()
    assert " exit=0 seal=leaf_count:" in first, first
    assert json.loads(seals[-1])["leaf_count"] == len(leaves(tmp_path))
    assert " exit=0 seal=none " in second, second
    body = record["body"]
    assert (body["category"], body["day"]) == ("cs.AI", DAY.isoformat())
    assert body["rss"]["state"] == "read" and body["oai"]["state"] == "complete"
    assert body["both"]["count"] == 2 and body["rss_only"]["ids"] == [NOT_LISTED.id]
    assert body["oai_only"]["ids"] == [PAPERS[2].id]
    assert record["body"]["day"] >= since

    # a day before the window is left to a run by hand, which signs it
    by_hand = crovia(tmp_path, "arxiv", "coverage", "--record", "--json", "--from", OLD.isoformat())
    assert by_hand.returncode == 0, by_hand.stdout + by_hand.stderr
    assert len(json.loads(by_hand.stdout)["recorded"]) == 1
    assert [r["body"]["day"] for r in coverage_records(tmp_path)] == [DAY.isoformat(), str(OLD)]

    # what the scheduler signed verifies as any receipt, under this site's key only
    pin = load_signing_key(tmp_path / "keys" / "signing.key").verify_key.encode().hex()
    receipt = tmp_path / "coverage.json"
    proved = crovia(tmp_path, "prove", record["axiom_id"], "--out", str(receipt))
    assert proved.returncode == 0, proved.stderr
    verified = crovia(tmp_path, "verify", str(receipt), "--pubkey", pin)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"arXiv cs.AI on {DAY.isoformat()}: RSS read (announced 3)" in verified.stdout
    audit = crovia(tmp_path, "audit", "--bodies")
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_the_docs_give_the_window_the_job_uses() -> None:
    schedule = DEFAULT.read_text(encoding="utf-8")
    operations = " ".join((ROOT / "docs" / "operations.md").read_text(encoding="utf-8").split())
    spider = " ".join((ROOT / "docs" / "spider.md").read_text(encoding="utf-8").split())
    assert f"the last {COVERAGE_DAYS} days" in schedule
    assert f"D being {COVERAGE_DAYS} days before the run's UTC date" in operations
    assert f"D {COVERAGE_DAYS} days back" in spider
    assert f"'{COVERAGE_DAYS} days ago'" in operations and f"'{COVERAGE_DAYS} days ago'" in spider
