"""Trigger arithmetic on fixed datetimes: crontab lines and durations fire exactly when expected."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crovia_spider.schedule.triggers import (
    crontab_trigger,
    crontab_weekdays,
    interval_trigger,
    load_timezone,
    parse_duration,
)

UTC_ZONE = ZoneInfo("UTC")
FRIDAY_NOON = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)  # 2026-11-27 is a Friday


def fires(trigger, start: datetime, count: int) -> list[datetime]:
    """The next `count` fire times after `start`, as the scheduler would chain them."""
    out, previous, now = [], None, start
    for _ in range(count):
        previous = trigger.get_next_fire_time(previous, now)
        out.append(previous.astimezone(UTC))
        now = previous + timedelta(microseconds=1)
    return out


def test_crontab_weekday_numbers_mean_what_crontab_says():
    # APScheduler 3.x alone would read 1-5 as Tuesday-Saturday.
    times = fires(crontab_trigger("0 6 * * 1-5", UTC_ZONE), FRIDAY_NOON, 6)
    assert [t.strftime("%a %d %H:%M") for t in times] == [
        "Mon 30 06:00", "Tue 01 06:00", "Wed 02 06:00", "Thu 03 06:00", "Fri 04 06:00",
        "Mon 07 06:00",
    ]  # fmt: skip


@pytest.mark.parametrize("field", ["0", "7", "sun", "SUN"])
def test_sunday_is_0_or_7(field):
    (first,) = fires(crontab_trigger(f"30 2 * * {field}", UTC_ZONE), FRIDAY_NOON, 1)
    assert first == datetime(2026, 11, 29, 2, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("field", "names"),
    [
        ("*", "*"),
        ("1-5", "mon,tue,wed,thu,fri"),
        ("0,6", "sat,sun"),
        ("5-7", "fri,sat,sun"),
        ("*/2", "tue,thu,sat,sun"),
        ("1-5/2", "mon,wed,fri"),
        ("mon-fri", "mon,tue,wed,thu,fri"),
        ("sun,3", "wed,sun"),
    ],
)
def test_weekday_field_is_spelled_out(field, names):
    assert crontab_weekdays(field) == names


@given(st.integers(0, 7), st.integers(0, 7), st.integers(1, 7))
def test_any_weekday_range_fires_on_exactly_its_days(first, last, step):
    if last < first:
        first, last = last, first
    wanted = {d % 7 for d in range(first, last + 1, step)}
    trigger = crontab_trigger(f"0 0 * * {first}-{last}/{step}", UTC_ZONE)
    seen = {(t.weekday() + 1) % 7 for t in fires(trigger, FRIDAY_NOON, 3 * len(wanted))}
    assert seen == wanted  # crontab numbering: Sunday 0 ... Saturday 6


def test_hourly_and_every_quarter_hour():
    assert fires(crontab_trigger("50 * * * *", UTC_ZONE), FRIDAY_NOON, 2) == [
        datetime(2026, 11, 27, 12, 50, tzinfo=UTC),
        datetime(2026, 11, 27, 13, 50, tzinfo=UTC),
    ]
    quarter = fires(crontab_trigger("*/15 * * * *", UTC_ZONE), FRIDAY_NOON, 3)
    assert [t.minute for t in quarter] == [0, 15, 30]  # a fire time equal to "now" is due now


def test_cron_in_a_timezone_follows_daylight_saving():
    # 20:30 in New York, Sunday to Thursday: 00:30 UTC in summer (EDT), 01:30 UTC in winter (EST).
    trigger = crontab_trigger("30 20 * * 0-4", load_timezone("America/New_York"))
    summer = datetime(2026, 7, 10, 12, 0, tzinfo=UTC)  # a Friday
    winter = datetime(2026, 1, 9, 12, 0, tzinfo=UTC)  # a Friday
    assert fires(trigger, summer, 1) == [datetime(2026, 7, 13, 0, 30, tzinfo=UTC)]
    assert fires(trigger, winter, 1) == [datetime(2026, 1, 12, 1, 30, tzinfo=UTC)]


def test_cron_jitter_delays_within_bound():
    trigger = crontab_trigger("0 6 * * *", UTC_ZONE, jitter=300)
    base = datetime(2026, 11, 28, 6, 0, tzinfo=UTC)
    for _ in range(50):
        delay = trigger.get_next_fire_time(None, FRIDAY_NOON) - base
        assert timedelta(0) <= delay <= timedelta(seconds=300)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("* * * *", "expected 5 fields"),
        ("0 6 * * * *", "expected 5 fields"),
        ("61 * * * *", "bad cron"),
        ("0 25 * * *", "bad cron"),
        ("0 6 32 * *", "bad cron"),
        ("0 6 * 13 *", "bad cron"),
        ("0 6 * * 8", "cannot read '8'"),
        ("0 6 * * 5-1", "runs backwards"),
        ("0 6 * * funday", "cannot read"),
        ("0 6 * * xyz", "unknown day 'xyz'"),
        ("0 6 * * */0", "step 0"),
        ("@daily", "expected 5 fields"),
    ],
)
def test_bad_cron_is_refused_with_a_reason(expression, reason):
    with pytest.raises(ValueError, match=reason.replace("*", r"\*")):
        crontab_trigger(expression, UTC_ZONE)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("15m", 900), ("6h", 21600), ("1d", 86400), ("1h30m", 5400), (" 2H ", 7200)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "text", ["", "15", "m", "0s", "0h0m", "1.5h", "-5m", "15 m", "5w", "1h 30m"]
)
def test_bad_durations(text):
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_interval_fires_every_duration_after_the_previous_fire():
    trigger = interval_trigger(parse_duration("90s"))
    previous = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    assert fires_after(trigger, previous, 3) == [
        previous + timedelta(seconds=90 * n) for n in (1, 2, 3)
    ]


def test_interval_first_fire_is_one_duration_after_start():
    before = datetime.now(UTC)
    trigger = interval_trigger(parse_duration("15m"))
    first = trigger.get_next_fire_time(None, before)
    assert first - before >= timedelta(minutes=15)
    assert first - before < timedelta(minutes=16)


def test_interval_jitter_delays_within_bound():
    trigger = interval_trigger(parse_duration("1h"), jitter=60)
    previous = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    for _ in range(50):
        delay = trigger.get_next_fire_time(previous, previous) - (previous + timedelta(hours=1))
        assert timedelta(0) <= delay <= timedelta(seconds=60)


def test_unknown_timezone():
    with pytest.raises(ValueError, match="unknown timezone 'Mars/Olympus'"):
        load_timezone("Mars/Olympus")


def fires_after(trigger, previous: datetime, count: int) -> list[datetime]:
    out = []
    for _ in range(count):
        previous = trigger.get_next_fire_time(previous, previous)
        out.append(previous)
    return out


def test_both_day_fields_fire_when_either_matches_as_in_crontab():
    # "0 6 1 * 1": 06:00 on the 1st of the month AND on every Monday (crontab(5)).
    times = fires(crontab_trigger("0 6 1 * 1", UTC_ZONE), FRIDAY_NOON, 4)
    assert times == [
        datetime(2026, 11, 30, 6, 0, tzinfo=UTC),  # Monday
        datetime(2026, 12, 1, 6, 0, tzinfo=UTC),  # the 1st (a Tuesday)
        datetime(2026, 12, 7, 6, 0, tzinfo=UTC),  # Monday
        datetime(2026, 12, 14, 6, 0, tzinfo=UTC),  # Monday
    ]
