"""config/schedule.toml: what the default schedule promises, and every mistake refused on load."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from crovia_spider.config.feeds import feeds_for_spider, load_feeds
from crovia_spider.exceptions import ConfigError
from crovia_spider.schedule.config import load_schedule
from tests.schedule.conftest import ROOT, write_schedule

DEFAULT = ROOT / "config" / "schedule.toml"
NEW_YORK = ZoneInfo("America/New_York")


def next_fire(job, after: datetime) -> datetime:
    return job.trigger.get_next_fire_time(None, after).astimezone(UTC)


def test_default_schedule_loads():
    jobs = load_schedule(DEFAULT)
    assert len({j.name for j in jobs}) == len(jobs)
    assert any(j.is_seal for j in jobs)
    assert any(j.spider and "skip=arxiv_*" in j.args for j in jobs), "no job crawls the vendors"


def test_default_schedule_crawls_every_default_feed_exactly_once():
    feeds = load_feeds(ROOT / "config" / "feeds.toml")
    crawled: list[str] = []
    for job in load_schedule(DEFAULT):
        if job.spider:
            spider_args = dict(a.split("=", 1) for a in job.args if a != "-a")
            crawled += [f.vendor for f in feeds_for_spider(feeds, job.spider, **spider_args)]
    assert sorted(crawled) == sorted(f.vendor for f in feeds if f.enabled)


@pytest.mark.parametrize("sunday", ["2026-07-12", "2026-01-11"])  # summer (EDT), winter (EST)
def test_default_arxiv_jobs_run_once_after_each_announcement(sunday):
    arxiv = [j for j in load_schedule(DEFAULT) if "vendor=arxiv_*" in j.args]
    assert arxiv, "no arXiv job in the default schedule"
    day = datetime.fromisoformat(sunday)
    for offset in range(5):  # announcements Sunday..Thursday, 20:00 New York time
        announced = (day + timedelta(days=offset)).replace(hour=20, tzinfo=NEW_YORK)
        # the feeds are rebuilt at midnight US Eastern Standard Time, 05:00 UTC
        rebuilt = announced.astimezone(UTC).replace(hour=5, minute=0)
        for job in arxiv:
            fire = next_fire(job, announced)
            assert rebuilt <= fire < rebuilt + timedelta(hours=4), job.name
            assert next_fire(job, fire + timedelta(seconds=1)) - fire >= timedelta(hours=20)


def test_default_vendor_and_seal_jobs_are_hourly():
    start = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    for job in load_schedule(DEFAULT):
        if (job.is_seal or not job.args) and not job.coverage:  # coverage: daily
            first = next_fire(job, start)
            second = next_fire(job, first + timedelta(seconds=1))
            assert first - start <= timedelta(hours=1), job.name
            assert timedelta(minutes=30) <= second - first <= timedelta(minutes=90), job.name


def test_a_valid_schedule_in_full(tmp_path):
    path = write_schedule(
        tmp_path / "s.toml",
        """
        [[jobs]]
        name = "openai"
        spider = "vendor_press"
        args = ["-a", "vendor=openai"]
        every = "15m"
        jitter = 30

        [[jobs]]
        name = "rome-seal"
        seal = true
        cron = "0 9 * * mon-fri"
        timezone = "Europe/Rome"
        """,
    )
    crawl, seal = load_schedule(path)
    assert (crawl.name, crawl.spider, crawl.args, crawl.jitter) == (
        "openai", "vendor_press", ("-a", "vendor=openai"), 30,
    )  # fmt: skip
    assert crawl.action == "scrapy crawl vendor_press -a vendor=openai"
    assert crawl.when == "every 15m"
    assert seal.is_seal and seal.action == "crovia seal"
    assert seal.when == "cron '0 9 * * mon-fri' Europe/Rome"
    monday = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    assert next_fire(seal, monday) == datetime(2026, 11, 30, 8, 0, tzinfo=UTC)  # 09:00 CET


JOB = 'name = "j"\nspider = "vendor_press"\nevery = "1h"\n'


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("[[jobs]]\n" + JOB + "colour = 'red'\n", "job 'j': unknown key(s) ['colour']"),
        ("[[jobs]]\n" + JOB + "cron = '0 * * * *'\n", "job 'j': give exactly one trigger"),
        ('[[jobs]]\nname = "j"\nseal = true\n', "job 'j': give exactly one trigger"),
        ("[[jobs]]\n" + JOB.replace("1h", "soon"), "job 'j': bad duration 'soon'"),
        ("[[jobs]]\n" + JOB.replace("1h", "0s"), "job 'j': bad duration '0s'"),
        ("[[jobs]]\n" + JOB.replace('every = "1h"', 'cron = "0 25 * * *"'), "job 'j': bad cron"),
        ("[[jobs]]\n" + JOB.replace('every = "1h"', 'cron = "* * *"'), "expected 5 fields"),
        (
            "[[jobs]]\n" + JOB.replace('every = "1h"', 'cron = "0 6 * * *"\ntimezone = "Nowhere"'),
            "job 'j': unknown timezone 'Nowhere'",
        ),
        ("[[jobs]]\n" + JOB + 'timezone = "UTC"\n', "'timezone' applies to 'cron' only"),
        ("[[jobs]]\n" + JOB + "[[jobs]]\n" + JOB, "job 'j': duplicate name"),
        ("[[jobs]]\n" + JOB + "seal = true\n", "job 'j': give exactly one of"),
        ('[[jobs]]\nname = "j"\nevery = "1h"\n', "job 'j': give exactly one of"),
        ('[[jobs]]\nname = "j"\nseal = false\nevery = "1h"\n', "'seal' must be true"),
        (
            '[[jobs]]\nname = "j"\nseal = true\nargs = []\nevery = "1h"\n',
            "'args' belongs to crawls",
        ),
        ("[[jobs]]\n" + JOB + 'args = "-a vendor=x"\n', "'args' must be a list of strings"),
        ("[[jobs]]\n" + JOB + "jitter = -1\n", "'jitter' must be a whole number"),
        ("[[jobs]]\n" + JOB + "jitter = 1.5\n", "'jitter' must be a whole number"),
        ("[[jobs]]\n" + JOB.replace('"vendor_press"', '"../evil"'), "'spider' must be a spider"),
        ("[[jobs]]\n" + JOB.replace('"j"', '"two words"'), "'name' must be a string"),
        ('[[jobs]]\nspider = "s"\nevery = "1h"\n', "job '#1': 'name' must be"),
        ("[settings]\nx = 1\n", "unknown top-level key(s) 'settings'; allowed: [[jobs]]"),
        ("", "no [[jobs]] entries"),
        ("jobs = 3\n", "no [[jobs]] entries"),
        ("[[jobs]\n", "not valid TOML"),
    ],
)
def test_mistakes_name_file_job_and_reason(tmp_path, body, reason):
    path = write_schedule(tmp_path / "bad.toml", body)
    with pytest.raises(ConfigError) as caught:
        load_schedule(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert reason in str(caught.value)


def test_missing_file():
    with pytest.raises(ConfigError, match="no such schedule file"):
        load_schedule(Path("/nonexistent/schedule.toml"))
