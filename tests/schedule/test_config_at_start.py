"""`crovia schedule` and `crovia schedule --list` check every config file a run reads before
anything starts (issue 33, obs 7). Before, both started with an invalid feeds.toml: each job then
failed, logged at INFO, hours later.
"""

from __future__ import annotations

import pytest

from tests.schedule.conftest import ROOT, write_schedule

EVERY_SECOND = '[[jobs]]\nname = "tick"\nspider = "vendor_press"\nevery = "1s"\n'
BAD_FEEDS = '[[feeds]]\nvendor = "a"\nurl = "https://a.example.org/f"\n\n[[feeds]]\nvendor = "b"\n'
UNDECLARED = '[[feeds]]\nvendor = "lab"\nurl = "https://lab.example.org/f"\nspider = "htmlist"\n'
BAD_RULES = 'version = "1"\n[[rules]]\nvendor = ["a"]\ndecision_hint = "MAYBE"\n'


@pytest.fixture
def schedule(tmp_path):
    return write_schedule(tmp_path / "schedule.toml", EVERY_SECOND)


@pytest.mark.parametrize("listing", [True, False], ids=["--list", "run"])
@pytest.mark.parametrize(
    ("setting", "text", "expected"),
    [
        (
            "CROVIA_FEEDS_FILE",
            BAD_FEEDS,
            "[[feeds]] entry 2 (vendor 'b'): missing required key 'url'",
        ),
        ("CROVIA_FEEDS_FILE", UNDECLARED, "entry 1 (vendor 'lab'): unknown spider 'htmlist'"),
        ("CROVIA_CLASSIFY_FILE", BAD_RULES, "[[rules]] entry 1: decision_hint must be one of"),
    ],
    ids=["feeds", "undeclared-spider", "classify"],
)
def test_an_invalid_config_file_stops_the_scheduler_at_start(
    tmp_path, fake_env, start_scheduler, schedule, listing, setting, text, expected
):
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    env = fake_env | {setting: str(bad)}
    args = ["--config", str(schedule), *(["--list"] if listing else [])]
    scheduler = start_scheduler(args, env)
    assert scheduler.wait_exit() == 2, scheduler.log()
    log = scheduler.log()
    assert f"crovia schedule: error: {bad}: " in log and expected in log, log
    assert "job=" not in log  # nothing was scheduled, listed or run
    assert not (tmp_path / "fake_crawl.jsonl").exists()


def test_a_jobs_own_feed_list_is_checked_too(tmp_path, fake_env, start_scheduler):
    bad = tmp_path / "other_feeds.toml"
    bad.write_text(BAD_FEEDS)
    body = EVERY_SECOND + f'args = ["-s", "CROVIA_FEEDS_FILE={bad}"]\n'
    schedule = write_schedule(tmp_path / "schedule.toml", body)
    scheduler = start_scheduler(["--config", str(schedule), "--list"], fake_env)
    assert scheduler.wait_exit() == 2, scheduler.log()
    assert f"job 'tick': {bad}: [[feeds]] entry 2" in scheduler.log()


def test_valid_files_list_as_before(fake_env, start_scheduler, schedule):
    scheduler = start_scheduler(["--config", str(schedule), "--list"], fake_env)
    assert scheduler.wait_exit() == 0, scheduler.log()
    assert "tick" in scheduler.log()
    assert (ROOT / "config" / "feeds.toml").is_file()
