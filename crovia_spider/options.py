"""Every project setting (`CROVIA_*`): its default, what it takes, and how a run overrides it.

Precedence, highest first: `scrapy crawl -s NAME=value` (or a `crovia` flag), the environment
variable of the same name, then the default below. Scrapy no longer reads arbitrary `SCRAPY_*`
variables, so settings.py reads these through `env_default()`; the `crovia` CLI uses the same
function for its flag defaults. README's configuration table is this table.

Each setting has a kind: what it takes (a whole number within bounds, 0 or 1, growing intervals,
URLs, a path ...), in words for messages and README, and how its text is read. `read_setting`
holds a value to its kind; crovia_spider/config/settings_check.py checks every setting of a run
with it before anything runs, and `crovia doctor` reports every one that is wrong.

A relative path in a setting (default, environment or `-s`) is taken from the project root, not
the working directory, so every command means the same files from any subdirectory:
`project_root()` finds the folder holding scrapy.cfg as Scrapy does. A path typed as a `crovia`
flag (`--ledger-dir DIR`) is the user's own and is taken from the working directory, as any
command's would be.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import shlex
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from crovia_spider import __version__
from crovia_spider.exceptions import ConfigError


class Kind(NamedTuple):
    """What a setting takes: `takes` in words, `read` a value of it (ValueError if none)."""

    takes: str
    read: Callable[[Any], Any]
    path: bool = False  # a path, taken from the project root when relative


class Setting(NamedTuple):
    default: str
    kind: Kind
    help: str  # one line, for README and --help


def _text_of(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        value = value.decode("utf-8", "replace")
    return value.strip() if isinstance(value, str) else str(value)


def _flag() -> Kind:
    """0 or 1, or true or false as Scrapy's getbool reads them (which the crawl then does)."""

    def read(value: Any) -> bool:
        if isinstance(value, bool):
            return value
        text = _text_of(value)
        if text in ("0", "1"):
            return text == "1"
        if value in ("true", "false", "True", "False"):  # as typed: getbool does not strip
            return value in ("true", "True")
        raise ValueError

    return Kind("0 or 1", read)


def _whole(low: int, high: int, unit: str, zero: str = "") -> Kind:
    """A whole number from `low` to `high` (of `unit`); `zero` says what 0 means."""

    def read(value: Any) -> int:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        text = _text_of(value)
        if not re.fullmatch(r"[+-]?[0-9]{1,19}", text):
            raise ValueError
        number = int(text)
        if not low <= number <= high:
            raise ValueError
        return number

    note = f" ({zero})" if zero else ""
    return Kind(f"a whole number of {unit} from {low:,} to {high:,}{note}", read)


def _seconds(low: float, high: float, *, above: bool = False, zero: str = "") -> Kind:
    """A number of seconds from `low` (or above it) to `high`."""

    def read(value: Any) -> float:
        if isinstance(value, bool):
            raise ValueError
        number = float(_text_of(value))  # ValueError for text that is no number
        if not math.isfinite(number) or number > high or number < low or (above and number <= low):
            raise ValueError
        return number

    span = f"above {low:g}, at most {high:,g}" if above else f"from {low:g} to {high:,g}"
    note = f" ({zero})" if zero else ""
    return Kind(f"a number of seconds {span}{note}", read)


def _path(*, optional: bool = False) -> Kind:
    def read(value: Any) -> str:
        text = _text_of(value)
        if "\0" in text or not (text or optional):
            raise ValueError
        return text

    return Kind("a path, or nothing" if optional else "a path", read, path=True)


def _listed(item: Callable[[str], str]) -> Callable[[Any], list[str]]:
    def read(value: Any) -> list[str]:
        return [item(part.strip()) for part in _text_of(value).split(",") if part.strip()]

    return read


def _url_of(schemes: tuple[str, ...]) -> Callable[[str], str]:
    def read(text: str) -> str:
        parts = urlsplit(text)
        if parts.scheme not in schemes or not text.isprintable() or " " in text:
            raise ValueError
        if parts.scheme == "mailto" and "@" not in parts.path:
            raise ValueError
        if parts.scheme not in ("mailto", "unix") and not parts.hostname:
            raise ValueError
        parts.port  # noqa: B018 - ValueError for a port that is no number or out of range
        return text

    return read


def _urls(what: str) -> Kind:
    read = _listed(_url_of(("http", "https")))
    return Kind(f"comma-separated http(s) URLs of {what}, or nothing", read)


def _paths() -> Kind:
    return Kind("comma-separated paths, or nothing", _listed(_path().read))


