"""Every setting of a run checked against its kind before anything runs (issue 43, obs 4).

The table is crovia_spider/options.py (`OPTIONS`: default, kind, help). A run's settings come from
the environment (or the default), from `-s NAME=VALUE` on a command line, and for a crawl from
Scrapy's settings, which hold both. Each is held to its kind here; the first that is none of what
it takes is a ConfigError of one line naming the setting, its value (never key material, never
a long value whole) and what it takes. The `crovia` commands that start crawls (crawl, capture,
schedule, worker, sequencer) and `crovia feeds check` check before they start anything (exit 2);
a crawl started by `scrapy crawl` checks in its spider's `from_crawler`, before the pipelines
open the ledger (exit 1, the line logged as "crawl refused"); `crovia doctor` lists every one
that is wrong.

A `-s` naming a CROVIA_* setting that is not in the table is refused with the closest name:
`-s CROVIA_RECAPTURE_AFTR=1d` would otherwise change nothing, silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from crovia_spider.exceptions import ConfigError
from crovia_spider.options import OPTIONS, env_default, read_setting
from crovia_spider.suggest import did_you_mean

# Settings crovia sets for the crawls it starts (never a user's): not in the table.
INTERNAL_SETTINGS = frozenset(
    {
        "CROVIA_CAPTURE_ONLY",
        "CROVIA_CAPTURE_ALL",
        "CROVIA_REDIS_ROLE",
        "CROVIA_REDIS_JOBS",
        "CROVIA_REDIS_RUN",
        "CROVIA_SEQUENCER_PUBKEY",
        "CROVIA_WORKER_ALLOW_PRIVATE",
        "CROVIA_WORKER_NAME",
        "CROVIA_BROWSER_SESSION",
    }
)
# Variables the Makefile exports for its own test run (the tools the tests drive, the suite's own
# switches): never read by crovia, and no misspelling of a setting.
HARNESS_VARIABLES = frozenset(
    {
        "CROVIA_NODE",
        "CROVIA_REDIS_SERVER",
        "CROVIA_PYWB_BIN",
        "CROVIA_FORBID_SKIPS",
        "CROVIA_FUZZ_SECONDS",
    }
)
PREFIX = "CROVIA_"
_CMDLINE_PRIORITY = 40  # Scrapy's priority of `-s` (scrapy.settings.SETTINGS_PRIORITIES)


def environment_problems(environ: Mapping[str, str] | None = None) -> list[ConfigError]:
    """Each setting of the table whose environment value is none of what it takes."""
    environ = os.environ if environ is None else environ
    found = []
    for name in OPTIONS:
        if name in environ:
            try:
                read_setting(name, environ[name], "environment")
            except ConfigError as exc:
                found.append(exc)
    return found


def check_environment(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every setting as this environment gives it (else its default), read by its kind; the
    first ConfigError when one is wrong."""
    environ = os.environ if environ is None else environ
    problems = environment_problems(environ)
    if problems:
        raise problems[0]
    return {
        name: read_setting(name, environ.get(name, setting.default), "default")
        for name, setting in OPTIONS.items()
    }


def check_pairs(pairs: Iterable[str], where: str = "-s") -> dict[str, Any]:
    """`NAME=VALUE` pairs of a command line: each CROVIA_* one read by its kind (Scrapy's own
    settings are Scrapy's to check); ConfigError for a wrong value or a CROVIA_* name that is no
    setting, with the closest one."""
    read: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        name = name.strip()
        if not name.startswith(PREFIX) or name in INTERNAL_SETTINGS:
            continue
        if name not in OPTIONS:
            raise ConfigError(f"{where} {name}: no such setting{did_you_mean(name, OPTIONS)}")
        read[name] = read_setting(name, value, where)
    return read


def check_command_line(pairs: Iterable[str] = ()) -> None:
    """What a `crovia` command that starts crawls checks first: the environment, then its
    `-s` pairs (which win over it)."""
    check_environment()
    check_pairs(pairs)


def check_crawler_settings(settings: Any) -> dict[str, Any]:
    """Every setting of the table in a crawl's Scrapy `settings`, read by its kind, by name;
    ConfigError for the first that is wrong, or for a `-s` naming a CROVIA_* setting that is no
    setting."""
    for name in settings:
        known = name in OPTIONS or name in INTERNAL_SETTINGS
        if name.startswith(PREFIX) and not known and _where(settings, name) == "-s":
            raise ConfigError(f"-s {name}: no such setting{did_you_mean(name, OPTIONS)}")
    read = {}
    for name in OPTIONS:
        value = settings.get(name)
        if value is None:
            value = env_default(name)
        read[name] = read_setting(name, value, _where(settings, name))
    return read


def _where(settings: Any, name: str) -> str:
    if (settings.getpriority(name) or 0) >= _CMDLINE_PRIORITY:
        return "-s"
    return "environment" if name in os.environ else "default"
