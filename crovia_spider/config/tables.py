"""Reading a config file (feeds.toml, classify.toml, schedule.toml) within bounds, and checking
its top-level tables.

Each file is read and parsed by `read_toml`, which refuses, before the TOML parser sees it, a file
over MAX_CONFIG_BYTES (told by its size, before it is read) or nested deeper than MAX_NESTING
(arrays, inline tables and the parts of a dotted key together). tomllib recurses once per array
or inline table and spends quadratic time on a long dotted key: a 100,000-deep file was a
RecursionError traceback, a 100,000-part key a minute of CPU. A plain scan of the text (strings
and comments skipped) decides it, in linear time; RecursionError is still caught, as a backstop.

`check_top_level`: each file allows a fixed set of top-level tables, and a misspelt one
(`[[feed]]`) is an error naming what is allowed, rather than reading as "nothing configured" or
being silently ignored.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from crovia_spider.exceptions import ConfigError

MAX_CONFIG_BYTES = 4 << 20  # 4 MiB: 10,000 feeds (the feed-count bound) take about 1.5 MB
MAX_NESTING = 32  # our files use 3 (`[[feeds]]` holding `vendor`, a list of keywords)

# One token of TOML's lexical structure, as far as nesting is concerned: a string or comment
# (skipped whole, so a bracket in it does not count), a dotted key (its parts are levels), a bare
# word (consumed whole, so the scan stays linear), or a bracket.
_BARE = r"[A-Za-z0-9_-]++"
_BASIC = r'"(?:[^"\\\n]|\\.)*+"'
_LITERAL = r"'[^'\n]*+'"
_PART = f"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_TOKEN = re.compile(
    r'"""(?:[^\\]|\\.)*?"""(?!")|' + r"'''.*?'''(?!')|"  # multi-line strings
    rf"(?P<key>{_PART}(?:[ \t]*+\.[ \t]*+{_PART})++)|"
    rf"{_BASIC}|{_LITERAL}|{_BARE}|#[^\n]*+|"
    r"(?P<open>[\[{])|(?P<close>[\]}])",
    re.S,
)


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document at `path`. Raises ConfigError naming the file and the bound when it is
    larger than MAX_CONFIG_BYTES or nested deeper than MAX_NESTING; OSError, UnicodeDecodeError
    and tomllib.TOMLDecodeError as reading and parsing raise them (each caller names its file)."""
    return parse_toml(path, read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8"))


def parse_toml(path: Path, text: str) -> dict[str, Any]:
    """`text` (read from `path`) parsed, if it is nested no deeper than MAX_NESTING (ConfigError);
    tomllib.TOMLDecodeError if it is not TOML."""
    check_nesting(path, text)
    try:
        return tomllib.loads(text)
    except RecursionError:  # not reached after check_nesting: a backstop
        raise ConfigError(f"{path}: nested too deep to parse") from None


def read_bounded(path: Path, limit: int, kind: str = "a config file") -> bytes:
    """The bytes of `path`; ConfigError if it holds more than `limit` bytes, told by its size
    before anything is read (and by what is read: a file that grows, or a pipe). `kind` names
    what the file is, for the message."""
    with open(path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        if size > limit:
            raise ConfigError(_too_large(path, size, limit, kind))
        data = src.read(limit + 1)
    if len(data) > limit:
        raise ConfigError(_too_large(path, None, limit, kind))
    return data


def check_nesting(path: Path, text: str) -> None:
    """ConfigError if `text` nests arrays, inline tables and dotted keys deeper than MAX_NESTING."""
    depth = 0
    for token in _TOKEN.finditer(text):
        if token["open"]:
            depth += 1
            deepest = depth
        elif token["close"]:
            depth = max(depth - 1, 0)
            continue
        elif token["key"]:
            deepest = depth + token["key"].count(".")  # an upper bound: a "." in a quoted part
        else:
            continue
        if deepest > MAX_NESTING:
            line = text.count("\n", 0, token.start()) + 1
            raise ConfigError(
                f"{path}: line {line}: nested more than {MAX_NESTING} levels deep (arrays, inline"
                f" tables and dotted keys), the most a config file may have"
            )


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


def _too_large(path: Path, size: int | None, limit: int, kind: str) -> str:
    found = f"{size:,} bytes" if size is not None else "more bytes"
    return f"{path}: {found}, more than the {limit:,} bytes {kind} may have"
