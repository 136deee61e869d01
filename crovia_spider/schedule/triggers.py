"""When a job fires: a standard crontab expression or a fixed duration, as APScheduler 3.x triggers.

Cron expressions go through `CronTrigger.from_crontab`; this module only bridges the two places
where APScheduler 3.x and crontab disagree: weekday numbers (see `crontab_weekdays`), and a line
restricting both day of month and day of week, which crontab fires when EITHER matches and
APScheduler only when both do (it becomes an OrTrigger of the two halves).
Every function raises ValueError with a reason a person can act on; config.py adds the file and job.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(?:[0-9]+[smhd])+")
# The longest `every`: longer is surely a typo, and far longer overflows datetime arithmetic.
MAX_EVERY_DAYS = 366
# crontab numbers weekdays from Sunday = 0 (7 is Sunday too); APScheduler 3.x from Monday = 0.
_CRONTAB_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_WEEKDAY_ITEM = re.compile(
    r"(?P<first>\*|[0-7]|[a-z]{3})(?:-(?P<last>[0-7]|[a-z]{3}))?(?:/(?P<step>[0-9]+))?"
)


def parse_duration(text: str) -> timedelta:
    """'90s', '15m', '6h', '1d' or a sum such as '1h30m' -> timedelta.

    Raises ValueError for anything else, for a zero duration and for one over MAX_EVERY_DAYS.
    """
    compact = text.strip().lower()
    if not _DURATION.fullmatch(compact):
        raise ValueError(
            f"bad duration {text!r}: use a number and a unit s, m, h or d, e.g. '90s', '1h30m'"
        )
    parts = re.findall(r"([0-9]+)([smhd])", compact)
    too_long = f"bad duration {text!r}: 'every' is at most {MAX_EVERY_DAYS}d (a year)"
    if any(len(n.lstrip("0")) > 12 for n, _ in parts):  # int() of thousands of digits fails
        raise ValueError(too_long)
    seconds = sum(int(n) * _UNIT_SECONDS[unit] for n, unit in parts)
    if seconds == 0:
        raise ValueError(f"bad duration {text!r}: it must be longer than zero")
    if seconds > MAX_EVERY_DAYS * 86400:
        raise ValueError(too_long)
    return timedelta(seconds=seconds)


def load_timezone(name: str) -> tzinfo:
    """An IANA zone such as 'Europe/Rome' or 'UTC'. Raises ValueError for an unknown name."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(
            f"unknown timezone {name!r} (use an IANA name such as 'UTC', 'Europe/Rome')"
        ) from exc


def crontab_trigger(expression: str, tz: tzinfo, jitter: int | None = None) -> BaseTrigger:
    """A trigger firing exactly when crontab(5) would fire `expression` (5 fields) in `tz`.

    Raises ValueError for a malformed expression, and for one no date matches (`0 0 31 2 *`),
    which crontab accepts and never runs.
    """
    trigger = _crontab_trigger(expression, tz, jitter)
    if trigger.get_next_fire_time(None, datetime.now(tz)) is None:
        raise ValueError(f"cron {expression!r} never fires: no date matches it")
    return trigger


def _crontab_trigger(expression: str, tz: tzinfo, jitter: int | None) -> BaseTrigger:
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(
            f"bad cron {expression!r}: expected 5 fields (minute hour day month weekday)"
        )
    fields[4] = crontab_weekdays(fields[4])
    if fields[2].startswith("*") or fields[4] == "*":
        return _cron(expression, fields, tz, jitter)
    # crontab(5): with both day fields restricted, a day matching either one fires.
    by_month_day = _cron(expression, [*fields[:4], "*"], tz, None)
    by_weekday = _cron(expression, [*fields[:2], "*", *fields[3:]], tz, None)
    return OrTrigger([by_month_day, by_weekday], jitter=jitter)


def _cron(expression: str, fields: list[str], tz: tzinfo, jitter: int | None) -> CronTrigger:
    try:
        trigger = CronTrigger.from_crontab(" ".join(fields), timezone=tz)
    except ValueError as exc:
        raise ValueError(f"bad cron {expression!r}: {exc}") from exc
    trigger.jitter = jitter  # from_crontab takes no jitter; the attribute is CronTrigger's own
    return trigger


def crontab_weekdays(field: str) -> str:
    """Rewrite a crontab weekday field ('1-5', '0,6', '*/2', 'mon-fri') as APScheduler weekday
    names.

    APScheduler 3.x reads '1-5' as Tuesday-Saturday (its issue 286); spelling the days out keeps
    crontab's meaning. Raises ValueError for an item crontab would not accept.
    """
    if field == "*":
        return field
    days: set[int] = set()
    for item in field.lower().split(","):
        days.update(_weekday_item_days(item, field))
    return ",".join(_CRONTAB_DAYS[d] for d in sorted(days, key=lambda d: (d - 1) % 7))


def _weekday_item_days(item: str, field: str) -> range | list[int]:
    """Crontab weekday numbers (Sunday = 0) named by one comma-separated item of the field."""
    match = _WEEKDAY_ITEM.fullmatch(item)
    if match is None:
        raise ValueError(f"bad weekday field {field!r}: cannot read {item!r}")
    first, last, step = match["first"], match["last"], match["step"]
    if first == "*":
        if last is not None:
            raise ValueError(f"bad weekday field {field!r}: '*' takes no range")
        start, end = 0, 6
    else:
        start = _weekday_number(first, field)
        end = _weekday_number(last, field) if last else (6 if step else start)
    if end < start:
        raise ValueError(f"bad weekday field {field!r}: range {item!r} runs backwards")
    if step is not None and int(step) == 0:
        raise ValueError(f"bad weekday field {field!r}: step 0 in {item!r}")
    return [d % 7 for d in range(start, end + 1, int(step or 1))]


def _weekday_number(token: str, field: str) -> int:
    """0-7 (7 = Sunday, kept as 7 so '5-7' stays a forward range) or a three-letter day name."""
    if token.isascii() and token.isdigit():
        return int(token)
    if token not in _CRONTAB_DAYS:
        raise ValueError(f"bad weekday field {field!r}: unknown day {token!r}")
    return _CRONTAB_DAYS.index(token)


def interval_trigger(duration: timedelta, jitter: int | None = None) -> IntervalTrigger:
    """A trigger firing every `duration`, first one `duration` after the scheduler starts."""
    return IntervalTrigger(seconds=int(duration.total_seconds()), timezone="UTC", jitter=jitter)