def _url(schemes: tuple[str, ...], *, optional: bool) -> Kind:
    read_url = _url_of(schemes)

    def read(value: Any) -> str:
        text = _text_of(value)
        return text if optional and not text else read_url(text)

    names = " or ".join(
        f"{scheme}:" if scheme == "mailto" else f"{scheme}://" for scheme in schemes
    )
    return Kind(f"a URL ({names})" + (", or nothing" if optional else ""), read)


def _printable(limit: int) -> Kind:
    def read(value: Any) -> str:
        text = _text_of(value)
        if len(text) > limit or not text.isprintable():
            raise ValueError
        return text

    return Kind(f"printable text of at most {limit} characters, or nothing", read)


def _origin() -> Kind:
    def read(value: Any) -> str:
        text = _text_of(value)
        if text:
            from ledger.exceptions import LedgerError
            from ledger.tlog.note import check_key_name

            try:
                check_key_name(text)
            except LedgerError:
                raise ValueError from None
        return text

    return Kind("a log name without spaces or '+' (such as example.org/news), or nothing", read)


def _command() -> Kind:
    def read(value: Any) -> list[str]:
        return shlex.split(_text_of(value))  # ValueError for an unclosed quote

    return Kind("a command line, split as a shell would, or nothing", read)


_INTERVAL = re.compile(r"([0-9]{1,6})([smhd])")  # as crovia_spider/capture/book.py reads them
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _intervals() -> Kind:
    def read(value: Any) -> tuple[int, ...]:
        text = _text_of(value)
        if not text:
            return ()  # the capture book's default schedule
        seconds = []
        for part in text.split(","):
            match = _INTERVAL.fullmatch(part.strip())
            if match is None:
                raise ValueError
            seconds.append(int(match[1]) * _UNITS[match[2]])
        if seconds[0] <= 0 or any(b <= a for a, b in itertools.pairwise(seconds)):
            raise ValueError
        return tuple(seconds)

    return Kind("growing intervals above 0 such as 1h,1d,7d,30d (units s, m, h, d)", read)


def _date() -> Kind:
    def read(value: Any) -> str:
        text = _text_of(value)
        if text and not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
            raise ValueError
        if text:
            date.fromisoformat(text)  # ValueError for a day no calendar has
        return text

    return Kind("a date YYYY-MM-DD, or nothing", read)


def _pinned_key() -> Kind:
    def read(value: Any) -> str:
        text = _text_of(value)
        if "\0" in text or (key_material(text) and not _PUBLIC_HEX.fullmatch(text)):
            raise ValueError
        return text

    return Kind("a public key (64 hex) or a file holding one, or nothing", read)


def _interval() -> Kind:
    def read(value: Any) -> int:
        match = _INTERVAL.fullmatch(_text_of(value))
        if match is None or int(match[1]) <= 0:
            raise ValueError
        return int(match[1]) * _UNITS[match[2]]

    return Kind("an interval above 0 such as 90s, 30m, 1h or 7d (units s, m, h, d)", read)


