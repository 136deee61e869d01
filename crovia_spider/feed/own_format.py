"""A body in a format of a spider's own: the entries its `parse_entries()` yields, as a ParsedFeed.

The base spider reads RSS, Atom and RDF with feedparser (body.py); a spider for another format
yields the body's entries itself, as dicts of feedparser's shape (`id`, `link`, `title`,
`summary`, `published`, ...). From here on both are read alike (crovia_spider/spiders/base.py):
the same entry limit, items made by the same `entry_item()`, the same counts in the fetch record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from crovia_spider.feed.body import ParsedFeed


def read_own_format(entries: Iterable[Any]) -> ParsedFeed:
    """The ParsedFeed of the entries `entries` yields, in order. Never raises: a reading that
    raises before its first entry is an unreadable body; one that raises later keeps the entries
    yielded so far and counts one more as cut off (`truncated_entries`: the body held at least
    that one), so no absence is ever proved from a body that was not read to its end."""
    parsed = ParsedFeed(version="own")
    try:
        for entry in entries:
            parsed.entries.append(entry)
    except Exception as exc:  # the spider's own code, on a body someone else wrote
        reason = f"{type(exc).__name__}: {exc}"
        if not parsed.entries:
            return ParsedFeed(error=f"unreadable body: {reason}", failed=True)
        parsed.error = f"reading stopped after {len(parsed.entries)} entries: {reason}"
        parsed.truncated_entries = 1
    return parsed
