"""Formats are read with ASCII digits only: Python's `\\d`, `str.isdigit()` and `int()` take
any Unicode digit ("٣", "²"), JavaScript's `\\d` only 0-9, so the page and the CLI would read the
same text differently (a rotation record dated in Arabic-Indic digits was valid in one and
invalid in the other). The receipts themselves are cases of the differential corpus
(tests/web/corpus_eras.py); these are the other readers of untrusted text."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from crovia_spider.fetching.middlewares import retry_after_seconds
from crovia_spider.schedule.triggers import crontab_weekdays, parse_duration
from tests.crawl import PROJECT_ROOT

ARABIC_THREE = "\u0663"
# A digit class in a regular expression: `\d` (or `\D`) not preceded by another backslash.
_DIGIT_CLASS = re.compile(r"(?<!\\)\\[dD]")


def test_no_regular_expression_of_ours_uses_the_unicode_digit_class() -> None:
    found = []
    for package in ("ledger", "crovia_spider", "pipelines"):
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
                if _DIGIT_CLASS.search(line):
                    found.append(f"{path.relative_to(PROJECT_ROOT)}:{number}: {line.strip()}")
    assert not found, "use [0-9] (Python's \\d matches every Unicode digit):\n" + "\n".join(found)


@pytest.mark.parametrize("header", [b"\xb2", b"\xb9\xb3", b" \xb2 "])  # "²", "¹³" in Latin-1
def test_retry_after_in_superscript_digits_is_no_delay_rather_than_a_crash(header) -> None:
    assert retry_after_seconds(header) is None


def test_schedule_numbers_are_ascii() -> None:
    assert parse_duration("3h") == timedelta(hours=3)
    with pytest.raises(ValueError):
        parse_duration(f"{ARABIC_THREE}h")
    with pytest.raises(ValueError):
        crontab_weekdays(ARABIC_THREE)


# A pattern anchored with `$`: Python's `$` also matches before a final newline (JavaScript's does
# not), so `re.match("^[a-z]+$", "openai\n")` passes. Ours use fullmatch instead.
_DOLLAR_END = re.compile(r"""re\.compile\(.*\$["']\)""")


def test_no_pattern_of_ours_ends_in_a_dollar_that_lets_a_newline_by() -> None:
    found = []
    for package in ("ledger", "crovia_spider", "pipelines"):
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
                if _DOLLAR_END.search(line):
                    found.append(f"{path.relative_to(PROJECT_ROOT)}:{number}: {line.strip()}")
    assert not found, "use fullmatch (a final `$` matches before a newline):\n" + "\n".join(found)


@pytest.mark.parametrize("name", ["openai\n", "open\u0663ai", "OPENAI"])
def test_a_feed_id_with_a_final_newline_or_other_digits_is_refused(tmp_path, name) -> None:
    from crovia_spider.config.feeds import load_feeds
    from crovia_spider.exceptions import ConfigError

    feeds = tmp_path / "feeds.toml"
    quoted = name.replace("\n", "\\n")
    feeds.write_text(f'[[feeds]]\nvendor = "{quoted}"\nurl = "https://example.org/feed"\n')
    with pytest.raises(ConfigError):
        load_feeds(feeds)
