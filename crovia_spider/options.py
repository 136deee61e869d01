"""Every project setting (`CROVIA_*`), its default, and how a run overrides it.

Precedence, highest first: `scrapy crawl -s NAME=value` (or a `crovia` flag), the environment variable of the
same name, then the default below. Scrapy no longer reads arbitrary `SCRAPY_*` variables, so settings.py
reads these through `env_default()`; the `crovia` CLI uses the same function for its flag defaults.
Paths are relative to the working directory (the project root, where scrapy.cfg is).
"""

from __future__ import annotations

import os

# name -> (default, one line for README and --help)
OPTIONS: dict[str, tuple[str, str]] = {
    "CROVIA_FEEDS_FILE": ("config/feeds.toml", "feed list to crawl"),
    "CROVIA_CLASSIFY_FILE": ("config/classify.toml", "classification rules"),
    "CROVIA_SCHEDULE_FILE": ("config/schedule.toml", "jobs for `crovia schedule`"),
    "CROVIA_LEDGER_DIR": ("data/ledger", "ledger directory (JSONL ledger, seals, runs, index)"),
    "CROVIA_SIGNING_KEY_FILE": ("data/keys/signing.key", "ed25519 signing key, mode 0600"),
    "CROVIA_SEAL_EVERY": ("1000", "leaves between automatic seals (a crawl also seals at its end)"),
    "CROVIA_LOCK_TIMEOUT": ("60", "seconds a writer waits for the ledger lock before giving up"),
}


def env_default(name: str) -> str:
    """The value of setting `name` from the environment, else its default. Raises KeyError for unknown names."""
    default, _ = OPTIONS[name]
    return os.environ.get(name, default)
