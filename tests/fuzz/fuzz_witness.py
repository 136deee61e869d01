"""Fuzz harness: a tlog-witness add-checkpoint request body (ledger/tlog/witness.py).

The body is parsed (`parse_request`) and judged (`decide`) as the witness service does, for a
witness that never cosigned this log and for one that cosigned size 3 before. Documented error:
WitnessRefusal, which carries the HTTP status the service answers.
"""

from __future__ import annotations

import contextlib
import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from ledger.tlog.checkpoint import Checkpoint
    from ledger.tlog.rfc6962 import leaf_hash, root_of
    from ledger.tlog.witness import WitnessRefusal, decide, parse_request
    from tests.fuzz.keys import LOG_VERIFIER, ORIGIN

DOCUMENTED = (WitnessRefusal,)
SLACK = 16 << 10
LOGS = {ORIGIN: [LOG_VERIFIER]}
LEAVES = [leaf_hash(b"%d" % n) for n in range(8)]  # the tree make_corpus.py signs
LATEST = Checkpoint(ORIGIN, 3, root_of(LEAVES[:3]))


def target(data: bytes) -> None:
    request = parse_request(data)
    for latest in (None, LATEST):
        with contextlib.suppress(WitnessRefusal):
            decide(request, LOGS, latest)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
