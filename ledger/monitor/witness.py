"""A tlog-witness: checks add-checkpoint requests, cosigns, and keeps its state durable.

The state is one file per log in the state directory, named by the hex sha256 of the origin (as
the spec's monitoring URL is), holding the latest cosigned checkpoint note with the log's
signatures and the witness's cosignature. It is written atomically before the cosignature is
returned, and the check and the update happen under one lock, so a request can never roll the
state back (the race the spec describes). Transport lives elsewhere
(crovia_spider/services/witness.py). Spec: ../shared/spec/c2sp/tlog-witness.md.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ledger import lock
from ledger.exceptions import LedgerError, NotPublished, RotationInvalid
from ledger.keys.keychain import KeyChain
from ledger.keys.keyfile import key_id
from ledger.keys.trust import known_chain, parse_rotations
from ledger.publish.publish_dir import write_atomically
from ledger.tlog.checkpoint import Checkpoint, parse_checkpoint
from ledger.tlog.cosignature import CosignatureSigner
from ledger.tlog.note import Ed25519Verifier, Note, NoteVerifier, parse_note
from ledger.tlog.witness import AddCheckpoint, WitnessRefusal, cosigned_note, decide, parse_request

LOCK_NAME = "witness.lock"
_log = logging.getLogger(__name__)
_ORIGIN_HASH = re.compile(r"[0-9a-f]{64}")


def rotations_reader(spec: str, timeout: float) -> Callable[[], bytes]:
    """A function reading the published log `spec`'s (a directory or http(s) URL) rotations.json
    afresh, each read within its own deadline of `timeout` seconds."""
    from ledger.monitor.keys import MAX_ROTATIONS
    from ledger.monitor.log_source import open_source
    from ledger.publish.publisher import ROTATIONS

    return lambda: open_source(spec, timeout=timeout).get(ROTATIONS, MAX_ROTATIONS)


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
        rotations: Sequence[Callable[[], bytes]] = (),
    ) -> None:
        """`rotations` read the published `rotations.json` of logs it witnesses (each call a
        fresh read; NotPublished: none yet). A log whose pinned key is one of a chain's keys
        follows that chain, as `crovia monitor` does: a checkpoint of size N must be signed by
        the key whose era holds N (the first key up to the first hand-over's leaf_count, each
        new key from there on). Raises RotationInvalid for a chain that fails its checks or
        matches no log."""
        state_dir.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = lock.acquire(state_dir / LOCK_NAME, 0)
        self.state_dir = state_dir
        self.signer = signer
        self._logs = dict(logs)
        self._clock = clock
        self._mutex = threading.Lock()
        self._sources = list(rotations)
        self._chains: dict[str, KeyChain] = {}
        try:
            self._follow(strict=True)
        except BaseException:
            self.close()
            raise

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
            self._follow(strict=False)
            origin = request.checkpoint.origin
            verifiers = self._era_verifiers(origin, request.checkpoint.size)
            logs = {**self._logs, origin: verifiers} if verifiers else self._logs
            try:
                checkpoint = decide(request, logs, self.latest(origin))
            except WitnessRefusal as refusal:
                if refusal.status == 403 and origin in self._chains:
                    raise WitnessRefusal(403, self._era_refusal(request, refusal)) from None
                raise
            timestamp = max(1, int(self._clock()))  # the spec forbids a zero timestamp
            cosignature = self.signer.sign(request.note.text, timestamp)
            keys = {(v.name, v.key_hash) for v in logs[checkpoint.origin]}
            logs_own = tuple(s for s in request.note.signatures if (s.name, s.key_hash) in keys)
            stored = cosigned_note(Note(request.note.text, logs_own), cosignature)
            write_atomically(self.state_dir / origin_hash(checkpoint.origin), stored)
        return cosignature.line().encode("utf-8")

    def _follow(self, *, strict: bool) -> None:
        """Read every rotations source again; a chain only ever grows (a record that replaces one
        already followed is a fork, refused). `strict` (at start-up) raises for a source that
        cannot be read or fails; later its last good chain is kept and the failure logged."""
        for number, read in enumerate(self._sources, start=1):
            where = f"rotations source {number}"
            try:
                try:
                    data = read()
                except NotPublished:
                    data = b"[]"
                chain = known_chain(parse_rotations(data, where), None, f"{where} record")
                if chain is None:
                    continue
                origin = self._origin_of(chain, where)
                old = self._chains.get(origin)
                if old is not None and chain.records[: len(old.records)] != old.records:
                    raise RotationInvalid(
                        f"{where}: its records no longer begin with those followed before (a"
                        " fork: one of them is forged)",
                        expected=old.keys[-1],
                        computed=chain.keys[len(old.records)],
                    )
                self._chains[origin] = chain
            except (LedgerError, OSError) as exc:
                if strict:
                    raise
                _log.warning("witness: %s not followed: %s", where, exc)

    def _origin_of(self, chain: KeyChain, where: str) -> str:
        for origin, verifiers in self._logs.items():
            pinned = {v.public_key.hex() for v in verifiers if isinstance(v, Ed25519Verifier)}
            if pinned & set(chain.keys):
                return origin
        raise RotationInvalid(
            f"{where}: none of its keys is the pinned key of a log this witness witnesses",
            computed=list(chain.keys),
        )

    def _era_verifiers(self, origin: str, size: int) -> list[NoteVerifier] | None:
        """The one key a checkpoint of `size` may be signed by, when `origin` follows a chain."""
        chain = self._chains.get(origin)
        if chain is None:
            return None
        counts = [record["leaf_count"] for record in chain.records]
        public = chain.keys[bisect.bisect_left(counts, size)]
        return [Ed25519Verifier(origin, bytes.fromhex(public))]

    def _era_refusal(self, request: AddCheckpoint, refusal: WitnessRefusal) -> str:
        chain, size = self._chains[request.checkpoint.origin], request.checkpoint.size
        hashes = {s.key_hash for s in request.note.signatures}
        for public in chain.keys:
            if Ed25519Verifier(request.checkpoint.origin, bytes.fromhex(public)).key_hash in hashes:
                era = chain.keys.index(public)
                return (
                    f"the checkpoint of size {size} is signed by key_id"
                    f" {key_id(bytes.fromhex(public))}, a key of the log's signed rotations whose"
                    f" era does not hold size {size} (it ends at"
                    f" {chain.records[era]['leaf_count'] if era < len(chain.records) else 'none'}"
                    f" and begins at {chain.records[era - 1]['leaf_count'] if era else 0})"
                )
        return str(refusal.args[0])

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