_GiB = 1 << 30
_DAY = 86400.0
OPTIONS: dict[str, Setting] = {
    "CROVIA_FEEDS_FILE": Setting("config/feeds.toml", _path(), "feed list to crawl"),
    "CROVIA_CLASSIFY_FILE": Setting("config/classify.toml", _path(), "classification rules"),
    "CROVIA_SCHEDULE_FILE": Setting("config/schedule.toml", _path(), "jobs for `crovia schedule`"),
    "CROVIA_LEDGER_DIR": Setting(
        "data/ledger", _path(), "ledger directory (JSONL ledger, seals, runs, index)"
    ),
    "CROVIA_SIGNING_KEY_FILE": Setting(
        "data/keys/signing.key",
        _path(),
        "ed25519 signing key: a regular file, mode 0600, in a directory only its owner can write",
    ),
    "CROVIA_SEAL_EVERY": Setting(
        "1000",
        _whole(0, 10**9, "leaves", "0: only at a crawl's end"),
        "leaves between automatic seals (a crawl also seals at its end)",
    ),
    "CROVIA_LOCK_TIMEOUT": Setting(
        "60",
        _seconds(0, 7 * _DAY),
        "seconds a writer waits for the ledger lock before giving up",
    ),
    "CROVIA_LOG_ORIGIN": Setting(
        "",
        _origin(),
        "origin line of the log's checkpoints and name of its note key; empty:"
        " crovia.local/<key_id>",
    ),
    "CROVIA_ISSUE_BATCH": Setting(
        "500",
        _whole(1, 100_000, "envelopes"),
        "envelopes per ledger append (one fsync per batch)",
    ),
    "CROVIA_MAX_ENTRIES_PER_FEED": Setting(
        "2000",
        _whole(0, 10**7, "entries"),
        "entries read per feed and crawl; the rest are counted as dropped in the run record",
    ),
    "CROVIA_MAX_SITEMAP_URLS": Setting(
        "50000",
        _whole(0, 10**8, "URLs"),
        "page URLs read per sitemap source and crawl (the protocol's 50,000 a file)",
    ),
    "CROVIA_SITEMAP_FETCHES": Setting(
        "50",
        _whole(0, 100_000, "sitemaps"),
        "sitemaps an index (or robots.txt) may have fetched per source and crawl",
    ),
    "CROVIA_SITEMAP_DEPTH": Setting(
        "3",
        _whole(0, 100, "levels"),
        "sitemap indexes nested deeper than this are not followed",
    ),
    "CROVIA_SITEMAP_BYTES": Setting(
        "268435456",
        _whole(1, 64 * _GiB, "bytes"),
        "bytes of sitemaps one source may read per crawl, uncompressed; past them none are read",
    ),
    "CROVIA_OAI_PAGES": Setting(
        "100",
        _whole(1, 100_000, "requests"),
        "requests one OAI-PMH harvest makes at most; the days after are not asked",
    ),
    "CROVIA_OAI_FROM": Setting(
        "",
        _date(),
        "for one crawl: the first day an OAI-PMH harvest lists (to harvest a gap again)",
    ),
    "CROVIA_CAPTURE": Setting(
        "1", _flag(), "1: capture the pages of items of sources with `capture`; 0: never"
    ),
    "CROVIA_RECAPTURE_AFTER": Setting(
        "1h,1d,7d,30d",
        _intervals(),
        "when a captured page is captured again, after first seen; then every last interval",
    ),
    "CROVIA_CAPTURE_MAX_BYTES": Setting(
        "16777216",
        _whole(1, 4 * _GiB, "bytes"),
        "bytes of one page a capture keeps; a longer page is a failed capture",
    ),
    "CROVIA_CAPTURE_PAGES": Setting(
        "1000",
        _whole(0, 10**7, "pages"),
        "plain page captures a run makes at most, newest first; the rest are due at the next run",
    ),
    "CROVIA_CHROMIUM": Setting(
        "/usr/bin/chromium",
        _path(),
        'the system Chromium browser captures run (`capture = "browser"`); never downloaded',
    ),
    "CROVIA_BROWSER_PAGES": Setting(
        "100",
        _whole(0, 10**6, "pages"),
        "browser captures a run makes at most; the rest are due at the next run",
    ),
    "CROVIA_BROWSER_SECONDS": Setting(
        "30",
        _seconds(1, 600),
        "seconds a browser capture may take to load its page; what is still loading is cut",
    ),
    "CROVIA_BROWSER_CONCURRENCY": Setting(
        "2",
        _whole(1, 64, "pages"),
        "pages the browser renders at once",
    ),
    "CROVIA_BROWSER_MEMORY_MB": Setting(
        "2048",
        _whole(64, 1 << 20, "MiB"),
        "resident memory the browser may hold; past it the page fails and the browser restarts",
    ),
    "CROVIA_BROWSER_REQUESTS": Setting(
        "500",
        _whole(1, 100_000, "requests"),
        "requests one browser-captured page may make; the rest are refused and listed",
    ),
    "CROVIA_FAILING_AFTER": Setting(
        "3",
        _whole(0, 10**6, "crawls", "0: never"),
        "crawls in a row a feed must fail to be named in every crawl summary (0: never)",
    ),
    "CROVIA_PARSE_WORKER": Setting(
        "1", _flag(), "1: parse feeds in a worker process (second core); 0: inline"
    ),
    "CROVIA_PARSE_MEMORY_MB": Setting(
        "1024",
        _whole(1, 1 << 20, "MiB"),
        "memory the parser worker may hold; a body needing more is a failed feed",
    ),
    "CROVIA_PARSE_SECONDS": Setting(
        "120",
        _seconds(0, _DAY, above=True),
        "CPU seconds the parser worker may spend on one body; longer is a failed feed",
    ),
    "CROVIA_POLITE_DELAYS": Setting(
        "1", _flag(), "0 turns every politeness delay off (local tests and benches)"
    ),
    "CROVIA_CONTACT_URL": Setting(
        "https://github.com/crovia/crovia-spider",
        _url(("https", "http", "mailto"), optional=False),
        "contact URL in the User-Agent: set your own, so site owners can reach you",
    ),
    "CROVIA_USER_AGENT": Setting(
        "", _printable(512), "full User-Agent; empty: crovia-spider/VERSION (+CONTACT_URL)"
    ),
    "CROVIA_TSA_URLS": Setting(
        "", _urls("TSAs"), "RFC 3161 TSAs `crovia stamp` asks, comma-separated URLs"
    ),
    "CROVIA_TSA_ROOTS": Setting(
        "", _paths(), "PEM files of trusted TSA roots, comma-separated: chain checked at stamp"
    ),
    "CROVIA_OTS_CALENDARS": Setting(
        "",
        _urls("calendars"),
        "OpenTimestamps calendars `crovia stamp` asks, comma-separated",
    ),
    "CROVIA_STAMP_TIMEOUT": Setting(
        "20",
        _seconds(0, 3600, above=True),
        "seconds one TSA or calendar request may take in all",
    ),
    "CROVIA_SCRAPY_COMMAND": Setting(
        "", _command(), "command starting scheduled crawls; empty: python -m scrapy"
    ),
    "CROVIA_PUBLISH_DIR": Setting(
        "",
        _path(optional=True),
        "where `crovia publish` writes the static log; set: the scheduler publishes after seals",
    ),
    "CROVIA_WITNESSES": Setting(
        "",
        _urls("witnesses"),
        "comma-separated witness base URLs `crovia publish` asks to cosign",
    ),
    "CROVIA_METRICS_FILE": Setting(
        "",
        _path(optional=True),
        "set: every crawl writes Prometheus metrics there (node-exporter's textfile collector)",
    ),
    "CROVIA_REDIS_URL": Setting(
        "",
        _url(("redis", "rediss", "unix"), optional=True),
        "Redis of a crawl cluster (docs/cluster.md) for `crovia worker`, `sequencer`, `workers`"
        " and `crawl --redis`; empty: crawls are local",
    ),
    "CROVIA_JOB_TIMEOUT": Setting(
        "60",
        _seconds(1, _DAY),
        "seconds a worker may be silent on a job before another worker takes it over",
    ),
    "CROVIA_REDIS_RUN_TIMEOUT": Setting(
        "3600",
        _seconds(0, 7 * _DAY, above=True),
        "seconds the sequencer waits for a run's results before recording the rest unanswered",
    ),
    "CROVIA_REDIS_NO_WORKER_SECONDS": Setting(
        "120",
        _seconds(0, 7 * _DAY, above=True),
        "seconds a cluster run waits with no live worker before it gives up, its jobs withdrawn",
    ),
    "CROVIA_REDIS_RESULT_BYTES": Setting(
        "134217728",
        _whole(1 << 20, 4 * _GiB, "bytes"),
        "bytes one worker's result may hold; the sequencer refuses a larger one unread",
    ),
    "CROVIA_JOB_KEY_FILE": Setting(
        "data/keys/jobs.key",
        _path(),
        "the sequencer's ed25519 key for signing fetch jobs (not the ledger's), mode 0600",
    ),
    "CROVIA_SEQUENCER_KEY": Setting(
        "",
        _pinned_key(),
        "for `crovia worker`: the sequencer's job public key (64 hex, or a file holding it)",
    ),
    "CROVIA_WATCH_EVERY": Setting(
        "1h",
        _interval(),
        "how often a watched page (a source of kind watch) is captured, unless it says `every`",
    ),
    "CROVIA_REMOVAL_CAPTURES": Setting(
        "2",
        _whole(1, 1000, "captures"),
        "captures in a row a page must answer 404 or 410 before it is a change `removed`",
    ),
    "CROVIA_REMOVAL_SPAN": Setting(
        "1h",
        _interval(),
        "the first and last of those captures are at least this far apart",
    ),
    "CROVIA_NOTIFY_FILE": Setting(
        "config/notify.toml", _path(), "webhooks and Apprise URLs told of each change"
    ),
    "CROVIA_NOTIFY_KEY_FILE": Setting(
        "data/keys/notify.key",
        _path(),
        "ed25519 key signing webhooks (v1a), its own, mode 0600; made at first use",
    ),
    "CROVIA_NOTIFY_RETRIES": Setting(
        "5s,5m,30m,2h,5h,10h,14h,20h,24h",
        _intervals(),
        "waits between a webhook's attempts (Standard Webhooks' schedule); then it gives up",
    ),
    "CROVIA_NOTIFY_TIMEOUT": Setting(
        "15",
        _seconds(0, 300, above=True),
        "seconds one webhook or Apprise delivery may take in all",
    ),
    "CROVIA_CHANGES_PER_PAGE": Setting(
        "5",
        _whole(0, 10**6, "events", "0: no cap"),
        "change events of one page per delivery and in the published feeds; then one +N more",
    ),
    "CROVIA_FEED_EVENTS": Setting(
        "100",
        _whole(1, 10**5, "events"),
        "the newest change events `crovia publish` puts in changes.atom and changes.json",
    ),
}
# Which settings are paths (taken from the project root when relative).
PATH_OPTIONS = frozenset(name for name, setting in OPTIONS.items() if setting.kind.path)


