"""The one table of settings (crovia_spider/options.py) and its checks (issue 43, observation 4).

Every setting has a kind: what it takes, in words, and how its text is read. A value that is none
of it is one line naming the setting, the value and what it takes; key material and long values
are never shown whole. The table is complete (every CROVIA_* name the crawl reads is in it, or is
one crovia sets for its own children) and README's table is this table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scrapy.settings import Settings

from crovia_spider.capture.book import parse_schedule
from crovia_spider.config.settings_check import (
    HARNESS_VARIABLES,
    INTERNAL_SETTINGS,
    check_crawler_settings,
    check_environment,
    check_pairs,
    environment_problems,
)
from crovia_spider.exceptions import ConfigError
from crovia_spider.options import OPTIONS, key_material, read_setting, shown_value

ROOT = Path(__file__).resolve().parent.parent
SEED = "9f" * 32  # 64 hex digits: a private seed looks exactly like a public key

# (setting, a value it refuses): the cases issue 43 met, and one of each kind.
REFUSED = [
    ("CROVIA_RECAPTURE_AFTER", "1x"),
    ("CROVIA_RECAPTURE_AFTER", "1d,1h"),  # not growing
    ("CROVIA_LOCK_TIMEOUT", "abc"),
    ("CROVIA_LOCK_TIMEOUT", "nan"),
    ("CROVIA_LOCK_TIMEOUT", "-1"),
    ("CROVIA_PARSE_SECONDS", "0"),
    ("CROVIA_PARSE_SECONDS", "inf"),
    ("CROVIA_CAPTURE_MAX_BYTES", "-1"),
    ("CROVIA_CAPTURE_MAX_BYTES", "0"),  # 0 is "no limit" to Scrapy
    ("CROVIA_CAPTURE_MAX_BYTES", "16MB"),
    ("CROVIA_SEAL_EVERY", "1.5"),
    ("CROVIA_ISSUE_BATCH", "0"),
    ("CROVIA_PARSE_WORKER", "2"),
    ("CROVIA_CAPTURE", "yes"),
    ("CROVIA_POLITE_DELAYS", ""),
    ("CROVIA_REDIS_URL", "localhost:6379"),
    ("CROVIA_REDIS_URL", "http://127.0.0.1:6379"),
    ("CROVIA_TSA_URLS", "http://127.0.0.1:1,ftp://tsa.example"),
    ("CROVIA_OTS_CALENDARS", "calendar.example"),
    ("CROVIA_CONTACT_URL", "me at example.org"),
    ("CROVIA_USER_AGENT", "agent\r\nX-Injected: 1"),
    ("CROVIA_LOG_ORIGIN", "my log"),
    ("CROVIA_SCRAPY_COMMAND", "python -m 'scrapy"),
    ("CROVIA_LEDGER_DIR", ""),
    ("CROVIA_REDIS_RESULT_BYTES", "1024"),
    ("CROVIA_SEQUENCER_KEY", "-----BEGIN PRIVATE KEY-----\nMC4CAQAw\n-----END PRIVATE KEY-----"),
    ("CROVIA_SEQUENCER_KEY", SEED * 2),  # a seed and its public key, as nacl writes them
]
ACCEPTED = [
    ("CROVIA_RECAPTURE_AFTER", "90s, 30m,1d"),
    ("CROVIA_RECAPTURE_AFTER", ""),  # the capture book's default
    ("CROVIA_LOCK_TIMEOUT", "0.3"),
    ("CROVIA_SEAL_EVERY", "0"),
    ("CROVIA_PARSE_WORKER", "0"),
    ("CROVIA_PARSE_WORKER", "true"),
    ("CROVIA_CAPTURE", False),  # Scrapy's own settings hold typed values
    ("CROVIA_PARSE_MEMORY_MB", 256),
    ("CROVIA_REDIS_URL", "redis://127.0.0.1:6379/0"),
    ("CROVIA_REDIS_URL", "unix:///run/redis.sock"),
    ("CROVIA_TSA_URLS", "http://127.0.0.1:8080/tsa, https://freetsa.example/tsr"),
    ("CROVIA_CONTACT_URL", "mailto:ops@example.org"),
    ("CROVIA_LOG_ORIGIN", "example.org/news"),
    ("CROVIA_SEQUENCER_KEY", SEED),
    ("CROVIA_SEQUENCER_KEY", "data/keys/jobs.key.pub"),
]


@pytest.mark.parametrize(("name", "value"), REFUSED)
def test_a_value_of_no_kind_is_one_line_naming_setting_value_and_what_it_takes(name, value):
    with pytest.raises(ConfigError) as refused:
        read_setting(name, value, "environment")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{name} is ") and "(environment): it takes " in message
    assert message.endswith(OPTIONS[name].kind.takes)
    if not key_material(value) and len(value) <= 80:
        assert repr(value) in message  # the value, as typed


@pytest.mark.parametrize(("name", "value"), ACCEPTED)
def test_values_of_the_kind_are_read(name, value):
    read_setting(name, value, "environment")


# Texts a flag may be given; Scrapy's getbool reads the crawl's flags after the check.
FLAG_TEXTS = ["0", "1", "true", "false", "True", "False", "TRUE", "FALSE", "tRuE", " 1", "true "]
FLAGS = [name for name, setting in OPTIONS.items() if setting.kind.takes == "0 or 1"]


@pytest.mark.parametrize("text", FLAG_TEXTS)
@pytest.mark.parametrize("name", FLAGS)
def test_a_flag_the_check_passes_is_read_by_scrapy_as_the_check_read_it(name, text):
    """The check is the only place a bad flag is refused (one line, exit 2): a value it passes
    must never be one Scrapy's getbool raises on later, mid-crawl, as a traceback."""
    try:
        read = read_setting(name, text, "-s")
    except ConfigError:
        return  # refused as one line before the crawl
    assert Settings({name: text}).getbool(name) is read


