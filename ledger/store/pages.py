"""Items' pages as the ledger's capture records (AX.CAPTURE) tell them: chains, versions, diffs.

Every capture of an item's page is a leaf naming the item (`body.item`, the axiom_id of one of
its AX.OBS versions) and the previous capture of the same page (`predecessors`). This module
reads them back: `page_chains` gives, for every item identity, its captures in leaf order (what
the crawl's capture book is rebuilt from when its state file is lost or behind the ledger),
`page_history` the captures of one item with its versions of the page, removals and moves (what
`crovia history` and `crovia diff` show), and `vendor_items` the items of given vendors, whoever
issued them (what the book enrols: every item of a source with captures is followed). Nothing
here trusts more than the audit does: a line that is not a JSON object stops the read
(LineInvalid, run `crovia audit`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ledger import jsonl
from ledger.envelope import AXIOM_TYPE
from ledger.exceptions import LedgerNotFound
from ledger.records.capture import CAPTURE_TYPE, FAILED, NEW_VERSION
from ledger.store.index import identity_of
from ledger.store.reader import LEDGER_FILE
from ledger.store.timeline import parse_leaf

# How the error of a capture whose page's main text was not found begins (written by the crawl,
# crovia_spider/capture/text.py): such a capture is signed `failed` and starts no version.
NO_MAIN_TEXT = "no main text"


@dataclass
class PageCapture:
    """One capture record of an item's page, as history and diff show it."""

    axiom_id: str
    leaf_index: int
    captured_at: str
    outcome: str
    url: str
    item: str
    final_url: str = ""
    status: int | None = None
    body_sha256: str = ""
    text_sha256: str = ""
    text_length: int | None = None
    error: str = ""
    mode: str = ""  # "browser" for a browser capture (its own chain); "" for a plain one
    verdict: str = ""  # a browser capture's verdict

    @property
    def version_key(self) -> str:
        """What tells one version of the page from another: its main text, else its body."""
        return self.text_sha256 or self.body_sha256

    @property
    def present(self) -> bool:
        """Whether this capture saw the page there (a 2xx): only a page seen there can be
        removed."""
        return self.status is not None and 200 <= self.status < 300

    @property
    def no_main_text(self) -> bool:
        """A page answered and kept whose main text was not found: signed `failed`, with a 2xx,
        its body and an error beginning NO_MAIN_TEXT, and no version (docs/format.md)."""
        return (
            self.outcome == FAILED
            and self.present
            and bool(self.body_sha256)
            and self.error.startswith(NO_MAIN_TEXT)
        )


@dataclass
class PageHistory:
    """The captures of one item's page, in leaf order."""

    captures: list[PageCapture] = field(default_factory=list)

    @property
    def versions(self) -> list[PageCapture]:
        """The captures that started a version of the page (first, edited, moved)."""
        return [c for c in self.captures if c.outcome in NEW_VERSION]

    def as_dict(self) -> dict[str, Any]:
        return {"captures": [asdict(c) for c in self.captures]}


def capture_of(envelope: Mapping[str, Any], index: int) -> PageCapture:
    """A capture record's facts (fields of the wrong type read as absent: the audit says more)."""
    body = envelope.get("body") if isinstance(envelope.get("body"), Mapping) else {}
    text = body.get("text") if isinstance(body.get("text"), Mapping) else {}

    def string(value: Any) -> str:
        return value if type(value) is str else ""

    status = body.get("status")
    length = text.get("length")
    return PageCapture(
        axiom_id=string(envelope.get("axiom_id")),
        leaf_index=index,
        captured_at=string(body.get("captured_at")),
        outcome=string(body.get("outcome")),
        url=string(body.get("url")),
        item=string(body.get("item")),
        final_url=string(body.get("final_url")),
        status=status if type(status) is int else None,
        body_sha256=string(body.get("body_sha256")),
        text_sha256=string(text.get("sha256")),
        text_length=length if type(length) is int else None,
        error=string(body.get("error")),
        mode=string(body.get("mode")),
        verdict=string((body.get("browser") or {}).get("verdict"))
        if isinstance(body.get("browser"), Mapping)
        else "",
    )


def chain_key(key: str, mode: str) -> str:
    """The key of the chain of an item's page's captures of `mode`: the item's key `key` for
    plain captures, `key#browser` for browser ones (the capture book's key too)."""
    return f"{key}#{mode}" if mode else key


# The lines these readers parse: items and captures (every other leaf is skipped unparsed).
_ITEM_TAG = b'"axiom_type":"' + AXIOM_TYPE.encode() + b'"'
_CAPTURE_TAG = b'"axiom_type":"' + CAPTURE_TYPE.encode() + b'"'


