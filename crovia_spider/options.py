"""Every project setting (`CROVIA_*`), its default, and how a run overrides it.

Precedence, highest first: `scrapy crawl -s NAME=value` (or a `crovia` flag), the environment
variable of the same name, then the default below. Scrapy no longer reads arbitrary `SCRAPY_*`
variables, so settings.py reads these through `env_default()`; the `crovia` CLI uses the same
function for its flag defaults. Paths are relative to the working directory (the project root,
where scrapy.cfg is). README's configuration table is this table.
"""

from __future__ import annotations

import os

from crovia_spider import __version__

# name -> (default, one line for README and --help)
OPTIONS: dict[str, tuple[str, str]] = {
    "CROVIA_FEEDS_FILE": ("config/feeds.toml", "feed list to crawl"),
    "CROVIA_CLASSIFY_FILE": ("config/classify.toml", "classification rules"),
    "CROVIA_SCHEDULE_FILE": ("config/schedule.toml", "jobs for `crovia schedule`"),
    "CROVIA_LEDGER_DIR": ("data/ledger", "ledger directory (JSONL ledger, seals, runs, index)"),
    "CROVIA_SIGNING_KEY_FILE": ("data/keys/signing.key", "ed25519 signing key, mode 0600"),
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
    "CROVIA_PARSE_WORKER": ("1", "1: parse feeds in a worker process (second core); 0: inline"),
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
}


def user_agent(agent: str, contact_url: str) -> str:
    """CROVIA_USER_AGENT if set, else the project's own agent naming CROVIA_CONTACT_URL."""
    return agent or f"crovia-spider/{__version__} (+{contact_url})"


def env_default(name: str) -> str:
    """Setting `name` from the environment, else its default. Raises KeyError if unknown."""
    default, _ = OPTIONS[name]
    return os.environ.get(name, default)
