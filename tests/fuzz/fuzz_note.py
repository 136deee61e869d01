"""Fuzz harness: signed notes, checkpoints, cosignatures and tlog-proof files (ledger/tlog/).

The bytes are read as a note (`parse_note`), its signatures checked under the fixed log and witness
keys (`verify_note`), its text as a checkpoint (`parse_checkpoint`, and `open_checkpoint` as a
monitor does); the same bytes are read as a c2sp.org/tlog-proof@v1 file and, when that parses,
verified. Documented errors: TlogCheckFailed (a VerificationError).
"""

from __future__ import annotations

import contextlib
import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from ledger.tlog.checkpoint import open_checkpoint, parse_checkpoint
    from ledger.tlog.exceptions import TlogCheckFailed
    from ledger.tlog.note import parse_note, verify_note
    from ledger.tlog.proof import parse_tlog_proof, verify_tlog_proof
    from tests.fuzz.keys import LOG_VERIFIER, ORIGIN, WITNESS_VERIFIER

DOCUMENTED = (TlogCheckFailed,)
SLACK = 16 << 10
LEAF = bytes(32)


def target(data: bytes) -> None:
    for step in (_as_note, _as_checkpoint, _as_tlog_proof):
        with contextlib.suppress(TlogCheckFailed):
            step(data)


def _as_note(data: bytes) -> None:
    note = parse_note(data)
    verify_note(note, [LOG_VERIFIER, WITNESS_VERIFIER])
    parse_checkpoint(note.text)


def _as_checkpoint(data: bytes) -> None:
    open_checkpoint(data, ORIGIN, [LOG_VERIFIER])


def _as_tlog_proof(data: bytes) -> None:
    verify_tlog_proof(parse_tlog_proof(data), LEAF, ORIGIN, [LOG_VERIFIER])


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
