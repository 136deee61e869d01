"""The ledger as a transparency log: its note key, its origin and its stored checkpoints.

The RFC 6962 tree needs no storage of its own: its complete nodes are the ledger's stored nodes
(`tree/`, ledger/tlog/rfc6962.py says why), so it grows with every append at no extra cost and
`crovia reindex` and recovery rebuild it with them. What is stored here is what the key signed:
`tlog/checkpoints.jsonl`, one line per seal, `{"checkpoint": <signed note>, "leaf_count": n}`,
appended and fsynced after the seal line it matches. docs/ledger.md describes both.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import nacl.signing
import orjson

from ledger import jsonl
from ledger.canonical import encode_checked
from ledger.keys.keyfile import key_id
from ledger.store.reader import LedgerReader
from ledger.tlog.checkpoint import Checkpoint, parse_checkpoint, sign_checkpoint
from ledger.tlog.exceptions import CheckpointMismatch, TlogError
from ledger.tlog.note import Ed25519Signer, Ed25519Verifier, check_key_name, parse_note
from ledger.tlog.proof import TlogProof, format_tlog_proof

TLOG_DIR = "tlog"
CHECKPOINTS_FILE = "checkpoints.jsonl"
CHECKPOINTS_PATH = f"{TLOG_DIR}/{CHECKPOINTS_FILE}"
DEFAULT_ORIGIN_PREFIX = "crovia.local/"


class LogOriginChanged(TlogError):
    """The origin asked for differs from the one this ledger's checkpoints already carry."""


class StoredCheckpoint(NamedTuple):
    """One line of tlog/checkpoints.jsonl: the seal's leaf count and the signed note's bytes."""

    leaf_count: int
    note: bytes

    @property
    def checkpoint(self) -> Checkpoint:
        return parse_checkpoint(parse_note(self.note).text)


def default_origin(public_key: bytes) -> str:
    """`crovia.local/<key_id>`: the origin when CROVIA_LOG_ORIGIN is not set."""
    return DEFAULT_ORIGIN_PREFIX + key_id(public_key)


def log_origin(origin: str | None, public_key: bytes) -> str:
    """`origin` if given (checked as a note key name), else the default derived from the key.

    Raises TlogKeyError for a name with a space, a `+` or nothing in it.
    """
    origin = origin or default_origin(public_key)
    check_key_name(origin)
    return origin


def note_signer(key: nacl.signing.SigningKey, origin: str) -> Ed25519Signer:
    """The log's note key: the ledger's Ed25519 key under the name `origin`."""
    return Ed25519Signer(origin, key)


def note_verifier_key(public_key: bytes, origin: str) -> str:
    """The vkey a monitor or witness pins: `origin+hash+base64(0x01 || public key)`."""
    return Ed25519Verifier(origin, public_key).vkey


def checkpoint_of(seal: Mapping[str, Any], origin: str) -> Checkpoint:
    """The checkpoint a seal with an `rfc6962_root` stands for."""
    return Checkpoint(origin, seal["leaf_count"], bytes.fromhex(seal["rfc6962_root"]))


class CheckpointStore:
    """tlog/checkpoints.jsonl of one ledger directory."""

    def __init__(self, directory: Path, end: int | None = None) -> None:
        self.path = directory / CHECKPOINTS_PATH
        self.end = end  # iterate only the lines within the first `end` bytes (an audit's snapshot)

    def __iter__(self) -> Iterator[StoredCheckpoint]:
        """Every complete line, oldest first (a torn last line is skipped)."""
        lines = jsonl.iter_lines(self.path, end=self.end)
        for number, (_offset, line) in enumerate(lines, start=1):
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                record = None
            yield _stored(record, number)

    def last(self) -> StoredCheckpoint | None:
        record = jsonl.last_line(self.path)
        return None if record is None else _stored(record, "last")

    def origin(self) -> str | None:
        """The origin of the stored checkpoints (the newest one's), or None before the first."""
        last = self.last()
        return None if last is None else last.checkpoint.origin

    def at(self, leaf_count: int) -> StoredCheckpoint | None:
        """The checkpoint signed with the seal at `leaf_count`, or None."""
        return next((c for c in self if c.leaf_count == leaf_count), None)

    def ensure(self, seal: Mapping[str, Any], signer: Ed25519Signer) -> StoredCheckpoint:
        """The newest seal's checkpoint: the stored one, or one signed now and made durable.

        Called after each seal and when a writer opens, so a crash between the seal line and its
        checkpoint is repaired by the next writer. Raises LogOriginChanged when `signer`'s name is
        not the origin of the checkpoints already stored.
        """
        last = self.last()
        if last is not None and last.checkpoint.origin != signer.name:
            raise LogOriginChanged(
                f"this ledger's checkpoints name the origin {last.checkpoint.origin!r}, not"
                f" {signer.name!r}: set CROVIA_LOG_ORIGIN={last.checkpoint.origin}"
            )
        if last is not None and last.leaf_count == seal["leaf_count"]:
            return last
        note = sign_checkpoint(checkpoint_of(seal, signer.name), [signer])
        record = {"checkpoint": note.decode("utf-8"), "leaf_count": seal["leaf_count"]}
        created = not self.path.exists()
        self.path.parent.mkdir(exist_ok=True)
        jsonl.append_to(self.path, encode_checked(record) + b"\n")
        if created:  # the new file's name must survive a power loss too
            jsonl.fsync_dir(self.path.parent)
            jsonl.fsync_dir(self.path.parent.parent)
        return StoredCheckpoint(seal["leaf_count"], note)


def _stored(record: Any, number: int | str) -> StoredCheckpoint:
    """Raises CheckpointMismatch for a line that is not a checkpoint record."""
    if (
        not isinstance(record, dict)
        or set(record) != {"checkpoint", "leaf_count"}
        or type(record["leaf_count"]) is not int
        or type(record["checkpoint"]) is not str
    ):
        raise CheckpointMismatch(f"{CHECKPOINTS_PATH} line {number} is not a checkpoint record")
    return StoredCheckpoint(record["leaf_count"], record["checkpoint"].encode("utf-8"))


class NoCheckpoint(TlogError):
    """The seal a proof needs has no checkpoint (a seal made before checkpoints, or unrepaired)."""


def tlog_proof_for(reader: LedgerReader, leaf_index: int, leaf_count: int) -> bytes:
    """The c2sp.org/tlog-proof file of leaf `leaf_index` under the checkpoint of the seal at
    `leaf_count` (the seal a receipt of the same leaf names).

    Raises NoCheckpoint when that seal has no stored checkpoint.
    """
    stored = CheckpointStore(reader.directory).at(leaf_count)
    if stored is None:
        raise NoCheckpoint(
            f"no checkpoint for the seal at {leaf_count} leaves in {reader.directory};"
            " a writer signs one for the newest seal (run `crovia seal`)"
        )
    proof = reader.rfc6962_inclusion(leaf_index, leaf_count)
    return format_tlog_proof(TlogProof(leaf_index, tuple(proof), stored.note))
