"""`crovia schedule` with a stand-in crawl (fake_crawl.py): repetition, overlap, outcome, stopping.

The real crawl is exercised in test_end_to_end.py; here each child is a small Python process so the
scheduler's own behaviour can be pinned down quickly and exactly.
"""

from __future__ import annotations

import itertools
import json
import signal
from pathlib import Path

import pytest

from tests.schedule.conftest import write_schedule

EVERY_SECOND = """
[[jobs]]
name = "tick"
spider = "demo"
args = ["-a", "vendor=x"]
every = "1s"
"""


def fake_events(env: dict[str, str]) -> list[dict]:
    path = Path(env["FAKE_CRAWL_LOG"])
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_runs_repeat_one_at_a_time_and_log_their_outcome(tmp_path, fake_env, start_scheduler):
    fake_env["FAKE_CRAWL_SECONDS"] = "1.5"  # longer than the interval: some fires must be skipped
    schedule = write_schedule(tmp_path / "s.toml", EVERY_SECOND)
    scheduler = start_scheduler(["--config", str(schedule)], fake_env)

    finished = scheduler.wait_for(r"job=tick finished", count=3)
    assert scheduler.stop() == 0

    assert all("exit=0" in line and "outcome=finished new=3 updated=1" in line for line in finished)
    assert "run_id=fake-" in finished[0] and "seal=none" in finished[0]
    assert "job=tick fire at" in scheduler.log() and "skipped" in scheduler.log()
    spans = _spans(fake_events(fake_env))
    assert len(spans) >= 3
    for (_, end), (next_start, _) in itertools.pairwise(spans):
        assert next_start >= end, "two runs of one job overlapped"
    argv = fake_events(fake_env)[0]["argv"]
    assert argv == ["crawl", "demo", "-a", "vendor=x"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stop_signal_lets_a_run_finish_within_grace(tmp_path, fake_env, start_scheduler, signum):
    fake_env["FAKE_CRAWL_SECONDS"] = "1"
    schedule = write_schedule(tmp_path / "s.toml", EVERY_SECOND)
    scheduler = start_scheduler(["--config", str(schedule), "--grace", "30"], fake_env)
    scheduler.wait_for(r"fake_crawl: working")

    assert scheduler.stop(signum) == 0

    events = [e["event"] for e in fake_events(fake_env)]
    assert events == ["start", "end"], "the run was cut short or a new one started after the signal"
    assert f"received {signal.Signals(signum).name}" in scheduler.log()
    assert "job=tick finished exit=0" in scheduler.log()
    assert scheduler.log().rstrip().endswith("scheduler stopped")


def test_run_past_grace_gets_sigterm_and_still_records(tmp_path, fake_env, start_scheduler):
    fake_env["FAKE_CRAWL_SECONDS"] = "60"
    schedule = write_schedule(tmp_path / "s.toml", EVERY_SECOND)
    args = ["--config", str(schedule), "--grace", "0.5", "--kill-after", "30"]
    scheduler = start_scheduler(args, fake_env)
    scheduler.wait_for(r"fake_crawl: working")

    assert scheduler.stop() == 0

    assert [e["event"] for e in fake_events(fake_env)] == ["start", "term", "end"]
    assert "still running after the grace period: sending SIGTERM" in scheduler.log()
    assert "SIGKILL" not in scheduler.log()
    assert "job=tick finished exit=0 run_id=fake-" in scheduler.log()


def test_run_ignoring_sigterm_is_killed(tmp_path, fake_env, start_scheduler):
    fake_env.update(FAKE_CRAWL_SECONDS="60", FAKE_CRAWL_IGNORE_TERM="1")
    schedule = write_schedule(tmp_path / "s.toml", EVERY_SECOND)
    args = ["--config", str(schedule), "--grace", "0.2", "--kill-after", "0.5"]
    scheduler = start_scheduler(args, fake_env)
    scheduler.wait_for(r"fake_crawl: working")

    assert scheduler.stop() == 0

    assert [e["event"] for e in fake_events(fake_env)] == ["start"]
    assert "ignored SIGTERM for 0.5s: sending SIGKILL" in scheduler.log()
    assert "job=tick finished exit=SIGKILL run_record=none seal=none" in scheduler.log()


def test_idle_scheduler_stops_at_once(tmp_path, fake_env, start_scheduler):
    schedule = write_schedule(
        tmp_path / "s.toml", '[[jobs]]\nname = "later"\nseal = true\ncron = "0 0 1 1 *"\n'
    )
    scheduler = start_scheduler(["--config", str(schedule)], fake_env)
    scheduler.wait_for(
        r"job=later scheduled cron '0 0 1 1 \*' UTC: crovia seal, next at \d{4}-01-01T00:00:00Z"
    )

    assert scheduler.stop() == 0
    assert "0 running job(s)" in scheduler.log()
    assert not fake_events(fake_env)


def _spans(events: list[dict]) -> list[tuple[float, float]]:
    """(start, end) times per child pid, in start order."""
    starts = {e["pid"]: e["t"] for e in events if e["event"] == "start"}
    ends = {e["pid"]: e["t"] for e in events if e["event"] == "end"}
    return sorted((starts[pid], ends[pid]) for pid in starts if pid in ends)
