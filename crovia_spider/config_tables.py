"""The top-level tables of a config file: feeds.toml, classify.toml and schedule.toml each allow
a fixed set, and a misspelt one (`[[feed]]`) is an error naming what is allowed, rather than
reading as "nothing configured" or being silently ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crovia_spider.exceptions import ConfigError


def check_top_level(path: Path, document: dict[str, Any], allowed: dict[str, str]) -> None:
    """Raise ConfigError, naming `path`, the unknown keys and the allowed ones, if `document` has
    a top-level key not in `allowed` (each key mapped to how the file spells it, e.g. "[[feeds]]").
    """
    unknown = [key for key in document if key not in allowed]
    if unknown:
        raise ConfigError(
            f"{path}: unknown top-level key(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(allowed.values())}"
        )
