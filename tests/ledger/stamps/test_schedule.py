"""The default schedule stamps after each hourly seal and upgrades OpenTimestamps proofs daily."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

import pytest

from crovia_spider.exceptions import ConfigError
from crovia_spider.schedule.children import job_command
from crovia_spider.schedule.config import load_schedule
from tests.schedule.conftest import ROOT, write_schedule

DEFAULT = ROOT / "config" / "schedule.toml"


def fire(job, after: datetime) -> datetime:
    return job.trigger.get_next_fire_time(None, after).astimezone(UTC)


def test_each_hourly_seal_is_followed_by_a_stamp_within_the_hour():
    jobs = {job.name: job for job in load_schedule(DEFAULT)}
    stamp, seal = jobs["stamp"], jobs["seal"]
    start = datetime(2026, 11, 27, 0, 0, tzinfo=UTC)
    for hour in range(24):
        sealed = fire(seal, start + timedelta(hours=hour))
        stamped = fire(stamp, sealed)
        assert timedelta(0) < stamped - sealed < timedelta(minutes=30)
    assert job_command(stamp, []) == [sys.executable, "-m", "crovia_spider", "stamp"]
    assert stamp.action == "crovia stamp" and not stamp.is_seal


def test_proofs_are_upgraded_once_a_day():
    (upgrade,) = [j for j in load_schedule(DEFAULT) if j.stamp and j.args == ("--upgrade",)]
    first = fire(upgrade, datetime(2026, 11, 27, tzinfo=UTC))
    assert fire(upgrade, first + timedelta(seconds=1)) - first == timedelta(days=1)
    assert job_command(upgrade, [])[-2:] == ["stamp", "--upgrade"]


@pytest.mark.parametrize(
    "table",
    [
        'stamp = "yes"\ncron = "* * * * *"',
        'stamp = true\nseal = true\ncron = "* * * * *"',
        'stamp = true\nargs = ["--ledger-dir", "/tmp"]\ncron = "* * * * *"',
    ],
)
def test_a_bad_stamp_job_is_refused_on_load(tmp_path, table):
    path = write_schedule(tmp_path / "schedule.toml", f'[[jobs]]\nname = "s"\n{table}\n')
    with pytest.raises(ConfigError, match="stamp"):
        load_schedule(path)
