"""`crovia audit --bodies`: every fetch record held to its kept body, read again.

The audit proper checks that each body a fetch record (AX.FETCH) cites is kept and is its digest's
bytes (`fetch_body`); it does not say that the entries the record signs are what that body holds.
This pass does, after the audit passed, over the same leaves: each record that states entries (a
body received, the same body again, or a 304 confirming one) has its body read again with the
reader the caller passes (the crawl's own, which this room may not import: a
ledger.store.timeline BodyReader), and the entries read must be exactly those the record signs
(`held_to_record`, as `crovia history` and `crovia absent` hold them: count, identity digest and the
counts of what was not read), else EntriesMismatch naming the leaf and the record. A body that
cannot be read again fails the same check, saying why. A body is read as those commands read it
(ledger.store.timeline `Received`: a 304 as the earlier record of its feed that received the body
it confirms with the entries it signs); a 304 confirming a body that no earlier record of its feed
received (among its last RECEIVED_PER_FEED bodies: feed state from before fetch records, or from
another ledger) can be read as nothing, proves nothing to those commands, and is counted
`not_checked`.

Memory: per feed, its last RECEIVED_PER_FEED bodies received (each with its last few readings),
and the last READINGS_HELD readings (records of one body read it alike, so a body is read once
however many records name it).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger import jsonl
from ledger.exceptions import BodyMismatch, EntriesMismatch
from ledger.records.fetch import is_fetch_record, states_entries
from ledger.store.bodies import BodyStore
from ledger.store.reader import LEDGER_FILE

if TYPE_CHECKING:  # the timeline is loaded by `--bodies` alone, not by every audit
    from ledger.store.timeline import BodyReader, How

READINGS_HELD = 32
# A fetch record's line holds these bytes (canonical JSON, which the audit has checked): every
# other line is passed over unparsed.
_FETCH_LINE = b'"axiom_type":"AX.FETCH"'


@dataclass(frozen=True)
class BodiesReport:
    """What `check_fetch_bodies` checked: `fetch_records` held to their bodies, `bodies_read`
    readings done, `not_checked` 304s confirming a body no earlier record of their feed
    received."""

    fetch_records: int
    bodies_read: int
    not_checked: int


def check_fetch_bodies(
    directory: str | Path, read_body: BodyReader, *, leaves: int | None = None
) -> BodiesReport:
    """Hold every fetch record among the first `leaves` leaves (all when None) of the ledger at
    `directory` to its kept body, read again with `read_body`. Raises EntriesMismatch (the
    entries differ, or the body cannot be read again) or BodyMismatch, naming the leaf and the
    fetch record; LedgerNotFound, LineInvalid as the timeline's readers do."""
    from ledger.store.timeline import parse_leaf

    checker = _Checker(BodyStore(directory), read_body)
    for index, (_, line) in enumerate(jsonl.iter_lines(Path(directory) / LEDGER_FILE)):
        if leaves is not None and index >= leaves:
            break
        if _FETCH_LINE in line:
            envelope = parse_leaf(line, f"leaf {index}")
            if is_fetch_record(envelope) and type(envelope.get("body")) is dict:
                checker.check(envelope, index)
    return BodiesReport(checker.checked, checker.read, checker.not_checked)


class _Checker:
    """The records of one pass, in leaf order."""

    def __init__(self, store: BodyStore, read_body: BodyReader) -> None:
        self.store, self.read_body = store, read_body
        from ledger.store.timeline import Received

        self.received = Received()
        self.readings: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
        self.checked = self.read = self.not_checked = 0

    def check(self, envelope: dict[str, Any], index: int) -> None:
        from ledger.store.timeline import held_to_record

        body = envelope["body"]
        if not states_entries(body):
            return
        digest, entries = body["body_sha256"], body["entries"]
        how = self.received.how(envelope)
        if how is None:
            self.not_checked += 1
            return
        where = f"leaf {index} (fetch record {envelope.get('axiom_id')})"
        found = self._read(digest, how, where)
        if "identities" not in found:
            raise EntriesMismatch(
                f"{where}: body {digest} could not be read again ({found.get('error')}), so the"
                " entries the record signs cannot be shown",
                expected=entries,
            )
        held_to_record(envelope, index, found)
        self.checked += 1

    def _read(self, digest: str, how: How, where: str) -> dict[str, Any]:
        """What the body gave, read as `how` says (once for records that read it alike)."""
        from ledger.store.timeline import reading_key

        record_body, final_url = how
        key = reading_key(digest, how)
        found = self.readings.get(key)
        if found is not None:
            self.readings.move_to_end(key)
            return found
        try:
            data = self.store.get(digest)
        except BodyMismatch as exc:
            message = f"{where}: kept {exc.args[0]}"
            raise BodyMismatch(message, expected=exc.expected, computed=exc.computed) from None
        found = self.read_body(data, record_body, final_url)
        self.read += 1
        self.readings[key] = found
        if len(self.readings) > READINGS_HELD:
            self.readings.popitem(last=False)
        return found
