"""The scheduler's own log lines carry a timestamp, like a crawl's (issue 17): a daemon's log is
read after the fact, and "when" is its first question."""

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