def test_every_default_is_of_its_kind():
    for name, setting in OPTIONS.items():
        read_setting(name, setting.default, "default")


def test_key_material_and_long_values_are_never_shown_whole():
    pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIE\n-----END PRIVATE KEY-----"
    for secret in (pem, SEED, SEED * 2, "PRIVATE+KEY+example.org+1234+AbCdEf"):
        with pytest.raises(ConfigError) as refused:
            read_setting("CROVIA_LOCK_TIMEOUT", secret, "environment")
        assert secret not in str(refused.value) and SEED[:16] not in str(refused.value)
        assert "not shown" in str(refused.value)
    long = "x" * 500
    assert len(shown_value(long)) < 80 and "500 characters" in shown_value(long)
    with pytest.raises(ConfigError) as refused:
        read_setting("CROVIA_REDIS_URL", "http://ops:hunter2@127.0.0.1:6379/0", "environment")
    assert "hunter2" not in str(refused.value) and "ops:***@127.0.0.1" in str(refused.value)
    # A path is shown as typed, even a long one.
    path = "/tmp/pytest-of-root/pytest-12/test_a_long_name0/ledger/and/more"
    assert shown_value(path) == repr(path)


def test_the_environment_is_checked_with_every_problem_for_doctor():
    environ = {"CROVIA_PARSE_WORKER": "2", "CROVIA_CAPTURE_MAX_BYTES": "-1", "CROVIA_X": "1"}
    problems = [str(p) for p in environment_problems(environ)]
    assert len(problems) == 2
    assert any(p.startswith("CROVIA_PARSE_WORKER is '2'") for p in problems)
    with pytest.raises(ConfigError, match="CROVIA_"):
        check_environment(environ)
    read = check_environment({"CROVIA_PARSE_WORKER": "0"})
    assert read["CROVIA_PARSE_WORKER"] is False and read["CROVIA_SEAL_EVERY"] == 1000


def test_a_command_lines_pairs_are_checked_and_a_misspelt_name_refused():
    assert check_pairs(["CROVIA_PARSE_WORKER=0", "LOG_LEVEL=INFO", "DOWNLOAD_DELAY=x"]) == {
        "CROVIA_PARSE_WORKER": False
    }
    with pytest.raises(ConfigError, match=r"^CROVIA_PARSE_WORKER is '2' \(-s\)"):
        check_pairs(["CROVIA_PARSE_WORKER=2"])
    with pytest.raises(ConfigError, match="did you mean 'CROVIA_RECAPTURE_AFTER'"):
        check_pairs(["CROVIA_RECAPTURE_AFTR=1d"])
    check_pairs(["CROVIA_CAPTURE_ONLY=1"])  # crovia's own, for its children


def test_a_crawls_scrapy_settings_are_checked_where_they_came_from(monkeypatch):
    monkeypatch.delenv("CROVIA_PARSE_WORKER", raising=False)
    settings = Settings()
    settings.setmodule("crovia_spider.settings", priority="project")
    assert check_crawler_settings(settings)["CROVIA_PARSE_WORKER"] is True
    settings.set("CROVIA_PARSE_WORKER", "2", priority="cmdline")
    with pytest.raises(ConfigError, match=r"^CROVIA_PARSE_WORKER is '2' \(-s\)"):
        check_crawler_settings(settings)
    settings.set("CROVIA_PARSE_WORKER", "0", priority="cmdline")
    settings.set("CROVIA_RECAPTURE_AFTR", "1d", priority="cmdline")
    with pytest.raises(ConfigError, match="did you mean 'CROVIA_RECAPTURE_AFTER'"):
        check_crawler_settings(settings)


def test_the_table_holds_every_setting_the_crawl_reads():
    """Every CROVIA_* name in the code is in the table, or one crovia sets for its children."""
    named = set()
    for package in ("crovia_spider", "pipelines"):
        for path in (ROOT / package).rglob("*.py"):
            named |= set(re.findall(r"[\"'](CROVIA_[A-Z_]+)[\"']", path.read_text("utf-8")))
    assert named - set(OPTIONS) - INTERNAL_SETTINGS - HARNESS_VARIABLES == set()
    assert not set(OPTIONS) & INTERNAL_SETTINGS


def test_the_readme_table_is_this_table():
    """Each setting once, with its default and what it takes."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {}
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `CROVIA_") and len(cells) >= 4:
            rows[cells[0].strip("`")] = cells
    assert set(rows) == set(OPTIONS)
    for name, setting in OPTIONS.items():
        default = f"`{setting.default}`" if setting.default else "empty"
        assert rows[name][1] == default, name
        assert rows[name][2] == setting.kind.takes, name


@given(st.lists(st.tuples(st.integers(0, 999), st.sampled_from("smhdx")), min_size=1, max_size=5))
def test_the_interval_kind_reads_as_the_capture_book_does(parts):
    text = ",".join(f"{n}{unit}" for n, unit in parts)
    try:
        book = tuple(int(delta.total_seconds()) for delta in parse_schedule(text))
    except ValueError:
        book = None
    try:
        mine = read_setting("CROVIA_RECAPTURE_AFTER", text, "environment")
    except ConfigError:
        mine = None
    assert mine == book
