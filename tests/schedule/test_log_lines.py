"""The scheduler's habits (issue 17): its own log lines carry a timestamp, like a crawl's (a
daemon's log is read after the fact, and "when" is its first question), and a job naming a
misspelt spider is refused with a suggestion."""

from __future__ import annotations

import re

from tests.schedule.conftest import write_schedule

STAMPED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[crovia_spider\.schedule[\w.]*\] \w+: ")

EVERY_SECOND = """
[[jobs]]
name = "tick"
spider = "demo"
every = "1s"
"""


def test_every_scheduler_line_is_timestamped(tmp_path, fake_env, start_scheduler):
    schedule = write_schedule(tmp_path / "s.toml", EVERY_SECOND)
    scheduler = start_scheduler(["--config", str(schedule)], fake_env)
    scheduler.wait_for(r"job=tick finished")
    assert scheduler.stop() == 0
    own = [line for line in scheduler.lines if "fake_crawl" not in line]
    assert own and any("job=tick finished" in line for line in own)
    assert all(STAMPED.match(line) for line in own), scheduler.log()


def test_a_misspelt_spider_in_a_job_gets_a_suggestion(tmp_path, capsys):
    from crovia_spider.cli import main

    body = '[[jobs]]\nname = "hourly"\nspider = "vendor_pres"\nevery = "1h"\n'
    path = write_schedule(tmp_path / "s.toml", body)
    assert main(["schedule", "--config", str(path)]) == 2
    assert "did you mean 'vendor_press'?" in capsys.readouterr().err