def _items_and_captures(
    directory: Path, start_offset: int = 0
) -> Iterator[tuple[int, int, dict[str, Any] | None]]:
    """(line number from `start_offset`, byte offset where the line ends, the envelope when the
    line is an item or a capture, else None) of every complete line from byte `start_offset`."""
    path = Path(directory) / LEDGER_FILE
    if not path.is_file():
        raise LedgerNotFound(f"no ledger at {directory} (no {LEDGER_FILE})")
    for number, (offset, line) in enumerate(jsonl.iter_lines(path, start_offset)):
        end = offset + len(line) + 1
        if _ITEM_TAG in line or _CAPTURE_TAG in line:
            where = f"leaf {number}" if start_offset == 0 else f"the line at byte {offset}"
            yield number, end, parse_leaf(line, where)
        else:
            yield number, end, None


def page_chains(
    directory: Path, start_offset: int = 0, known_items: Mapping[str, str] | None = None
) -> tuple[dict[str, list[tuple[dict[str, Any], PageCapture]]], int]:
    """The capture records of the ledger's lines from byte `start_offset` on (a line boundary),
    grouped by the identity digest of the item they capture: ({identity digest: [(item facts,
    capture)]}, the byte offset read to). `known_items` maps the axiom_ids of items written
    before `start_offset` to their identity digests; a capture of an item met nowhere is left
    out. Only what was appended since is read, so a crawl catching up costs what it missed."""
    items: dict[str, str] = dict(known_items or {})
    facts: dict[str, dict[str, Any]] = {}
    chains: dict[str, list[tuple[dict[str, Any], PageCapture]]] = {}
    end = start_offset
    for _, line_end, envelope in _items_and_captures(directory, start_offset):
        end = line_end
        if envelope is None:
            continue
        axiom_id = envelope.get("axiom_id")
        if envelope.get("axiom_type") == AXIOM_TYPE and type(axiom_id) is str:
            key = identity_of(envelope)
            items[axiom_id] = key
            record = (envelope.get("body") or {}).get("spider_record") or {}
            facts[key] = {"vendor": record.get("vendor", ""), "spider": record.get("spider", "")}
        elif envelope.get("axiom_type") == CAPTURE_TYPE:
            capture = capture_of(envelope, -1)
            key = items.get(capture.item)
            if key is not None:  # a browser capture's chain is its own
                chain = chains.setdefault(chain_key(key, capture.mode), [])
                chain.append((facts.get(key, {}), capture))
    return chains, end


@dataclass(frozen=True)
class IssuedItem:
    """An item (AX.OBS) whose page a capture book follows: the newest version met, its link."""

    key: str  # its identity digest (ledger/store/index.py identity_of)
    axiom_id: str
    url: str
    vendor: str
    spider: str


def vendor_items(
    directory: Path, vendors: Iterable[str], start_offset: int = 0
) -> list[IssuedItem]:
    """Every item with a link issued for one of `vendors` in the ledger's lines from byte
    `start_offset` on, in leaf order, whoever issued it (a local crawl, a cluster's sequencer,
    a crawl that captured nothing): what a capture book enrols when it starts following a
    vendor, or catches up. Only the lines naming one of the vendors are parsed."""
    wanted = frozenset(vendors)
    tags = [b'"vendor":"' + v.encode() + b'"' for v in sorted(wanted)]
    path = Path(directory) / LEDGER_FILE
    if not path.is_file():
        raise LedgerNotFound(f"no ledger at {directory} (no {LEDGER_FILE})")
    found: list[IssuedItem] = []
    for offset, line in jsonl.iter_lines(path, start_offset):
        if _ITEM_TAG not in line or not any(tag in line for tag in tags):
            continue
        envelope = parse_leaf(line, f"the line at byte {offset}")
        record = (envelope.get("body") or {}).get("spider_record") or {}
        axiom_id, url = envelope.get("axiom_id"), record.get("url")
        vendor, spider = record.get("vendor"), record.get("spider", "")
        if envelope.get("axiom_type") != AXIOM_TYPE or vendor not in wanted:
            continue
        if type(axiom_id) is str and type(url) is str and url and type(spider) is str:
            found.append(IssuedItem(identity_of(envelope), axiom_id, url, vendor, spider))
    return found


def page_history(directory: Path, identity: Mapping[str, Any]) -> PageHistory:
    """The capture records of the item whose `object.identity` is `identity` (of any of its
    versions), in leaf order, in one pass: an item's envelope precedes its captures."""
    identity = dict(identity)
    versions: set[str] = set()
    history = PageHistory()
    for index, _, envelope in _items_and_captures(directory):
        if envelope is None:
            continue
        if envelope.get("axiom_type") == AXIOM_TYPE:
            if (envelope.get("object") or {}).get("identity") == identity:
                versions.add(str(envelope.get("axiom_id")))
        elif envelope.get("axiom_type") == CAPTURE_TYPE:
            body = envelope.get("body")
            if isinstance(body, Mapping) and body.get("item") in versions:
                history.captures.append(capture_of(envelope, index))
    return history
