"""C2SP tlog-witness `add-checkpoint`: the request and response bodies, and the witness's decision.

`parse_request` reads the body strictly; `decide` applies the spec's checks in its order and
either returns the checkpoint to cosign or raises WitnessRefusal carrying the HTTP status (400,
403, 404, 409 with the latest size, 422). Pure: the caller keeps the state (the latest cosigned
checkpoint per origin) and must check and update it atomically. Spec:
../shared/spec/c2sp/tlog-witness.md.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ledger.exceptions import LedgerError
from ledger.tlog.checkpoint import Checkpoint, parse_checkpoint
from ledger.tlog.exceptions import ConsistencyProofInvalid, TlogCheckFailed
from ledger.tlog.note import Note, NoteSignature, NoteVerifier, parse_note, verify_note
from ledger.tlog.note import strict_b64decode as b64decode
from ledger.tlog.rfc6962 import EMPTY_ROOT, HASH_SIZE, verify_consistency

MAX_PROOF_LINES = 63
SIZE_CONTENT_TYPE = "text/x.tlog.size"
_OLD = re.compile(r"old (0|[1-9][0-9]{0,18})")


class WitnessRefusal(LedgerError):
    """The witness will not cosign: `status` is the HTTP status the spec names, `body` its text."""

    def __init__(self, status: int, message: str, body: bytes | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body if body is not None else (message + "\n").encode("utf-8")
        self.content_type = SIZE_CONTENT_TYPE if status == 409 else "text/plain; charset=utf-8"


@dataclass(frozen=True)
class AddCheckpoint:
    """A parsed add-checkpoint request."""

    old_size: int
    proof: tuple[bytes, ...]
    note: Note
    checkpoint: Checkpoint


def format_request(old_size: int, proof: Sequence[bytes], note: bytes) -> bytes:
    """The body a log POSTs: `old N`, the proof lines, an empty line, the signed checkpoint."""
    lines = [f"old {old_size}", *(base64.b64encode(h).decode("ascii") for h in proof)]
    return ("\n".join(lines) + "\n\n").encode("ascii") + note


def parse_request(body: bytes) -> AddCheckpoint:
    """Read an add-checkpoint body. Raises WitnessRefusal(400) for anything malformed."""
    head, blank, rest = body.partition(b"\n\n")
    lines = head.decode("ascii", "replace").split("\n")
    if not blank or not _OLD.fullmatch(lines[0]):
        raise WitnessRefusal(400, "the body starts with `old <size>`, proof lines, an empty line")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise WitnessRefusal(400, f"more than {MAX_PROOF_LINES} consistency proof lines")
    try:
        proof = tuple(_hash(line) for line in lines[1:])
        note = parse_note(rest)
        checkpoint = parse_checkpoint(note.text)
    except (ValueError, TlogCheckFailed) as exc:
        raise WitnessRefusal(400, f"malformed request: {exc}") from None
    return AddCheckpoint(int(lines[0][4:]), proof, note, checkpoint)


def decide(
    request: AddCheckpoint,
    logs: Mapping[str, Sequence[NoteVerifier]],
    latest: Checkpoint | None,
) -> Checkpoint:
    """The checkpoint to cosign, given the known logs' keys by origin and the latest checkpoint
    cosigned for this origin (None: never). Raises WitnessRefusal with the spec's status."""
    checkpoint = request.checkpoint
    verifiers = logs.get(checkpoint.origin)
    if verifiers is None:
        raise WitnessRefusal(404, f"unknown log origin {checkpoint.origin!r}")
    try:
        verify_note(request.note, verifiers)
    except TlogCheckFailed as exc:
        raise WitnessRefusal(403, f"not signed by the log's key: {exc}") from None
    if request.old_size > checkpoint.size:
        raise WitnessRefusal(400, f"old size {request.old_size} > size {checkpoint.size}")
    known = latest.size if latest is not None else 0
    if request.old_size != known:
        raise WitnessRefusal(409, f"latest cosigned size is {known}", f"{known}\n".encode())
    _check_consistency(request, latest)
    return checkpoint


def _check_consistency(request: AddCheckpoint, latest: Checkpoint | None) -> None:
    checkpoint = request.checkpoint
    if checkpoint.size == 0 and checkpoint.root != EMPTY_ROOT:
        raise WitnessRefusal(422, "a checkpoint of size 0 must have the empty tree's root")
    if latest is None or request.old_size == 0:
        if request.proof:
            raise WitnessRefusal(422, "a proof from size 0 must be empty")
        return
    try:
        verify_consistency(
            latest.size, checkpoint.size, latest.root, checkpoint.root, request.proof
        )
    except ConsistencyProofInvalid as exc:
        raise WitnessRefusal(
            422, f"not consistent with size {latest.size} cosigned before: {exc}"
        ) from None


def cosigned_note(note: Note, cosignature: NoteSignature) -> bytes:
    """`note` with `cosignature` added (what the witness stores and serves to monitors)."""
    return Note(note.text, (*note.signatures, cosignature)).to_bytes()


def parse_response(body: bytes) -> list[NoteSignature]:
    """The signature lines of a witness's 200 answer. Raises WitnessRefusal(502) if malformed."""
    try:
        return list(parse_note(b"x\n\n" + body).signatures)
    except TlogCheckFailed as exc:
        raise WitnessRefusal(502, f"the witness answered no signature lines: {exc}") from None


def _hash(line: str) -> bytes:
    digest = b64decode(line)
    if len(digest) != HASH_SIZE:
        raise ValueError(f"a proof line of {len(digest)} bytes, not {HASH_SIZE}")
    return digest
