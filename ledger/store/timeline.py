"""An item's timeline from the fetch records: when it appeared, changed and left its feed, and
whether it was in the feed at a given time (`crovia history`, `crovia absent`).

An AX.OBS envelope is issued only when an item is new or changed; the fetch records (AX.FETCH,
ledger/records/fetch.py), one per feed per crawl, say what each fetch's body held. Whether a body
held an item is decided by reading the kept body again (the caller passes the reader: the
project's feed parser, which this room may not import) and comparing identities; the entries read
must be exactly those the record signs (count and digest, and the counts of what was not read
where the record states them), else EntriesMismatch. A 304 holds what the body it confirms holds,
read as the record that received it (`Received`, the one rule `crovia audit --bodies` reads by too).
A failed fetch, an unreadable body, or a 304 confirming no known body proves nothing and is shown
as such. A body that held entries that were not read (past the entry limit, or unreadable), or
that cannot be read again now (the reader's ceilings), never proves absence: the fetch *cannot
tell* (`undecided` says why, `mentions` whether the raw bytes name the item), and a bracket is never
drawn from it.

It reads `axiom_ledger.jsonl` line by line without the lock (a torn last line is skipped), like
`crovia find`: one pass over the ledger per question.
"""

from __future__ import annotations

import html
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ledger import jsonl
from ledger.envelope import AXIOM_TYPE
from ledger.exceptions import EntriesMismatch, LedgerNotFound, LineInvalid
from ledger.records.fetch import (
    ENTRY_COUNTS,
    FETCH_TYPE,
    NOT_MODIFIED,
    entries_digest,
    states_entries,
)
from ledger.store.bodies import BodyStore
from ledger.store.reader import LEDGER_FILE

# (kept body bytes, the signed body of the fetch record that received it, its final URL) ->
# `{"identities": [...], "in_body", "over_limit", "unread"}` (the identities read, in feed order,
# and the counts docs/format.md defines), or `{"error": why}` when it is not a readable feed.
BodyReader = Callable[[bytes, Mapping[str, Any], str], dict[str, Any]]
Match = Callable[[Mapping[str, Any]], bool]


@dataclass
class FetchSeen:
    """One fetch record of a feed, and whether its body held the item (None: it cannot say).

    `undecided` says why a fetch that got a body cannot tell whether the item was absent ("" when
    it can, or when it proves nothing at all); `mentions` then says whether the body's raw bytes
    name the item (its URL or guid, as written or XML-escaped). `in_body`, `over_limit` and
    `unread` are the body's entry counts as read again (None when it was not read)."""

    axiom_id: str
    leaf_index: int
    fetched_at: str
    outcome: str
    status: int | None
    body_sha256: str
    entries: int | None
    held: bool | None
    in_body: int | None = None
    over_limit: int | None = None
    unread: int | None = None
    undecided: str = ""
    mentions: bool | None = None


@dataclass
class Version:
    """One AX.OBS envelope of the item."""

    axiom_id: str
    leaf_index: int
    observed_at: str
    title: str
    predecessors: list[str]


@dataclass
class FeedTimeline:
    """Every fetch of one feed, oldest first, and the brackets around the item."""

    vendor: str
    feed_url: str
    fetches: list[FetchSeen] = field(default_factory=list)

    def brackets(self) -> dict[str, FetchSeen | None]:
        """`last_without` (the lower bound of "first seen"), `first_with`, `last_with`, and
        `first_without_after` (the upper bound of "gone"); None where there is no such fetch. A
        fetch that cannot tell (`undecided`) is never a bracket."""
        known = [f for f in self.fetches if f.held is not None]
        held = [n for n, f in enumerate(known) if f.held]
        if not held:
            return dict.fromkeys(("last_without", "first_with", "last_with", "first_without_after"))
        first, last = held[0], held[-1]
        before = [f for f in known[:first] if not f.held]
        after = [f for f in known[last + 1 :] if not f.held]
        return {
            "last_without": before[-1] if before else None,
            "first_with": known[first],
            "last_with": known[last],
            "first_without_after": after[0] if after else None,
        }

    def nearest_before(self, at: str) -> FetchSeen | None:
        """The last fetch at or before `at` that got a body or a 304 the crawl read: it proves
        something, or says why it cannot tell (`undecided`)."""
        found = [
            f for f in self.fetches if (f.held is not None or f.undecided) and f.fetched_at <= at
        ]
        return found[-1] if found else None

    def as_dict(self) -> dict[str, Any]:
        brackets = {k: v and asdict(v) for k, v in self.brackets().items()}
        return {
            "vendor": self.vendor,
            "feed_url": self.feed_url,
            "brackets": brackets,
            "fetches": [asdict(f) for f in self.fetches],
        }


