"""A JSON Feed body (https://jsonfeed.org, versions 1 and 1.1) as entries of feedparser's shape.

feedparser reads no JSON, so this small reader does, with the standard library's `json` and rules
of its own, strict because the body is untrusted (docs/format.md, "Entries of a JSON Feed"):

- the body is UTF-8 (a leading byte-order mark is skipped), at most MAX_BYTES, and JSON as RFC 8259
  has it: `NaN` and `Infinity` are refused, and so is nesting deeper than MAX_DEPTH;
- the top level is an object with `version` one of VERSIONS, `title` a string and `items` an
  array; anything else makes the body unreadable (`failed`), its items, if it has an array of
  them, counted as lost;
- each item is an object whose `id` is a string (or an integer, which the specification says to
  read as its decimal string) and whose `url`, `title`, `summary`, `content_html`,
  `content_text`, `date_published` and `date_modified` are strings when present. An item that is
  not (a wrong type, a number too long to be one, a name given twice, a string holding a lone
  surrogate) is left out alone and counted (`malformed_entries`): it never costs the others;
- an object that gives one name twice is ambiguous (readers differ on which value wins): an item
  doing so is malformed, a top level doing so makes the body unreadable.

An item becomes `{"id", "link", "title", "published", "updated", "summary", "content"}` (each
only when present), so crovia_spider/feed/entries.py makes it an item exactly as it makes one of
RSS or Atom, with the same caps on every field. Runs in the parser worker, under its ceilings.
"""

from __future__ import annotations

import html
import json
from typing import Any

from crovia_spider.feed.body import ParsedFeed
from crovia_spider.feed.selection import signable

VERSIONS = ("https://jsonfeed.org/version/1", "https://jsonfeed.org/version/1.1")
MAX_BYTES = 16 << 20  # the download cap: a kept body is never larger
MAX_DEPTH = 64  # a JSON Feed nests four deep; json's own limit is the interpreter's stack
MAX_DIGITS = 20  # an integer id longer than this is no id (and str() of 5,000 digits raises)
# An item's strings, as JSON Feed names them, and the entry key each becomes.
_TEXT_FIELDS = {
    "url": "link",
    "title": "title",
    "summary": "summary",
    "date_published": "published",
    "date_modified": "updated",
}
_CONTENT_FIELDS = ("content_html", "content_text")


class _Repeated(dict):  # type: ignore[type-arg]
    """An object that gave a name twice (the last value kept, as json does; never read)."""


class _LongNumber(str):
    """An integer literal of more than MAX_DIGITS digits, kept as text: no item field's type."""


class NotJsonFeed(ValueError):
    """The body is not a JSON Feed we read (the message says why)."""


def parse_jsonfeed(body: bytes, headers: dict[str, str] | None = None) -> ParsedFeed:
    """The entries of the JSON Feed `body` (`headers` are not needed: JSON Feed is UTF-8 and its
    URLs absolute). Never raises: a body that is not a readable JSON Feed is `failed`, saying
    why."""
    try:
        document = _load(body)
        items = _items(document)
    except NotJsonFeed as exc:
        lost = exc.args[1] if len(exc.args) > 1 else 0
        return ParsedFeed(
            error=f"unreadable JSON Feed: {exc.args[0]}", failed=True, lost_entries=lost
        )
    except Exception as exc:  # a reader bug must cost this feed only, and be told
        return ParsedFeed(error=f"unreadable JSON Feed: {type(exc).__name__}: {exc}", failed=True)
    parsed = ParsedFeed(version=f"jsonfeed{document['version'].rsplit('/', 1)[1]}")
    for item in items:
        entry = _entry(item)
        if entry is None:
            parsed.malformed_entries += 1
        else:
            parsed.entries.append(entry)
    if parsed.malformed_entries:
        parsed.error = f"{parsed.malformed_entries} item(s) of the wrong shape left out"
    return parsed


def _load(body: bytes) -> Any:
    if len(body) > MAX_BYTES:
        raise NotJsonFeed(f"{len(body):,} bytes, more than the {MAX_BYTES:,} a body may have")
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotJsonFeed(f"not UTF-8 ({exc})") from None
    try:
        document = json.loads(
            text,
            object_pairs_hook=_object,
            parse_constant=_no_constant,
            parse_int=_integer,
        )
    except RecursionError:
        raise NotJsonFeed(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise NotJsonFeed(f"not JSON ({exc})") from None
    if _too_deep(document):
        raise NotJsonFeed(f"nested deeper than {MAX_DEPTH} levels")
    return document


def _items(document: Any) -> list[Any]:
    if type(document) is not dict:
        if isinstance(document, dict):
            raise NotJsonFeed("the top level gives a name twice")
        raise NotJsonFeed(f"the top level is {_json_type(document)}, not an object")
    items = document.get("items")
    lost = len(items) if type(items) is list else 0
    version = document.get("version")
    if version not in VERSIONS or type(version) is not str:
        found = "missing" if version is None else repr(version)
        raise NotJsonFeed(f"version {found:.80} is not one of {', '.join(VERSIONS)}", lost)
    if type(document.get("title")) is not str:
        raise NotJsonFeed(f"title is {_json_type(document.get('title'))}, not a string", lost)
    if type(items) is not list:
        raise NotJsonFeed(f"items is {_json_type(items)}, not an array")
    return items


def _entry(item: Any) -> dict[str, Any] | None:
    """The entry of one item, or None when it is malformed (see the module docstring)."""
    if type(item) is not dict:
        return None
    item_id = item.get("id")
    if type(item_id) is int:
        item_id = str(item_id)
    if type(item_id) is not str:
        return None
    entry: dict[str, Any] = {"id": item_id}
    for name, key in _TEXT_FIELDS.items():
        if name in item:
            if type(item[name]) is not str:
                return None
            entry[key] = item[name]
    for name in _CONTENT_FIELDS:
        if name in item and type(item[name]) is not str:
            return None
    content = item.get("content_html") or html.escape(item.get("content_text", ""), quote=False)
    if content:
        entry["content"] = [{"type": "text/html", "value": content}]
    if not all(signable(value) for value in (item_id, *entry.values(), content)):
        return None
    return entry


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    return _Repeated(value) if len(value) < len(pairs) else value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _integer(text: str) -> int | str:
    return int(text) if len(text.lstrip("-")) <= MAX_DIGITS else _LongNumber(text)


def _too_deep(document: Any) -> bool:
    """True when `document` nests arrays and objects deeper than MAX_DEPTH (walked without
    recursion, so a deep document cannot exhaust the stack here)."""
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                return True
            stack.extend((child, depth + 1) for child in children)
    return False


def _json_type(value: Any) -> str:
    if value is None:
        return "missing or null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    return names.get(type(value), "an array" if isinstance(value, list) else "an object")
