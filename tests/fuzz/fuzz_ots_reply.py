"""Fuzz harness: a calendar's answer as `crovia stamp` reads it (ledger/stamps/ots.py).

The bytes are read as a calendar's answer for a fixed digest (`parse_calendar_reply`): first the
walk of `scan_detached` within the answer's bounds, then, for an answer of at most
MAX_REPLY_OPERATIONS tags, the library's tree the stamper grafts into a proof, and the pending
commitments it would ask about (`pending_commitments`). Documented error: OtsInvalid.

SLACK: the library's tree takes about 1.3 KB a tag whatever the bytes, so an answer is held to a
fixed ceiling rather than a multiple of its size: 192 tags, about 220 KB (docs/stamps.md).
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from ledger.exceptions import OtsInvalid
    from ledger.stamps import ots
    from tests.fuzz.keys import OTS_DIGEST as DIGEST

DOCUMENTED = (OtsInvalid,)
SLACK = 256 << 10


def target(data: bytes) -> None:
    ots.pending_commitments(ots.parse_calendar_reply(DIGEST, data))


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