@dataclass
class Timeline:
    """An item (its identity), its versions, and each feed it came from, fetch by fetch."""

    identity: dict[str, Any]
    versions: list[Version]
    feeds: list[FeedTimeline]

    def as_dict(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "versions": [asdict(v) for v in self.versions],
            "feeds": [feed.as_dict() for feed in self.feeds],
        }


def item_envelopes(directory: Path, match: Callable[[dict[str, Any]], bool]) -> list[dict]:
    """The AX.OBS envelopes of the ledger matching `match`, in leaf order (with `leaf_index`)."""
    out = []
    for index, envelope in _leaves(directory):
        if envelope.get("axiom_type") == AXIOM_TYPE and match(envelope):
            out.append({**envelope, "leaf_index": index})
    return out


def timeline(
    directory: Path,
    identity: Mapping[str, Any],
    read_body: BodyReader,
    *,
    feeds: list[tuple[str, str]] | None = None,
    match: Match | None = None,
    mentions: Sequence[str] = (),
) -> Timeline:
    """The timeline of the item whose `object.identity` is `identity`: its versions, and for each
    feed (`feeds` as (vendor, configured URL); by default the feeds its versions came from),
    every fetch record and whether its body held the item (`match`, by default identity
    equality). Where a fetch cannot tell, its body's raw bytes are searched for `mentions` (by
    default the identity's link and guid). Raises LedgerNotFound, EntriesMismatch, BodyMismatch."""
    identity = dict(identity)
    needles = [m for m in (mentions or (identity.get("link"), identity.get("guid"))) if m]
    match = match or (lambda found: found == identity)
    versions: list[Version] = []
    records: list[tuple[int, dict[str, Any]]] = []
    seen_in: list[tuple[str, str]] = []  # the feeds the versions came from
    for index, envelope in _leaves(directory):
        kind = envelope.get("axiom_type")
        if kind == FETCH_TYPE:
            records.append((index, envelope))
        elif kind == AXIOM_TYPE and (envelope.get("object") or {}).get("identity") == identity:
            versions.append(_version(envelope, index))
            record = (envelope.get("body") or {}).get("spider_record") or {}
            feed = (str(record.get("vendor", "")), str(record.get("source_url", "")))
            if feed not in seen_in:
                seen_in.append(feed)
    feeds = seen_in if feeds is None else feeds
    reader = _Bodies(directory, read_body)
    out = []
    for vendor, url in feeds:
        mine = [(i, e) for i, e in records if e["body"].get("feed_url") == url]
        mine.sort(key=lambda pair: (str(pair[1]["body"].get("fetched_at", "")), pair[0]))
        line = FeedTimeline(vendor, url)
        for index, envelope in mine:
            line.fetches.append(reader.seen(envelope, index, match, needles))
        out.append(line)
    return Timeline(identity, versions, out)


# A feed's bodies remembered for the 304s that confirm them, and the readings of one body.
RECEIVED_PER_FEED = 16
READINGS_PER_BODY = 4
# Fields of a record's body that differ between fetches of one body and play no part in reading
# it (a body is read as its record's feed, kind, options, Content-Type, limit and final URL say).
_PER_FETCH = frozenset(("fetched_at", "outcome", "run", "sent", "error", "entries"))
How = tuple[dict[str, Any], str]


