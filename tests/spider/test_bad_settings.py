"""Issue 43, observation 4: a bad setting is one line before anything runs.

Seen: a bad CROVIA_RECAPTURE_AFTER made every crawl of a capture source exit 1 with no output (the
message was built and never logged); a non-number gave a 42-line traceback; `-1` bytes and
CROVIA_PARSE_WORKER=2 were accepted; `crovia feeds check` checked no setting. Now each `crovia`
command that starts crawls (crawl, capture, schedule, worker, sequencer) and `crovia feeds check`
refuses such a value, from the environment or `-s`, with exit 2 and one line naming the setting,
its value and what it takes, before it reads a feed, opens a ledger or reaches Redis; a crawl
started with `scrapy crawl` refuses it in its spider, logged, before the ledger is opened.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from crovia_spider.options import OPTIONS
from tests.capture.pages import script_site
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, run_crawl, write_feeds
from tests.feedserver import FeedServer

BAD = [
    ("CROVIA_RECAPTURE_AFTER", "1x"),
    ("CROVIA_LOCK_TIMEOUT", "abc"),
    ("CROVIA_CAPTURE_MAX_BYTES", "-1"),
    ("CROVIA_PARSE_WORKER", "2"),
]
# Each command with what it needs on its command line besides the setting. No Redis listens at
# port 1: a command that reached it would fail otherwise, not with the setting's line.
REDIS = "redis://127.0.0.1:1/0"
COMMANDS = {
    "crawl": ["crawl"],
    "capture": ["capture", "--all"],
    "schedule": ["schedule", "--list"],
    "worker": ["worker", "--redis", REDIS, "--sequencer-key", "ab" * 32],
    "sequencer": ["sequencer", "--redis", REDIS, "--once"],
    "feeds check": ["feeds", "check"],
}


def crovia(tmp_path: Path, argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    write_feeds(tmp_path / "feeds.toml", [{"vendor": "lab", "url": "http://127.0.0.1:1/news"}])
    schedule = tmp_path / "schedule.toml"
    schedule.write_text('[[jobs]]\nname = "crawl"\nspider = "vendor_press"\nevery = "1h"\n')
    return subprocess.run(
        [str(BIN / "crovia"), *argv],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path, CROVIA_SCHEDULE_FILE=str(schedule), **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_one_line(proc: subprocess.CompletedProcess[str], name: str, value: str) -> None:
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert f"{name} is {value!r}" in lines[0]
    assert lines[0].endswith(f"it takes {OPTIONS[name].kind.takes}")


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("name", "value"), BAD)
def test_a_bad_setting_in_the_environment_is_one_line_exit_2(tmp_path, command, name, value):
    proc = crovia(tmp_path, COMMANDS[command], **{name: value})
    assert_one_line(proc, name, value)
    assert "(environment)" in proc.stderr
    assert not (tmp_path / "ledger").exists()  # nothing ran


@pytest.mark.parametrize("command", ["crawl", "capture", "worker", "sequencer"])
def test_a_bad_setting_given_with_dash_s_is_one_line_exit_2(tmp_path, command):
    proc = crovia(tmp_path, [*COMMANDS[command], "-s", "CROVIA_CAPTURE_MAX_BYTES=-1"])
    assert_one_line(proc, "CROVIA_CAPTURE_MAX_BYTES", "-1")
    assert "(-s)" in proc.stderr
    proc = crovia(tmp_path, [*COMMANDS[command], "-s", "CROVIA_RECAPTURE_AFTR=1d"])
    assert proc.returncode == 2 and "did you mean 'CROVIA_RECAPTURE_AFTER'" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr


def test_a_schedule_jobs_own_bad_setting_is_refused_at_start_naming_the_job(tmp_path):
    schedule = tmp_path / "jobs.toml"
    schedule.write_text(
        '[[jobs]]\nname = "nightly"\nspider = "vendor_press"\nevery = "1h"\n'
        'args = ["-s", "CROVIA_PARSE_WORKER=2"]\n'
    )
    proc = crovia(tmp_path, ["schedule", "--list", "--config", str(schedule)])
    assert proc.returncode == 2, proc.stderr
    assert "job 'nightly': CROVIA_PARSE_WORKER is '2' (-s): it takes 0 or 1" in proc.stderr


def test_feeds_check_says_the_settings_were_checked(tmp_path):
    proc = crovia(tmp_path, ["feeds", "check"])
    assert proc.returncode == 0, proc.stderr
    assert f"settings: {len(OPTIONS)} CROVIA_* settings, all valid" in proc.stdout


def test_scrapy_crawl_of_a_capture_source_logs_why_it_refuses(tmp_path):
    """Before: exit 1 and not a word (the pipeline built the message and never logged it)."""
    with FeedServer() as server:
        feeds = script_site(server)
        for name, value in (("CROVIA_RECAPTURE_AFTER", "1x"), ("CROVIA_LOCK_TIMEOUT", "abc")):
            proc = run_crawl(tmp_path, feeds, env=crawl_env(tmp_path, **{name: value}))
            assert proc.returncode == 1
            refused = [line for line in proc.stderr.splitlines() if "CRITICAL" in line]
            assert len(refused) == 1, proc.stderr[-3000:]
            assert f"crawl refused: {name} is {value!r} (environment): it takes" in refused[0]
            assert "Traceback" not in proc.stderr
        assert server.requests_for("news") == []  # nothing fetched
    assert not (tmp_path / "ledger" / "axiom_ledger.jsonl").exists()


def test_scrapy_crawl_refuses_what_it_used_to_accept(tmp_path):
    for name, value in (("CROVIA_CAPTURE_MAX_BYTES", "-1"), ("CROVIA_PARSE_WORKER", "2")):
        proc = run_crawl(tmp_path, [], "-s", f"{name}={value}")
        assert proc.returncode == 1
        assert f"crawl refused: {name} is {value!r} (-s): it takes" in proc.stderr
