"""Schedule values are range-checked when the file is loaded, so `--list` refuses them too.

Before, `jitter = 99999999999999999` passed `--list` and then crashed the scheduler, a huge `every`
ended in an OverflowError traceback, and `cron = "0 0 31 2 *"` was accepted and never fired.
"""

from __future__ import annotations

import pytest

from crovia_spider.cli import main
from crovia_spider.exceptions import ConfigError
from crovia_spider.schedule.config import load_schedule
from tests.schedule.conftest import write_schedule

HEAD = '[[jobs]]\nname = "j"\nseal = true\n'
CASES = [
    (
        'every = "1h"\njitter = 99999999999999999\n',
        "'jitter' must be a whole number of seconds from 0 to 86400 (a day), got 99999999999999999",
    ),
    ('every = "1h"\njitter = 86401\n', "'jitter' must be a whole number of seconds from 0 to"),
    ('every = "99999999999999999d"\n', "bad duration '99999999999999999d': 'every' is at most"),
    ('every = "367d"\n', "bad duration '367d': 'every' is at most 366d (a year)"),
    ('cron = "0 0 31 2 *"\n', "cron '0 0 31 2 *' never fires: no date matches it"),
    ('cron = "0 0 31 4,6,9,11 *"\n', "never fires"),
]


@pytest.mark.parametrize(("when", "message"), CASES)
def test_out_of_range_values_are_refused_at_load(tmp_path, when, message):
    path = write_schedule(tmp_path / "s.toml", HEAD + when)
    with pytest.raises(ConfigError) as caught:
        load_schedule(path)
    assert str(caught.value).startswith(f"{path}: job 'j': ")
    assert message in str(caught.value)


@pytest.mark.parametrize(("when", "message"), CASES[::2])
def test_list_refuses_them_with_exit_2_and_no_traceback(tmp_path, capsys, when, message):
    path = write_schedule(tmp_path / "s.toml", HEAD + when)
    assert main(["schedule", "--list", "--config", str(path)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "when",
    [
        'every = "1h"\njitter = 86400\n',
        'every = "366d"\n',
        'cron = "0 0 29 2 *"\n',  # every fourth year
        'cron = "0 0 31 2 1"\n',  # crontab: day 31 OR Monday, so the Mondays of February
    ],
)
def test_the_limits_themselves_are_accepted(tmp_path, when):
    assert load_schedule(write_schedule(tmp_path / "s.toml", HEAD + when))