class Received:
    """Which record a fetch record's body is read as, in the order of its feed's fetches.

    A record that received a body (new or unchanged): its own. A 304: the record of its feed
    that received the body it confirms with the entries the 304 signs (the crawl signs the
    entries read when its validators were stored, and stores them only for a feed read whole,
    so the feed's last record of that body may have read it otherwise, with another entry
    limit); failing that, the feed's last record of the body (whose reading then holds other
    entries: EntriesMismatch). None when no earlier record of its feed received the body among
    its last RECEIVED_PER_FEED bodies (feed state from before fetch records, or from another
    ledger): the 304 can be read as nothing. `crovia history`, `crovia absent` and `crovia audit
    --bodies` read by this one rule, so they cannot disagree on an honest ledger."""

    def __init__(self) -> None:
        self.feeds: dict[str, OrderedDict[str, list[How]]] = {}

    def how(self, envelope: Mapping[str, Any]) -> How | None:
        """(the signed body of the record whose reading applies, its final URL), or None."""
        body = envelope["body"]
        digest = str(body.get("body_sha256"))
        kept = self.feeds.setdefault(str(body.get("feed_url")), OrderedDict())
        readings = kept.get(digest)
        if body.get("outcome") == NOT_MODIFIED:
            if not readings:
                return None
            signed = body.get("entries")
            how = next((h for h in reversed(readings) if h[0].get("entries") == signed), None)
            how = how or readings[-1]
        else:
            final_url = ((envelope.get("object") or {}).get("fetch") or {}).get("final_url", "")
            how = (dict(body), str(final_url))
            readings = kept.setdefault(digest, [])
            readings.append(how)
            del readings[:-READINGS_PER_BODY]
        kept.move_to_end(digest)
        if len(kept) > RECEIVED_PER_FEED:
            kept.popitem(last=False)
        return how


def reading_key(digest: str, how: How) -> bytes:
    """What makes one reading of the body `digest` read as `how`: records that share it read
    the body alike (their entry limit included), so it is read once for all of them."""
    record_body, final_url = how
    reading = {k: v for k, v in record_body.items() if k not in _PER_FETCH}
    reading["limit"] = (record_body.get("entries") or {}).get("limit")
    return orjson.dumps([digest, final_url, reading], option=orjson.OPT_SORT_KEYS)


class _Bodies:
    """Reads each kept body once, as the 200 fetch record that received it says."""

    def __init__(self, directory: Path, read_body: BodyReader) -> None:
        self.store = BodyStore(directory)
        self.read_body = read_body
        self.received = Received()
        self.cache: dict[bytes, dict[str, Any]] = {}

    def seen(
        self, envelope: Mapping[str, Any], index: int, match: Match, needles: Sequence[str]
    ) -> FetchSeen:
        """The fetch record at leaf `index`, and what its body says of the item."""
        seen = _seen(envelope, index, None)
        how = self._how(envelope)
        if how is None:
            return seen  # nothing was read: it proves nothing
        digest = envelope["body"]["body_sha256"]
        data = self.store.get(digest)  # BodyMismatch unless it is the signed bytes
        # A body is read as its record says: by its kind, options, entry limit and, for a
        # sitemap walk, the further bodies it names, so two walks sharing an index body are two
        # readings.
        key = reading_key(digest, how)
        if key not in self.cache:
            self.cache[key] = self.read_body(data, how[0], how[1])
        found = self.cache[key]
        if "identities" not in found:
            seen.undecided = f"its body could not be read again: {found.get('error')}"
        else:
            held_to_record(envelope, index, found)
            seen.in_body, seen.over_limit, seen.unread = (found[k] for k in ENTRY_COUNTS)
            if any(match(i) for i in found["identities"]):
                seen.held = True
            elif seen.over_limit or seen.unread:
                seen.undecided = (
                    f"its body held {seen.in_body} entries and {seen.over_limit + seen.unread}"
                    f" were not read ({seen.over_limit} past the entry limit, {seen.unread}"
                    " unreadable)"
                )
            else:
                seen.held = False
        if seen.undecided:
            seen.mentions = mentioned(data, needles) or any(
                mentioned(part, needles) for part in self._part_bodies(how[0])
            )
        return seen

    def _part_bodies(self, record_body: Mapping[str, Any]) -> Iterator[bytes]:
        """The kept bodies of a sitemap walk's further fetches (`parts`), gzipped ones
        uncompressed (within the sitemap protocol's 50 MB), each at most once."""
        parts = record_body.get("parts")
        done: set[str] = set()
        for part in parts if isinstance(parts, list) else ():
            digest = part.get("body_sha256") if isinstance(part, dict) else None
            if type(digest) is not str or digest in done:
                continue
            done.add(digest)
            try:
                data = self.store.get(digest)
            except Exception:  # a missing or changed body: the audit names it
                continue
            yield _gunzipped(data)

    def _how(self, envelope: Mapping[str, Any]) -> How | None:
        """(the signed body of the record whose reading applies, its final URL), or None when
        the record names no body read as a feed, or a 304 confirms a body unknown (`Received`)."""
        return self.received.how(envelope) if states_entries(envelope["body"]) else None


