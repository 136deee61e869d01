"""The change event: one model for `crovia changes`, the published feeds and the notifications.

An event says what changed (`kind`), where (`vendor`, `url`, the item's `title`), when (`at`, the
time of the signed record that shows it, and `after`, the signed record before it: the change
happened between the two), and which signed records prove it (`records`: axiom ids and leaf
indexes, the last the one that shows it). Its `id` is derived from its kind and those records
alone, so the same ledger always gives the same events with the same ids: a notification sent
again after a crash carries the id it had (docs/ledger.md, "Change events").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ledger.canonical import canonical_json

NEW = "new"  # an item first seen in a feed that was read before
EDITED = "edited"  # a new main text of a captured page (the diff of the main text)
MOVED = "moved"  # a captured page now answers through a redirect to another page
REMOVED = "removed"  # 404 or 410 at N captures at least T apart (RemovalRule)
RETURNED = "returned"  # a 2xx after `removed`
UNREACHABLE = "unreachable"  # no usable answer: 403, 429, 5xx, a timeout, TLS, DNS, a bot wall
MORE = "more"  # "+N more": a page's events past the cap of one delivery (fold)
# What derive_changes gives, and what a filter (crovia changes --kind, a target's `events`) names.
EVENT_KINDS = (NEW, EDITED, MOVED, REMOVED, RETURNED, UNREACHABLE)
KINDS = (*EVENT_KINDS, MORE)
ID_PREFIX = "chg_"


@dataclass(frozen=True)
class RecordRef:
    """One signed record an event rests on: its axiom id, leaf index, time and role."""

    axiom_id: str
    leaf_index: int
    at: str  # when it was observed, fetched or captured (UTC, Z)
    role: str  # "item", "fetch", "capture", ...


@dataclass
class ChangeEvent:
    """One change (see the module docstring). `diff`, `removed_text` and `added_text` are filled
    by `with_diff` (ledger/changes/derive.py) from the kept texts `old_text` and `new_text`."""

    kind: str
    vendor: str
    url: str
    title: str
    item: str  # the axiom_id of the item (its newest AX.OBS when the event was shown)
    at: str  # the time of the record that shows the change
    after: RecordRef | None  # the signed record before it; None when there is none
    records: list[RecordRef]  # every record that proves it, oldest first
    detail: str = ""
    final_url: str = ""  # for `moved`: where the page is now
    old_text: str = ""  # sha256 of the kept main text before (edited, returned)
    new_text: str = ""  # and after
    diff: str = ""
    removed_text: list[str] = field(default_factory=list)
    added_text: list[str] = field(default_factory=list)
    count: int = 0  # for `more`: the events folded into it
    page: str = ""  # what groups a page's events (its item's identity digest, or its URL)
    body: str = ""  # sha256 of the kept body of the capture that shows it (its page title)
    page_title: str = ""  # that page's <title>, as text (from the vendor: never markup)

    @property
    def id(self) -> str:
        """chg_ and 40 hex: sha256 of the kind and the proving records' axiom ids."""
        material = canonical_json([self.kind, [r.axiom_id for r in self.records]])
        return ID_PREFIX + hashlib.sha256(material).hexdigest()[:40]

    @property
    def leaf_index(self) -> int:
        """The leaf of the record that shows the change (the newest of `records`)."""
        return max((r.leaf_index for r in self.records), default=-1)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (`crovia changes --json`, the JSON Feed's `_crovia`, webhook payloads)."""
        out = asdict(self)
        out["id"] = self.id
        out["leaf_index"] = self.leaf_index
        for name in ("old_text", "new_text", "page", "body"):
            del out[name]
        out["text_sha256"] = {"before": self.old_text, "after": self.new_text}
        return out

    def summary(self) -> str:
        """One line of plain text: what changed, where."""
        what = {
            NEW: "new item",
            EDITED: "edited",
            MOVED: f"moved to {self.final_url}",
            REMOVED: "removed",
            RETURNED: "returned",
            UNREACHABLE: "unreachable",
            MORE: f"+{self.count} more changes",
        }.get(self.kind, self.kind)
        title = self.page_title or self.title
        subject = self.url if not title or title == self.url else title
        return f"{self.vendor}: {what}: {subject}"


def fold(events: Iterable[ChangeEvent], limit: int) -> list[ChangeEvent]:
    """At most `limit` events of each page, in order; a page's further events become one `more`
    event ("+N more") after them, naming the first and the last folded record and counting the
    versions among them. A page editing itself every second cannot flood a delivery or a feed.
    `limit` below 1 keeps everything."""
    events = list(events)
    if limit < 1:
        return events
    counts: dict[str, int] = {}
    kept: list[ChangeEvent] = []
    folded: dict[str, list[ChangeEvent]] = {}
    for event in events:
        key = event.page or event.url
        counts[key] = counts.get(key, 0) + 1
        if counts[key] <= limit:
            kept.append(event)
        else:
            folded.setdefault(key, []).append(event)
    for rest in folded.values():
        kept.append(_more(rest))
    return kept


def _more(rest: list[ChangeEvent]) -> ChangeEvent:
    first, last = rest[0], rest[-1]
    kinds: dict[str, int] = {}
    for event in rest:
        kinds[event.kind] = kinds.get(event.kind, 0) + 1
    said = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    versions = kinds.get(EDITED, 0) + kinds.get(MOVED, 0)
    records = [first.records[-1]] + ([last.records[-1]] if last is not first else [])
    return ChangeEvent(
        kind=MORE,
        vendor=last.vendor,
        url=last.url,
        title=last.title,
        item=last.item,
        at=last.at,
        after=first.after,
        records=records,
        detail=f"+{len(rest)} more changes of this page ({said}; {versions} new versions);"
        " crovia changes lists each",
        count=len(rest),
        page=last.page,
    )


def event_from_dict(data: Mapping[str, Any]) -> ChangeEvent:
    """An event read back from `as_dict` (a delivery's outbox keeps them so)."""
    refs = [RecordRef(**r) for r in data.get("records") or []]
    after = data.get("after")
    texts = data.get("text_sha256") or {}
    return ChangeEvent(
        kind=str(data["kind"]),
        vendor=str(data.get("vendor", "")),
        url=str(data.get("url", "")),
        title=str(data.get("title", "")),
        item=str(data.get("item", "")),
        at=str(data.get("at", "")),
        after=RecordRef(**after) if isinstance(after, Mapping) else None,
        records=refs,
        detail=str(data.get("detail", "")),
        final_url=str(data.get("final_url", "")),
        old_text=str(texts.get("before", "")),
        new_text=str(texts.get("after", "")),
        diff=str(data.get("diff", "")),
        removed_text=list(data.get("removed_text") or []),
        added_text=list(data.get("added_text") or []),
        count=int(data.get("count") or 0),
        page_title=str(data.get("page_title", "")),
    )