def user_agent(agent: str, contact_url: str) -> str:
    """CROVIA_USER_AGENT if set, else the project's own agent naming CROVIA_CONTACT_URL."""
    return agent or f"crovia-spider/{__version__} (+{contact_url})"


def env_default(name: str) -> str:
    """Setting `name` from the environment, else its default, as text, unchecked. Raises
    KeyError if unknown; `setting` is the same value checked and read."""
    return os.environ.get(name, OPTIONS[name].default)


def read_setting(name: str, value: Any, where: str) -> Any:
    """`value` of setting `name` as its kind reads it; ConfigError, one line naming the setting,
    the value (`where` it came from) and what it takes, when it is none of them."""
    kind = OPTIONS[name].kind
    try:
        return kind.read(value)
    except (ValueError, TypeError):
        message = f"{name} is {shown_value(value)} ({where}): it takes {kind.takes}"
        raise ConfigError(message) from None


def setting(name: str) -> Any:
    """Setting `name` from the environment (else its default), checked and read."""
    where = "environment" if name in os.environ else "default"
    return read_setting(name, env_default(name), where)


# A PEM block or a note signer key (tlog): private key text, never shown nor taken typed.
PRIVATE_KEY_TEXT = re.compile(r"-----BEGIN |PRIVATE\+KEY\+")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_PUBLIC_HEX = re.compile(r"[0-9a-fA-F]{64}")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{40,}={0,2}")
_PASSWORD = re.compile(r"(://[^/@:\s]*:)[^/@\s]*@")  # a URL's user:password@


