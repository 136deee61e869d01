"""`changes.atom`, `changes.json` and the edit pages: the change events `crovia publish` writes.

A writer of `crovia publish` (ledger/publish/publisher.py, `writers`): after the log's files, it
writes the newest CROVIA_FEED_EVENTS change events whose records are all in the checkpoint being
published (so every record a feed names has its receipt at `v/<axiom_id>`), a page's events
capped at CROVIA_CHANGES_PER_PAGE with one "+N more" event (ledger/changes/events.py, `fold`):

- `changes.atom`: Atom 1.0 (RFC 4287), newest first. Each entry: the event's id as a URN, a title
  saying what changed where, the time, the page's URL (`alternate`), a `related` link to each
  record's `v/<axiom_id>` page and, for an edit, to its page of the two texts side by side; the
  diff and the records as `type="text"` content: escaped by ElementTree, never markup.
- `changes.json`: JSON Feed 1.1, newest first, the same items, each with a `_crovia` object: the
  event's kind, `axiom_ids`, `leaf_indexes`, `checkpoint_size` (the published size they are in),
  `links` (the `v/` pages), the whole event (`event`).
- `changes/<event id>.html`: an edit's two kept main texts side by side, sentence by sentence
  (difflib's HtmlDiff, which escapes every line), and the diff, as text; no script, a policy
  that allows none, and every string from the vendor's page escaped.
Links are relative to the published directory's root (`v/...`, `changes/...`), which is where
these files are: a reader resolves them against the feed's own URL.
"""

from __future__ import annotations

import difflib
import html
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger.changes import (
    EDITED,
    MAX_DIFF_CHARS,
    MAX_SENTENCES,
    ChangeEvent,
    RemovalRule,
    derive_changes,
    fold,
    sentences,
    with_diff,
)

ATOM_FILE = "changes.atom"
JSON_FILE = "changes.json"
PAGES_PREFIX = "changes/"
ATOM = "http://www.w3.org/2005/Atom"
JSON_FEED_VERSION = "https://jsonfeed.org/version/1.1"
# What XML 1.0 may hold: any other character (a NUL, most C0 controls, a lone surrogate) from a
# vendor's page becomes U+FFFD, or the feed would not be XML.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_STYLE = (
    "body{font:15px/1.45 system-ui,sans-serif;margin:1.5em;max-width:110em}"
    "table.diff{border-collapse:collapse;width:100%;table-layout:fixed}"
    "table.diff td{vertical-align:top;white-space:pre-wrap;word-break:break-word;padding:2px 6px}"
    "td.diff_header,td.diff_next{width:2.5em;color:#666}"
    ".diff_sub{background:#fdd}.diff_add{background:#dfd}.diff_chg{background:#ffb}"
    "pre{white-space:pre-wrap;background:#f6f6f6;padding:.6em}"
)


@dataclass(frozen=True)
class FeedMeta:
    """What the feeds say of themselves: the log's origin and the checkpoint's size."""

    origin: str
    size: int


def published_events(
    directory: Path, size: int, limit: int, per_page: int, rule: RemovalRule
) -> list[ChangeEvent]:
    """The newest `limit` change events of the ledger at `directory` whose records are all
    among its first `size` leaves, a page's events capped at `per_page`, with their diffs and
    page titles; oldest first."""
    events = [e for e in derive_changes(directory, rule) if e.leaf_index < size]
    events = sorted(fold(events, per_page), key=lambda e: e.leaf_index)[-limit:]
    return [with_diff(e, directory) for e in events]


def write_changes(context: Any) -> None:
    """The writer `crovia publish` runs (see the module docstring)."""
    from crovia_spider.options import setting

    rule = RemovalRule(
        captures=setting("CROVIA_REMOVAL_CAPTURES"),
        span_seconds=float(setting("CROVIA_REMOVAL_SPAN")),
    )
    events = published_events(
        context.ledger_dir,
        context.new_size,
        setting("CROVIA_FEED_EVENTS"),
        setting("CROVIA_CHANGES_PER_PAGE"),
        rule,
    )
    meta = FeedMeta(context.checkpoint.origin, context.new_size)
    context.out.write(ATOM_FILE, atom_feed(events, meta))
    context.out.write(JSON_FILE, json_feed(events, meta))
    from ledger.store import BodyStore

    store = BodyStore(context.ledger_dir)
    for event in events:
        if event.kind == EDITED and event.old_text and event.new_text:
            texts = _texts(store, event)
            if texts is not None:
                context.out.write(page_path(event), edit_page(event, *texts))


def page_path(event: ChangeEvent) -> str:
    """Where the page of an edit is published (relative to the published root)."""
    return f"{PAGES_PREFIX}{event.id}.html"


def record_link(axiom_id: str) -> str:
    return f"v/{axiom_id}"


def title_of(event: ChangeEvent) -> str:
    """`event`'s one line, safe for any feed: no character XML refuses."""
    return clean(event.summary())


def clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def text_of(event: ChangeEvent, meta: FeedMeta) -> str:
    """An entry's plain-text content: what changed, when, the records, the diff."""
    lines = [event.summary(), f"at {event.at}"]
    if event.after is not None:
        lines.append(
            f"between {event.after.axiom_id} ({event.after.role}, leaf {event.after.leaf_index},"
            f" {event.after.at}) and {event.records[-1].axiom_id} ({event.records[-1].role},"
            f" leaf {event.records[-1].leaf_index}, {event.at})"
        )
    if event.detail:
        lines.append(event.detail)
    lines.append(f"records, in the log of size {meta.size}:")
    lines.extend(
        f"  {r.role} {r.axiom_id} (leaf {r.leaf_index}, {r.at}): {record_link(r.axiom_id)}"
        for r in event.records
    )
    if event.diff:
        lines += ["", event.diff.rstrip("\n")]
    return clean("\n".join(lines) + "\n")