def held_to_record(envelope: Mapping[str, Any], index: int, found: Mapping[str, Any]) -> None:
    """EntriesMismatch unless the entries read are those the record signs: count and digest, and
    the counts of what was not read where the record states them (older records do not)."""
    signed = envelope["body"]["entries"]
    identities = found["identities"]
    computed = {"count": len(identities), "identities_sha256": entries_digest(identities)}
    computed.update((k, found[k]) for k in ENTRY_COUNTS)
    names = ["count", "identities_sha256", *(k for k in ENTRY_COUNTS if k in signed)]
    if any(computed[k] != signed.get(k) for k in names):
        raise EntriesMismatch(
            f"leaf {index} (fetch record {envelope.get('axiom_id')}): body"
            f" {envelope['body'].get('body_sha256')} read again holds other entries than the"
            " record signs",
            expected={k: signed.get(k) for k in names},
            computed={k: computed[k] for k in names},
        )


def _gunzipped(data: bytes, limit: int = 52_428_800) -> bytes:
    """`data` uncompressed when it is gzip (a sitemap kept as served), at most `limit` bytes of
    it; else `data` as it is."""
    if not data.startswith(b"\x1f\x8b"):
        return data
    inflater = zlib.decompressobj(wbits=31)
    try:
        return inflater.decompress(data, limit)
    except zlib.error:
        return data


def mentioned(data: bytes, needles: Sequence[str]) -> bool:
    """True when the raw bytes `data` hold any of `needles` as written or XML-escaped, in UTF-8 or
    UTF-16 (a byte search: it says a body names the item, never that an entry holds it)."""
    for needle in needles:
        for text in {needle, html.escape(needle, quote=False), html.escape(needle)}:
            for codec in ("utf-8", "utf-16-le", "utf-16-be"):
                if text.encode(codec, "replace") in data:
                    return True
    return False


def _leaves(directory: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(leaf index, envelope) of every line; LineInvalid naming the leaf for a line that is not a
    JSON object (`crovia audit` says more), and every section used here made a dict."""
    path = Path(directory) / LEDGER_FILE
    if not path.is_file():
        raise LedgerNotFound(f"no ledger at {directory} (no {LEDGER_FILE})")
    for index, (_, line) in enumerate(jsonl.iter_lines(path)):
        envelope = parse_leaf(line, f"leaf {index}")
        for section in ("body", "object", "subject"):
            if type(envelope.get(section)) is not dict:
                envelope[section] = {}
        yield index, envelope


def parse_leaf(line: bytes, where: str) -> dict[str, Any]:
    """A ledger line as the JSON object it must be; LineInvalid naming `where` (a leaf, or a byte
    offset) otherwise (`crovia audit` says more). The readers of history share it
    (ledger/store/pages.py too)."""
    try:
        envelope = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise LineInvalid(f"{where} is not JSON ({exc}): run crovia audit") from None
    if type(envelope) is not dict:
        raise LineInvalid(f"{where} is not a JSON object: run crovia audit")
    return envelope


def _version(envelope: Mapping[str, Any], index: int) -> Version:
    record = (envelope.get("body") or {}).get("spider_record") or {}
    return Version(
        str(envelope.get("axiom_id", "")),
        index,
        str(record.get("observed_at", "")),
        str((envelope.get("body") or {}).get("title", "")),
        list(envelope.get("predecessors") or []),
    )


def _seen(envelope: Mapping[str, Any], index: int, held: bool | None) -> FetchSeen:
    body = envelope["body"]
    fetch = (envelope.get("object") or {}).get("fetch") or {}
    entries = body.get("entries") or {}
    return FetchSeen(
        str(envelope.get("axiom_id", "")),
        index,
        str(body.get("fetched_at", "")),
        str(body.get("outcome", "")),
        fetch.get("status"),
        str(body.get("body_sha256", "")),
        entries.get("count"),
        held,
    )


def fetched_feeds(directory: Path, vendor: str) -> list[tuple[str, str]]:
    """(vendor, configured URL) of every feed of `vendor` that has a fetch record, in leaf order."""
    feeds: list[tuple[str, str]] = []
    for _, envelope in _leaves(directory):
        body = envelope.get("body") or {}
        if envelope.get("axiom_type") == FETCH_TYPE and body.get("vendor") == vendor:
            feed = (vendor, str(body.get("feed_url", "")))
            if feed not in feeds:
                feeds.append(feed)
    return feeds