def key_material(text: str) -> str:
    """What `text` is, said without it, when it could be key material ("" when not): a PEM
    block or a note signing key, 32 or more hex digits (a private seed and a public key look the
    same), or 40 or more base64 characters of mixed case with a digit. Only for deciding what a
    message may show: a public key typed where one is expected is hidden too."""
    text = text.strip()
    if PRIVATE_KEY_TEXT.search(text):
        return "a PEM block or signing key"
    if _HEX.fullmatch(text):
        return f"{len(text)} hex digits"
    if _BASE64.fullmatch(text):
        upper = sum(c.isupper() for c in text)
        lower = sum(c.islower() for c in text)
        if min(upper, lower) >= len(text) // 6 and any(c.isdigit() for c in text):
            return f"{len(text)} base64 characters"
    return ""


def shown_value(value: Any) -> str:
    """`value` as a message may show it: quoted; key material, a URL's password and long values
    never whole."""
    text = value if isinstance(value, str) else str(value)
    what = key_material(text)
    if what:
        return f"<{what}, not shown>"
    text = _PASSWORD.sub(r"\1***@", text)
    if len(text) > 80:
        return f"{text[:40]!r}... ({len(text)} characters)"
    return repr(text)


# The checkout this package was installed from (an editable install); used outside any project.
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: the working directory) holding
    scrapy.cfg, as Scrapy finds its project; else the checkout this package runs from, if it
    has one; else `start` itself. Never raises.
    """
    start = (start or Path.cwd()).absolute()
    for directory in (start, *start.parents):
        if (directory / "scrapy.cfg").is_file():
            return directory
    return _PACKAGE_ROOT if (_PACKAGE_ROOT / "scrapy.cfg").is_file() else start


def resolve_path(value: str | os.PathLike[str]) -> Path:
    """`value` as an absolute path: a relative one is taken from the project root."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else project_root() / path


def path_default(name: str) -> Path:
    """Path setting `name` from the environment or its default, resolved by `resolve_path`.
    KeyError for a setting that is no path; ConfigError for an optional one left empty (ask
    `optional_path`) or a value that is no path."""
    if name not in PATH_OPTIONS:
        raise KeyError(f"{name} is not a path setting")
    path = optional_path(name)
    if path is None:
        raise ConfigError(f"{name} is not set")
    return path


def optional_path(name: str) -> Path | None:
    """Path setting `name` resolved by `resolve_path`, or None when it is set empty (or is an
    optional path with no default); ConfigError for a value that is no path."""
    text = setting(name) if name in PATH_OPTIONS else None
    if text is None:
        raise KeyError(f"{name} is not a path setting")
    return resolve_path(text) if text else None
