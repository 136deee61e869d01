"""Change events from the ledger's signed records, in one pass (docs/ledger.md, "Change events").

Read in leaf order, without the lock (a torn last line is skipped, as `crovia find` does):
- an item (AX.OBS) whose identity was never seen, issued from a fetch of a feed whose earlier fetch
  read a body, is `new`: between that earlier fetch record and the fetch that brought it. The
  items of a feed's first read are its baseline, not news; so are watched pages (no feed);
- a page's captures (AX.CAPTURE, chained per item; a browser capture's chain apart from the
  plain one's, telling its `edited` events only) are followed one by one:
  - no usable answer (outcome `failed`: another status than 2xx, 404 or 410, a timeout, a TLS or
    DNS failure, a refusal, a bot wall) is `unreachable`, once at the start of a run of them; it
    is never a removal and never a version;
  - a 404 or 410 is a removal only once the page has answered so at RemovalRule.captures captures
    in a row (unreachable ones between them prove nothing and do not break the row), the first
    and the last at least RemovalRule.span_seconds apart: then `removed`, once;
  - a 2xx after `removed` is `returned`; a 2xx reached by a redirect to another page (the capture
    says `moved`) is `moved`; a 2xx whose version (its main text's digest, else its body's)
    differs from the last 2xx's is `edited`, between the last capture showing the old text and
    this one, with the two kept texts named (`with_diff` diffs them).
Events come out in the order of the leaves that show them: newest last. Nothing here fetches or
writes; a line that is not a JSON object stops the read (LineInvalid: run `crovia audit`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ledger import jsonl
from ledger.changes.events import (
    EDITED,
    MOVED,
    NEW,
    REMOVED,
    RETURNED,
    UNREACHABLE,
    ChangeEvent,
    RecordRef,
)
from ledger.changes.textdiff import text_diff
from ledger.envelope import AXIOM_TYPE
from ledger.exceptions import LedgerError, LedgerNotFound
from ledger.records.capture import CAPTURE_TYPE, FAILED
from ledger.records.capture import MOVED as MOVED_OUTCOME
from ledger.records.fetch import FETCH_TYPE, HOLDS_ENTRIES
from ledger.store.bodies import BodyStore
from ledger.store.index import identity_of
from ledger.store.pages import PageCapture, capture_of, chain_key
from ledger.store.reader import LEDGER_FILE
from ledger.store.timeline import parse_leaf

GONE = (404, 410)
WALL_HEADER = "cf-mitigated: challenge"  # Cloudflare's own mark of a challenge answer
MAX_HEAD_BYTES = 65536
_TAGS = tuple(b'"axiom_type":"' + t.encode() + b'"' for t in (AXIOM_TYPE, FETCH_TYPE, CAPTURE_TYPE))


@dataclass(frozen=True)
class RemovalRule:
    """When a page that answers 404 or 410 is `removed`: at `captures` captures in a row, the
    first and the last at least `span_seconds` apart (CROVIA_REMOVAL_CAPTURES and
    CROVIA_REMOVAL_SPAN, defaults 2 and 1 hour)."""

    captures: int = 2
    span_seconds: float = 3600.0


@dataclass
class _Item:
    vendor: str
    title: str
    url: str
    newest: str  # the axiom_id of its newest AX.OBS


@dataclass
class _Page:
    last: RecordRef | None = None  # the previous capture, whatever it found
    good: RecordRef | None = None  # the last capture with a 2xx
    version: str = ""  # its version key (text digest, else body digest)
    text: str = ""  # its main text's digest
    gone: list[RecordRef] = field(default_factory=list)  # 404/410s since the last 2xx
    statuses: list[int] = field(default_factory=list)
    removed: bool = False
    down: bool = False  # in a run of unreachable captures


@dataclass
class _Feed:
    last: RecordRef | None = None  # its newest fetch record
    last_fetched_at: str = ""
    read: RecordRef | None = None  # its newest fetch record that read a body (or a 304)
    read_before: RecordRef | None = None  # the one before that
    read_whole: bool = True  # whether `read_before` read every entry of its body
    previous_whole: bool = True


def derive_changes(directory: Path, rule: RemovalRule | None = None) -> list[ChangeEvent]:
    """Every change event of the ledger at `directory`, oldest first (see the module docstring).
    Raises LedgerNotFound without a ledger, LineInvalid for a line that is no JSON object."""
    return list(_Deriver(rule or RemovalRule(), Path(directory)).run(Path(directory)))


class _Deriver:
    def __init__(self, rule: RemovalRule, directory: Path | None = None) -> None:
        self.rule = rule
        self.store = BodyStore(directory) if directory is not None else None
        self.items: dict[str, str] = {}  # AX.OBS axiom_id -> identity digest
        self.facts: dict[str, _Item] = {}  # identity digest -> its item's facts
        self.feeds: dict[tuple[str, str], _Feed] = {}
        self.pages: dict[str, _Page] = {}

    def run(self, directory: Path) -> Iterator[ChangeEvent]:
        path = directory / LEDGER_FILE
        if not path.is_file():
            raise LedgerNotFound(f"no ledger at {directory} (no {LEDGER_FILE})")
        for index, (_, line) in enumerate(jsonl.iter_lines(path)):
            if not any(tag in line for tag in _TAGS):
                continue
            envelope = parse_leaf(line, f"leaf {index}")
            kind = envelope.get("axiom_type")
            if kind == AXIOM_TYPE:
                yield from self._item(envelope, index)
            elif kind == FETCH_TYPE:
                self._fetch(envelope, index)
            elif kind == CAPTURE_TYPE:
                yield from self._capture(envelope, index)

    # -- feeds and items ----------------------------------------------------------------------

    def _fetch(self, envelope: Mapping[str, Any], index: int) -> None:
        body = _mapping(envelope.get("body"))
        key = (_text(body.get("vendor")), _text(body.get("feed_url")))
        feed = self.feeds.setdefault(key, _Feed())
        at = _text(body.get("fetched_at"))
        ref = RecordRef(_text(envelope.get("axiom_id")), index, at[:19] + "Z", "fetch")
        feed.last, feed.last_fetched_at = ref, at
        if body.get("outcome") in HOLDS_ENTRIES:
            entries = _mapping(body.get("entries"))
            whole = not entries.get("over_limit") and not entries.get("unread")
            feed.read_before, feed.previous_whole = feed.read, feed.read_whole
            feed.read, feed.read_whole = ref, whole

    def _item(self, envelope: Mapping[str, Any], index: int) -> Iterator[ChangeEvent]:
        axiom_id = _text(envelope.get("axiom_id"))
        body = _mapping(envelope.get("body"))
        record = _mapping(body.get("spider_record"))
        key = identity_of(envelope)
        self.items[axiom_id] = key
        known = self.facts.get(key)
        self.facts[key] = _Item(
            vendor=_text(body.get("vendor") or record.get("vendor")),
            title=_text(body.get("title") or record.get("title")),
            url=_text(record.get("url")),
            newest=axiom_id,
        )
        if known is not None:
            return
        feed = self.feeds.get((self.facts[key].vendor, _text(record.get("source_url"))))
        fetch = _mapping(_mapping(envelope.get("object")).get("fetch"))
        if feed is None or feed.last is None or feed.read is None or feed.read_before is None:
            return  # a feed's first read is its baseline; a watched page has no feed
        if feed.read != feed.last or _text(fetch.get("fetched_at")) != feed.last_fetched_at:
            return  # not from the feed's newest read: nothing to bracket it with
        at = _text(record.get("observed_at"))[:19] + "Z"
        item = RecordRef(axiom_id, index, at, "item")
        detail = (
            f"in {record.get('source_url')} at its fetch of {feed.read.at}, not at its fetch of"
            f" {feed.read_before.at}"
        )
        if not feed.previous_whole:
            detail += " (that fetch did not read every entry of its body: it may have held it)"
        facts = self.facts[key]
        yield ChangeEvent(
            kind=NEW,
            vendor=facts.vendor,
            url=facts.url,
            title=facts.title,
            item=axiom_id,
            at=at,
            after=feed.read_before,
            records=[feed.read_before, feed.read, item],
            detail=detail,
            page=key,
        )

    # -- pages --------------------------------------------------------------------------------

    def _capture(self, envelope: Mapping[str, Any], index: int) -> Iterator[ChangeEvent]:
        capture = capture_of(envelope, index)
        head = _text(_mapping(envelope.get("body")).get("response_head_sha256"))
        item = self.items.get(capture.item, "")
        # A browser capture's chain is its own: never compared with a plain capture.
        key = chain_key(item or "page:" + capture.url, capture.mode)
        known = self.pages.get(key) if item else None
        if head and self._may_be_wall(known, capture) and self._walled(head):
            capture.outcome = FAILED
            capture.error = f"bot wall: {WALL_HEADER}, HTTP {capture.status}"
        page = self.pages.setdefault(key, _Page())
        ref = RecordRef(capture.axiom_id, index, capture.captured_at[:19] + "Z", "capture")
        try:
            for event in self._judge(key, page, capture, ref):
                # The browser chain tells edits of what a reader was shown; whether the page
                # answered, moved or went is the plain chain's to say (a rendering can fail).
                if not capture.mode or event.kind == EDITED:
                    yield event
        finally:
            page.last = ref

    def _judge(
        self, key: str, page: _Page, capture: PageCapture, ref: RecordRef
    ) -> Iterator[ChangeEvent]:
        status = capture.status
        walled = capture.error.startswith("bot wall")
        gone = status in GONE and not walled  # a 404 or 410, whatever the capture judged it
        if not gone and (capture.outcome == FAILED or status is None or not 200 <= status < 300):
            if not page.down:
                why = capture.error or (f"HTTP {status}" if status is not None else "no answer")
                yield self._event(UNREACHABLE, key, capture, page.last, [ref], detail=why)
            page.down = True
            return
        page.down = False
        if gone:
            page.gone.append(ref)
            page.statuses.append(status)
            if not page.removed and page.good is not None and self._proved(page.gone):
                page.removed = True
                said = "/".join(str(s) for s in sorted(set(page.statuses)))
                detail = (
                    f"HTTP {said} at {len(page.gone)} captures in a row, from {page.gone[0].at}"
                    f" to {page.gone[-1].at}"
                )
                before = [page.good] if page.good else []
                yield self._event(
                    REMOVED, key, capture, page.good, before + page.gone, detail=detail
                )
            return
        if page.removed:
            last_gone = page.gone[-1]
            yield self._event(
                RETURNED,
                key,
                capture,
                last_gone,
                [last_gone, ref],
                detail=f"HTTP {status} again, after its removal",
            )
        page.removed, page.gone, page.statuses = False, [], []
        if capture.outcome == MOVED_OUTCOME:
            yield self._event(
                MOVED,
                key,
                capture,
                page.last,
                [r for r in (page.last, ref) if r is not None],
                detail=f"{capture.url} now redirects to {capture.final_url}",
                final_url=capture.final_url,
            )
        version = capture.version_key
        if page.good is not None and version and page.version and version != page.version:
            yield self._event(
                EDITED,
                key,
                capture,
                page.good,
                [page.good, ref],
                detail=_edit_detail(page, capture),
                old_text=page.text,
                new_text=capture.text_sha256,
            )
        page.good, page.version, page.text = ref, version or page.version, capture.text_sha256

    @staticmethod
    def _may_be_wall(page: _Page | None, capture: PageCapture) -> bool:
        """Whether a wall would change what `capture` means: a 2xx that would be a new version,
        or the first of a run of failures (to say why). Only those heads are read."""
        status = capture.status
        if status is not None and 200 <= status < 300 and capture.outcome != FAILED:
            return page is not None and capture.version_key != page.version
        return status is not None and status not in GONE and not (page and page.down)

    def _walled(self, head: str) -> bool:
        """Whether the kept response head `head` (its digest) carries Cloudflare's challenge
        header: such an answer is a wall whatever its status, never a version nor a removal."""
        if self.store is None:
            return False
        try:
            data = self.store.get(head)
        except (LedgerError, OSError):
            return False  # crovia audit names a missing or changed blob
        return any(
            line.replace(b" ", b"").lower() == WALL_HEADER.replace(" ", "").encode()
            for line in data[:MAX_HEAD_BYTES].split(b"\r\n")
        )

    def _proved(self, gone: list[RecordRef]) -> bool:
        if len(gone) < max(1, self.rule.captures):
            return False
        return _seconds(gone[0].at, gone[-1].at) >= self.rule.span_seconds

    def _event(
        self,
        kind: str,
        key: str,
        capture: PageCapture,
        after: RecordRef | None,
        records: list[RecordRef],
        **fields: Any,
    ) -> ChangeEvent:
        facts = self.facts.get(self.items.get(capture.item, ""))
        return ChangeEvent(
            kind=kind,
            vendor=facts.vendor if facts else "",
            url=capture.url,
            title=facts.title if facts else capture.url,
            item=facts.newest if facts else capture.item,
            at=records[-1].at,
            after=after,
            records=records,
            page=key,
            body=capture.body_sha256,
            **fields,
        )


def with_diff(event: ChangeEvent, directory: Path) -> ChangeEvent:
    """A copy of `event` with the title of the page its capture kept (`page_title`, text) and,
    for an `edited` one, the diff of its two kept main texts, read from the ledger's kept bodies
    and checked against their digests; a text that cannot be read is said in `detail`, never
    guessed. `event` is left as it was: a second call says it once too."""
    event = replace(event)
    store = BodyStore(directory)
    if event.body and not event.page_title:
        event.page_title = _kept_title(store, event.body)
    if event.kind != EDITED or event.diff:
        return event
    if not (event.old_text and event.new_text):
        event.detail += "; no main text to diff (not an HTML page): the body's digest changed"
        return event
    try:
        old = store.get(event.old_text).decode("utf-8")
        new = store.get(event.new_text).decode("utf-8")
    except (LedgerError, OSError, UnicodeDecodeError) as exc:
        event.detail += f"; the kept texts cannot be read ({exc}): run crovia audit --bodies"
        return event
    before, after = event.records[0], event.records[-1]
    names = (f"{ref.axiom_id} ({ref.at})" for ref in (before, after))
    found = text_diff(old, new, *names)
    event.diff, event.removed_text, event.added_text = found.text, found.removed, found.added
    if found.note:
        event.detail += f"; {found.note}"
    return event


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
TITLE_BYTES = 65536  # of a kept page, read for its title
TITLE_CHARS = 300


def _kept_title(store: BodyStore, digest: str) -> str:
    """The first <title> of the kept page `digest`, as text: entities decoded, white space
    collapsed, at most TITLE_CHARS characters; "" when there is none or it cannot be read."""
    try:
        head = store.get(digest)[:TITLE_BYTES]
    except (LedgerError, OSError):
        return ""
    found = _TITLE.search(head)
    if found is None:
        return ""
    text = html.unescape(found.group(1).decode("utf-8", "replace"))
    return " ".join(text.split())[:TITLE_CHARS]


def _edit_detail(page: _Page, capture: PageCapture) -> str:
    if capture.text_sha256 and page.text:
        return (
            f"main text {page.text[:12]}... -> {capture.text_sha256[:12]}..."
            f" ({capture.text_length} characters)"
        )
    return f"body {capture.body_sha256[:12]}... (no main text)"


def _seconds(start: str, end: str) -> float:
    try:
        a = datetime.fromisoformat(start[:19]).replace(tzinfo=UTC)
        b = datetime.fromisoformat(end[:19]).replace(tzinfo=UTC)
    except ValueError:
        return 0.0
    return (b - a).total_seconds()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value if type(value) is str else ""
