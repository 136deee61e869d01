"""Every project setting (`CROVIA_*`), its default, and how a run overrides it.

Precedence, highest first: `scrapy crawl -s NAME=value` (or a `crovia` flag), the environment
variable of the same name, then the default below. Scrapy no longer reads arbitrary `SCRAPY_*`
variables, so settings.py reads these through `env_default()`; the `crovia` CLI uses the same
function for its flag defaults. README's configuration table is this table.

A relative path in a setting (default, environment or `-s`) is taken from the project root, not
the working directory, so every command means the same files from any subdirectory:
`project_root()` finds the folder holding scrapy.cfg as Scrapy does. A path typed as a `crovia`
flag (`--ledger-dir DIR`) is the user's own and is taken from the working directory, as any
command's would be.
"""

from __future__ import annotations

import os
from pathlib import Path

from crovia_spider import __version__

# name -> (default, one line for README and --help)
OPTIONS: dict[str, tuple[str, str]] = {
    "CROVIA_FEEDS_FILE": ("config/feeds.toml", "feed list to crawl"),
    "CROVIA_CLASSIFY_FILE": ("config/classify.toml", "classification rules"),
    "CROVIA_SCHEDULE_FILE": ("config/schedule.toml", "jobs for `crovia schedule`"),
    "CROVIA_LEDGER_DIR": ("data/ledger", "ledger directory (JSONL ledger, seals, runs, index)"),
    "CROVIA_SIGNING_KEY_FILE": (
        "data/keys/signing.key",
        "ed25519 signing key: a regular file, mode 0600, in a directory only its owner can write",
    ),
    "CROVIA_SEAL_EVERY": ("1000", "leaves between automatic seals (a crawl also seals at its end)"),
    "CROVIA_LOCK_TIMEOUT": ("60", "seconds a writer waits for the ledger lock before giving up"),
    "CROVIA_LOG_ORIGIN": (
        "",
        "origin line of the log's checkpoints and name of its note key; empty:"
        " crovia.local/<key_id>",
    ),
    "CROVIA_ISSUE_BATCH": ("500", "envelopes per ledger append (one fsync per batch)"),
    "CROVIA_MAX_ENTRIES_PER_FEED": (
        "2000",
        "entries read per feed and crawl; the rest are counted as dropped in the run record",
    ),
    "CROVIA_MAX_SITEMAP_URLS": (
        "50000",
        "page URLs read per sitemap source and crawl (the protocol's 50,000 a file)",
    ),
    "CROVIA_SITEMAP_FETCHES": (
        "50",
        "sitemaps an index (or robots.txt) may have fetched per source and crawl",
    ),
    "CROVIA_SITEMAP_DEPTH": ("3", "sitemap indexes nested deeper than this are not followed"),
    "CROVIA_SITEMAP_BYTES": (
        "268435456",
        "bytes of sitemaps one source may read per crawl, uncompressed; past them none are read",
    ),
    "CROVIA_CAPTURE": ("1", "1: capture the pages of items of sources with `capture`; 0: never"),
    "CROVIA_RECAPTURE_AFTER": (
        "1h,1d,7d,30d",
        "when a captured page is captured again, after first seen; then every last interval",
    ),
    "CROVIA_CAPTURE_MAX_BYTES": (
        "16777216",
        "bytes of one page a capture keeps; a longer page is a failed capture",
    ),
    "CROVIA_FAILING_AFTER": (
        "3",
        "crawls in a row a feed must fail to be named in every crawl summary (0: never)",
    ),
    "CROVIA_PARSE_WORKER": ("1", "1: parse feeds in a worker process (second core); 0: inline"),
    "CROVIA_PARSE_MEMORY_MB": (
        "1024",
        "memory the parser worker may hold; a body needing more is a failed feed",
    ),
    "CROVIA_PARSE_SECONDS": (
        "120",
        "CPU seconds the parser worker may spend on one body; longer is a failed feed",
    ),
    "CROVIA_POLITE_DELAYS": ("1", "0 turns every politeness delay off (local tests and benches)"),
    "CROVIA_CONTACT_URL": (
        "https://github.com/crovia/crovia-spider",
        "contact URL in the User-Agent: set your own, so site owners can reach you",
    ),
    "CROVIA_USER_AGENT": ("", "full User-Agent; empty: crovia-spider/VERSION (+CONTACT_URL)"),
    "CROVIA_TSA_URLS": ("", "RFC 3161 TSAs `crovia stamp` asks, comma-separated URLs"),
    "CROVIA_TSA_ROOTS": (
        "",
        "PEM files of trusted TSA roots, comma-separated: chain checked at stamp",
    ),
    "CROVIA_OTS_CALENDARS": ("", "OpenTimestamps calendars `crovia stamp` asks, comma-separated"),
    "CROVIA_STAMP_TIMEOUT": ("20", "seconds one TSA or calendar request may take in all"),
    "CROVIA_SCRAPY_COMMAND": (
        "",
        "command starting scheduled crawls; empty: python -m scrapy",
    ),
    "CROVIA_PUBLISH_DIR": (
        "",
        "where `crovia publish` writes the static log; set: the scheduler publishes after seals",
    ),
    "CROVIA_WITNESSES": ("", "comma-separated witness base URLs `crovia publish` asks to cosign"),
    "CROVIA_METRICS_FILE": (
        "",
        "set: every crawl writes Prometheus metrics there (node-exporter's textfile collector)",
    ),
    "CROVIA_REDIS_URL": (
        "",
        "Redis of a crawl cluster (docs/cluster.md) for `crovia worker`, `sequencer`, `workers`"
        " and `crawl --redis`; empty: crawls are local",
    ),
    "CROVIA_JOB_TIMEOUT": (
        "60",
        "seconds a worker may be silent on a job before another worker takes it over",
    ),
    "CROVIA_REDIS_RUN_TIMEOUT": (
        "3600",
        "seconds the sequencer waits for a run's results before recording the rest unanswered",
    ),
    "CROVIA_REDIS_NO_WORKER_SECONDS": (
        "120",
        "seconds a cluster run waits with no live worker before it gives up, its jobs withdrawn",
    ),
    "CROVIA_REDIS_RESULT_BYTES": (
        "134217728",
        "bytes one worker's result may hold; the sequencer refuses a larger one unread",
    ),
    "CROVIA_JOB_KEY_FILE": (
        "data/keys/jobs.key",
        "the sequencer's ed25519 key for signing fetch jobs (not the ledger's), mode 0600",
    ),
    "CROVIA_SEQUENCER_KEY": (
        "",
        "for `crovia worker`: the sequencer's job public key (64 hex, or a file holding it)",
    ),
}


def user_agent(agent: str, contact_url: str) -> str:
    """CROVIA_USER_AGENT if set, else the project's own agent naming CROVIA_CONTACT_URL."""
    return agent or f"crovia-spider/{__version__} (+{contact_url})"


def env_default(name: str) -> str:
    """Setting `name` from the environment, else its default. Raises KeyError if unknown."""
    default, _ = OPTIONS[name]
    return os.environ.get(name, default)


# Which settings are paths (taken from the project root when relative).
PATH_OPTIONS = frozenset(
    {
        "CROVIA_FEEDS_FILE",
        "CROVIA_CLASSIFY_FILE",
        "CROVIA_SCHEDULE_FILE",
        "CROVIA_LEDGER_DIR",
        "CROVIA_SIGNING_KEY_FILE",
        "CROVIA_JOB_KEY_FILE",
    }
)
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
    """Path setting `name` from the environment or its default, resolved by `resolve_path`."""
    if name not in PATH_OPTIONS:
        raise KeyError(f"{name} is not a path setting")
    return resolve_path(env_default(name))
