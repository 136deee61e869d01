"""`publish = true` jobs: parsed, run as `crovia publish`, scheduled only with a publish dir."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from crovia_spider.schedule.children import job_command
from crovia_spider.schedule.config import enabled_jobs, load_schedule, parse_job

ROOT = Path(__file__).resolve().parents[2]


def test_a_publish_job_runs_crovia_publish() -> None:
    job = parse_job({"name": "publish", "publish": True, "cron": "55 * * * *"})
    assert job.publish and not job.is_seal and job.action == "crovia publish"
    assert job_command(job, []) == [sys.executable, "-m", "crovia_spider", "publish"]


@pytest.mark.parametrize(
    "extra",
    [{"seal": True}, {"spider": "vendor_press"}, {"args": ["-a", "x=y"]}],
)
def test_a_publish_job_is_nothing_else(extra: dict) -> None:
    with pytest.raises(ValueError, match="a publish job has no"):
        parse_job({"name": "p", "publish": True, "every": "1h", **extra})
    with pytest.raises(ValueError, match="'publish' must be true"):
        parse_job({"name": "p", "publish": False, "every": "1h"})


def test_the_default_schedule_publishes_after_the_seal_only_with_a_publish_dir() -> None:
    jobs = load_schedule(ROOT / "config" / "schedule.toml")
    assert [j.name for j in jobs if j.publish] == ["publish"]
    assert "publish" not in [j.name for j in enabled_jobs(jobs, "")]
    assert [j.name for j in enabled_jobs(jobs, "/srv/log")] == [j.name for j in jobs]
