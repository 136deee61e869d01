"""Change events: what happened to the items and pages the ledger follows, each proved by the
signed records it names (docs/ledger.md, "Change events").

`derive` reads the ledger's items (AX.OBS), fetch records (AX.FETCH) and capture records
(AX.CAPTURE) once, in leaf order, and gives the events: `new` (an item first seen in a feed read
before), `edited` (a new main text of a captured page), `moved`, `removed` (only after the page
answered 404 or 410 at N captures at least T apart: `RemovalRule`), `returned` (a 2xx after a
`removed`) and `unreachable` (a capture that got no usable answer: 403, 429, 5xx, a timeout, a
TLS or DNS failure, a bot wall: Cloudflare's `cf-mitigated: challenge` in the kept response head
even on a 2xx, or the capture's own verdict). `textdiff` diffs two kept main texts
sentence by sentence, bounded. `events` holds the one model the CLI, the published feeds and the
notifications share, and `fold`, which caps a page's events in one delivery with a "+N more"
event. May import the format root and `ledger.store`; exports what the front ends use.
"""

from __future__ import annotations

from ledger import exports_on_first_use

_EXPORTS = {
    "KINDS": "events",
    "EVENT_KINDS": "events",
    "ChangeEvent": "events",
    "RecordRef": "events",
    "RemovalRule": "derive",
    "derive_changes": "derive",
    "fold": "events",
    "with_diff": "derive",
    "text_diff": "textdiff",
    "TextDiff": "textdiff",
    "sentences": "textdiff",
    "MAX_DIFF_CHARS": "textdiff",
    "MAX_SENTENCES": "textdiff",
    "EDITED": "events",
    "event_from_dict": "events",
}

__getattr__ = exports_on_first_use(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