def atom_feed(events: list[ChangeEvent], meta: FeedMeta) -> bytes:
    """The Atom 1.0 document of `events` (oldest first in, newest first out)."""
    ET.register_namespace("", ATOM)

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", {k: clean(v) for k, v in attrs.items()})
        if text is not None:
            element.text = clean(text)
        return element

    feed = ET.Element(f"{{{ATOM}}}feed")
    sub(feed, "id", f"urn:crovia:changes:{meta.origin}")
    sub(feed, "title", f"Changes seen by {meta.origin}")
    sub(feed, "subtitle", f"change events of the log at size {meta.size}, each with its records")
    sub(feed, "updated", events[-1].at if events else "1970-01-01T00:00:00Z")
    author = sub(feed, "author")
    sub(author, "name", "crovia-spider")
    sub(feed, "link", rel="self", href=ATOM_FILE, type="application/atom+xml")
    sub(feed, "generator", "crovia-spider")
    for event in reversed(events):
        entry = sub(feed, "entry")
        sub(entry, "id", f"urn:crovia:change:{event.id}")
        sub(entry, "title", title_of(event), type="text")
        sub(entry, "updated", event.at)
        sub(entry, "published", event.at)
        if event.url.startswith(("http://", "https://")):
            sub(entry, "link", rel="alternate", href=event.url)
        for ref in event.records:
            title = f"{ref.role} record, leaf {ref.leaf_index}"
            sub(entry, "link", rel="related", href=record_link(ref.axiom_id), title=title)
        if event.kind == EDITED and event.diff:
            sub(entry, "link", rel="related", href=page_path(event), type="text/html",
                title="the two texts side by side")  # fmt: skip
        sub(entry, "category", term=event.kind)
        sub(entry, "summary", event.detail or event.summary(), type="text")
        sub(entry, "content", text_of(event, meta), type="text")
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(feed, encoding="utf-8")


def json_feed(events: list[ChangeEvent], meta: FeedMeta) -> bytes:
    """The JSON Feed 1.1 document of `events` (newest first), each item with `_crovia`."""
    items = []
    for event in reversed(events):
        item: dict[str, Any] = {
            "id": event.id,
            "title": event.summary(),
            "content_text": text_of(event, meta),
            "summary": event.detail or event.summary(),
            "date_published": event.at,
            "tags": [event.kind, event.vendor],
            "_crovia": {
                "event": event.as_dict(),
                "kind": event.kind,
                "axiom_ids": [r.axiom_id for r in event.records],
                "leaf_indexes": [r.leaf_index for r in event.records],
                "checkpoint_size": meta.size,
                "links": [record_link(r.axiom_id) for r in event.records],
            },
        }
        if event.url.startswith(("http://", "https://")):
            item["url"] = event.url
        if event.kind == EDITED and event.diff:
            item["_crovia"]["page"] = page_path(event)
        items.append(item)
    document = {
        "version": JSON_FEED_VERSION,
        "title": f"Changes seen by {meta.origin}",
        "description": f"change events of the log at size {meta.size}, each with its records",
        "feed_url": JSON_FILE,
        "items": items,
    }
    return json.dumps(document, ensure_ascii=True, indent=1).encode("ascii") + b"\n"


def _texts(store: Any, event: ChangeEvent) -> tuple[str, str] | None:
    from ledger.exceptions import LedgerError

    try:
        old = store.get(event.old_text).decode("utf-8")
        new = store.get(event.new_text).decode("utf-8")
    except (LedgerError, OSError, UnicodeDecodeError):
        return None  # the event says so (with_diff); crovia audit --bodies names the blob
    return old, new


def edit_page(event: ChangeEvent, old: str, new: str) -> bytes:
    """The page of an edit: its two kept main texts side by side, sentence by sentence, and the
    diff, as text (see the module docstring)."""
    e = html.escape
    before, after = event.records[0], event.records[-1]
    title = event.page_title or event.title or event.url
    a, b = sentences(old), sentences(new)
    if max(len(old), len(new)) > MAX_DIFF_CHARS or max(len(a), len(b)) > MAX_SENTENCES:
        table = "<p>The texts are too long to set side by side here: crovia diff prints them.</p>"
    else:
        table = difflib.HtmlDiff(wrapcolumn=None).make_table(
            [clean(s) for s in a],
            [clean(s) for s in b],
            e(f"before: {before.axiom_id} ({before.at})"),
            e(f"after: {after.axiom_id} ({after.at})"),
            context=True,
            numlines=2,
        )
    link = ""
    if event.url.startswith(("http://", "https://")):
        link = f'<a href="{e(event.url)}" rel="noreferrer nofollow">{e(event.url)}</a>'
    records = "".join(
        f'<li>{e(r.role)} record <a href="../{e(record_link(r.axiom_id))}">{e(r.axiom_id)}</a>'
        f" (leaf {r.leaf_index}, {e(r.at)})</li>"
        for r in event.records
    )
    body = (
        f"<h1>Edited: {e(clean(title))}</h1>"
        f"<p>Page: {link or e(clean(event.url))} ({e(clean(event.vendor))})</p>"
        f"<p>The main text changed between {e(before.at)} and {e(after.at)}:"
        f" {e(clean(event.detail))}</p><ul>{records}</ul>"
        f"<h2>The two texts, side by side</h2>{table}"
        f"<h2>The diff</h2><pre>{e(clean(event.diff))}</pre>"
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\';'
        " style-src 'unsafe-inline'; img-src 'none'\">"
        '<meta name="referrer" content="no-referrer">'
        f"<title>Edited: {e(clean(title))}</title><style>{_STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    ).encode("utf-8", "replace")
