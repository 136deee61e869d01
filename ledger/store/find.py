"""Which leaves hold which items: a read-only search of a ledger's JSONL by vendor, URL, title words
and observation time (`crovia find`), so a user can get from an item to the axiom id that
`crovia prove` takes.

It reads `axiom_ledger.jsonl` line by line (line n is leaf n; a torn last line is skipped) and the
last line of `seals.jsonl`; it takes no lock and writes nothing, so it runs beside a writer.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ledger import jsonl
from ledger.exceptions import LedgerNotFound
from ledger.fetch_record import FETCH_TYPE
from ledger.store.reader import LEDGER_FILE, SEALS_FILE


@dataclass(frozen=True)
class Found:
    """One leaf that matched: its axiom id and the item it observed."""

    axiom_id: str
    leaf_index: int
    vendor: str
    title: str
    url: str
    observed_at: str
    sealed: bool  # covered by the last seal, so `crovia prove` can export it now
    target_id: str  # the item's identity (docs/spider.md, section 4); not shown

    def as_dict(self) -> dict[str, Any]:
        """What `crovia find --json` shows of it."""
        shown = asdict(self)
        del shown["target_id"]
        return shown


def find_leaves(
    directory: Path,
    *,
    vendor: str | None = None,
    url: str | None = None,
    title: str | None = None,
    since: str | None = None,
) -> Iterator[Found]:
    """The item leaves (AX.OBS, not fetch records) of the ledger in `directory` matching every
    filter given, in leaf order.

    `vendor` is a vendor id or shell pattern (`arxiv_*`); `url` equals the item's link or its
    identity (`subject.target_id`); every word of `title` occurs in the title, ignoring case;
    `since` (as `parse_since` returns it) is at or before `observed_at`. Raises LedgerNotFound
    when there is no ledger file.
    """
    path = directory / LEDGER_FILE
    if not path.is_file():
        raise LedgerNotFound(f"no ledger at {directory} (no {LEDGER_FILE})")
    last_seal = jsonl.last_line(directory / SEALS_FILE)
    sealed = last_seal["leaf_count"] if last_seal else 0
    words = title.casefold().split() if title else []
    for index, (_, line) in enumerate(jsonl.iter_lines(path)):
        envelope = orjson.loads(line)
        if envelope.get("axiom_type") == FETCH_TYPE:
            continue  # a fetch record observes no item (`crovia history` shows them)
        found = _found(envelope, index, index < sealed)
        if vendor is not None and not fnmatch.fnmatchcase(found.vendor, vendor):
            continue
        if url is not None and url not in (found.url, found.target_id):
            continue
        if words and not all(word in found.title.casefold() for word in words):
            continue
        if since is None or found.observed_at >= since:
            yield found


def _found(envelope: dict[str, Any], index: int, sealed: bool) -> Found:
    # .get throughout: a damaged leaf is for `crovia audit` to name; find still lists the rest.
    record = (envelope.get("body") or {}).get("spider_record") or {}
    return Found(
        str(envelope.get("axiom_id", "")), index, str(record.get("vendor", "")),
        str(record.get("title", "")), str(record.get("url", "")),
        str(record.get("observed_at", "")), sealed,
        str((envelope.get("subject") or {}).get("target_id", "")),
    )  # fmt: skip


def parse_since(text: str) -> str:
    """A date (`2026-11-29`, midnight UTC) or ISO 8601 time (`2026-11-29T18:00:00Z`; no zone means
    UTC) as an `observed_at` string, which then compares as text. Raises ValueError otherwise."""
    moment = datetime.fromisoformat(text.strip())
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
