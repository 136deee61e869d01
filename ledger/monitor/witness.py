"""A tlog-witness: checks add-checkpoint requests, cosigns, and keeps its state durable.

The state is one file per log in the state directory, named by the hex sha256 of the origin (as
the spec's monitoring URL is), holding the latest cosigned checkpoint note with the log's
signatures and the witness's cosignature. It is written atomically before the cosignature is
returned, and the check and the update happen under one lock, so a request can never roll the
state back (the race the spec describes). Transport lives elsewhere
(crovia_spider/services/witness.py). Spec: ../shared/spec/c2sp/tlog-witness.md.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ledger import lock
from ledger.publish.publish_dir import write_atomically
from ledger.tlog.checkpoint import Checkpoint, parse_checkpoint
from ledger.tlog.cosignature import CosignatureSigner
from ledger.tlog.note import Note, NoteVerifier, parse_note
from ledger.tlog.witness import cosigned_note, decide, parse_request

LOCK_NAME = "witness.lock"
_ORIGIN_HASH = re.compile(r"[0-9a-f]{64}")


def origin_hash(origin: str) -> str:
    """Lowercase hex sha256 of the origin: the state file's name and the monitoring URL's part."""
    return hashlib.sha256(origin.encode("utf-8")).hexdigest()


class Witness:
    """One witness key over a set of logs; close() releases its state directory."""

    def __init__(
        self,
        state_dir: Path,
        signer: CosignatureSigner,
        logs: Mapping[str, Sequence[NoteVerifier]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = lock.acquire(state_dir / LOCK_NAME, 0)
        self.state_dir = state_dir
        self.signer = signer
        self._logs = dict(logs)
        self._clock = clock
        self._mutex = threading.Lock()

    def close(self) -> None:
        if self._lock_fd is not None:
            lock.release(self._lock_fd)
            self._lock_fd = None

    def add_checkpoint(self, body: bytes) -> bytes:
        """Check an add-checkpoint body and cosign it; return the answer's signature line.

        Raises WitnessRefusal (with the HTTP status) and cosigns nothing when a check fails.
        The new state is durable before this returns.
        """
        request = parse_request(body)
        with self._mutex:
            checkpoint = decide(request, self._logs, self.latest(request.checkpoint.origin))
            timestamp = max(1, int(self._clock()))  # the spec forbids a zero timestamp
            cosignature = self.signer.sign(request.note.text, timestamp)
            keys = {(v.name, v.key_hash) for v in self._logs[checkpoint.origin]}
            logs_own = tuple(s for s in request.note.signatures if (s.name, s.key_hash) in keys)
            stored = cosigned_note(Note(request.note.text, logs_own), cosignature)
            write_atomically(self.state_dir / origin_hash(checkpoint.origin), stored)
        return cosignature.line().encode("utf-8")

    def latest(self, origin: str) -> Checkpoint | None:
        """The latest checkpoint cosigned for `origin`, or None."""
        stored = self.checkpoint_note(origin_hash(origin))
        return None if stored is None else parse_checkpoint(parse_note(stored).text)

    def checkpoint_note(self, hashed_origin: str) -> bytes | None:
        """The stored cosigned note of the log whose origin hashes to `hashed_origin`, or None."""
        if not _ORIGIN_HASH.fullmatch(hashed_origin):
            return None
        try:
            return (self.state_dir / hashed_origin).read_bytes()
        except FileNotFoundError:
            return None
