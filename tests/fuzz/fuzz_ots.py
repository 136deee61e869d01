"""Fuzz harness: OpenTimestamps proofs (ledger/stamps/ots.py), as stored and as a calendar sends.

The bytes are read as a detached `.ots` file (`load_detached`) and what it attests summarised
(`summarize`, `pending_commitments`), then as a calendar's reply for a fixed digest
(`parse_calendar_reply`). Documented error: OtsInvalid.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from ledger.exceptions import OtsInvalid
    from ledger.stamps import ots
    from tests.fuzz.keys import OTS_DIGEST as DIGEST

DOCUMENTED = (OtsInvalid,)
SLACK = 64 << 10


def target(data: bytes) -> None:
    try:
        proof = ots.load_detached(data)
        ots.summarize(proof.timestamp)
        ots.pending_commitments(proof.timestamp)
    except OtsInvalid:
        pass
    ots.parse_calendar_reply(DIGEST, data)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
