"""`crovia schedule --list` and the CLI's handling of a bad schedule or bad flags."""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime, timedelta

import pytest

from crovia_spider.cli import main
from tests.schedule.conftest import ROOT, write_schedule

SCHEDULE = """
[[jobs]]
name = "newyear"
spider = "vendor_press"
args = ["-a", "vendor=openai"]
cron = "0 0 1 1 *"
jitter = 60

[[jobs]]
name = "seal"
seal = true
every = "6h"
"""


@pytest.fixture(autouse=True)
def in_project_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_list_shows_jobs_and_next_fire_times(tmp_path, capsys):
    path = write_schedule(tmp_path / "s.toml", SCHEDULE)
    before = datetime.now(UTC)
    assert main(["schedule", "--list", "--config", str(path)]) == 0
    header, newyear, seal = capsys.readouterr().out.splitlines()
    assert header.split() == ["JOB", "NEXT", "(UTC)", "WHEN", "RUNS"]
    assert re.fullmatch(
        r"newyear +\d{4}-01-01T00:00:00Z +cron '0 0 1 1 \*' UTC ~60s +"
        r"scrapy crawl vendor_press -a vendor=openai",
        newyear,
    )
    name, upcoming, *rest = seal.split()
    assert (name, rest) == ("seal", ["every", "6h", "crovia", "seal"])
    delay = datetime.strptime(upcoming, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) - before
    assert timedelta(hours=6) - timedelta(seconds=1) <= delay <= timedelta(hours=6, minutes=1)


def test_list_json(tmp_path, capsys):
    path = write_schedule(tmp_path / "s.toml", SCHEDULE)
    assert main(["schedule", "--list", "--json", "--config", str(path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["name"] for r in rows] == ["newyear", "seal"]
    assert rows[0]["next"].endswith("-01-01T00:00:00Z")
    assert rows[0] | {"next": None} == {
        "name": "newyear",
        "next": None,
        "when": "cron '0 0 1 1 *' UTC",
        "jitter": 60,
        "runs": "scrapy crawl vendor_press -a vendor=openai",
        "skipped": None,
    }


def test_list_of_the_default_schedule(capsys):
    assert main(["schedule", "--list"]) == 0
    out = capsys.readouterr().out
    assert "crovia seal" in out and "scrapy crawl vendor_press" in out


def test_bad_schedule_exits_2_naming_file_and_job(tmp_path, capsys):
    path = write_schedule(tmp_path / "s.toml", SCHEDULE.replace('"6h"', '"6 hours"'))
    assert main(["schedule", "--list", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"crovia schedule: error: {path}: job 'seal': bad duration '6 hours'" in err


def test_bad_schedule_fails_before_running_anything(tmp_path, capsys):
    path = write_schedule(tmp_path / "s.toml", "[[jobs]]\nname = 'x'\n")
    assert main(["schedule", "--config", str(path)]) == 2
    assert "job 'x': give exactly one of" in capsys.readouterr().err


def test_outside_the_project_uses_the_checkouts_schedule(tmp_path, monkeypatch, capsys):
    # No scrapy.cfg above the working directory: the project this package runs from is the root.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CROVIA_SCHEDULE_FILE", raising=False)
    assert main(["schedule", "--list"]) == 0
    assert "arxiv" in capsys.readouterr().out


def test_negative_grace_is_a_usage_error(capsys):
    assert main(["schedule", "--grace", "-1"]) == 2  # argparse's usage error, returned
    assert "must be >= 0 seconds" in capsys.readouterr().err


def test_unknown_spider_fails_at_start(tmp_path, capsys):
    # The real `scrapy list` of this project; the check runs before anything is scheduled.
    path = write_schedule(tmp_path / "s.toml", SCHEDULE.replace("vendor_press", "nope"))
    assert main(["schedule", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "job 'newyear': no spider 'nope' in this project (scrapy list: " in err
    assert "vendor_press" in err


def test_broken_scrapy_list_fails_at_start(tmp_path, monkeypatch, capsys):
    broken = f"{sys.executable} -c 'import sys; sys.exit(\"feeds.toml: job 3: bad url\")'"
    monkeypatch.setenv("CROVIA_SCRAPY_COMMAND", broken)
    path = write_schedule(tmp_path / "s.toml", SCHEDULE)
    assert main(["schedule", "--config", str(path)]) == 2
    assert "`scrapy list` failed (exit 1): feeds.toml: job 3: bad url" in capsys.readouterr().err


def test_list_shows_a_skipped_job_and_why(monkeypatch, capsys):
    """Issue 17, obs 8: the publish job vanished from the listing when CROVIA_PUBLISH_DIR was
    unset, so an operator could not tell it was configured but would never run."""
    monkeypatch.delenv("CROVIA_PUBLISH_DIR", raising=False)
    assert main(["schedule", "--list"]) == 0
    (publish,) = [line for line in capsys.readouterr().out.splitlines() if "publish" in line]
    assert re.fullmatch(
        r"publish +skipped +cron '58 \* \* \* \*' UTC +crovia publish"
        r" \(skipped: CROVIA_PUBLISH_DIR is unset\)",
        publish,
    ), publish
    assert main(["schedule", "--list", "--json"]) == 0
    rows = {r["name"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["publish"]["next"] is None
    assert rows["publish"]["skipped"] == "CROVIA_PUBLISH_DIR is unset"
    assert rows["seal"]["skipped"] is None
    monkeypatch.setenv("CROVIA_PUBLISH_DIR", "public")
    assert main(["schedule", "--list", "--json"]) == 0
    rows = {r["name"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["publish"]["skipped"] is None and rows["publish"]["next"]
