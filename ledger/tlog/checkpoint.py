"""C2SP tlog-checkpoint bodies (c2sp.org/tlog-checkpoint): origin, size, base64 root, extensions.

`format_checkpoint` writes the note text a log signs; `parse_checkpoint` reads one strictly;
`open_checkpoint` verifies a signed checkpoint note under the log's key and parses its text.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ledger.tlog.exceptions import CheckpointMalformed
from ledger.tlog.note import (
    Ed25519Signer,
    Note,
    NoteVerifier,
    parse_note,
    sign_note,
    strict_b64decode,
    verify_note,
)
from ledger.tlog.rfc6962 import HASH_SIZE

MAX_SIZE = 2**63 - 1
_SIZE = re.compile(r"0|[1-9][0-9]{0,18}")


@dataclass(frozen=True)
class Checkpoint:
    """A tree head: the log's origin, its size and its RFC 6962 root, plus opaque extensions."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()


def format_checkpoint(checkpoint: Checkpoint) -> str:
    """The checkpoint's note text, each line ending in a newline.

    Raises CheckpointMalformed for an empty origin, a negative size, a root not 32 bytes, or an
    empty or multi-line extension.
    """
    root = base64.b64encode(checkpoint.root).decode("ascii")
    text = "".join(f"{line}\n" for line in (checkpoint.origin, str(checkpoint.size), root))
    text += "".join(f"{line}\n" for line in checkpoint.extensions)
    if parse_checkpoint(text) != checkpoint:
        raise CheckpointMalformed("the checkpoint cannot be written as a tlog-checkpoint")
    return text


def parse_checkpoint(text: str) -> Checkpoint:
    """Parse a checkpoint note text strictly. Raises CheckpointMalformed naming the line."""
    if not text.endswith("\n"):
        raise CheckpointMalformed("the text does not end in a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3 or any(not line for line in lines):
        raise CheckpointMalformed("a checkpoint is three or more non-empty lines")
    origin, size, root = lines[:3]
    if not _SIZE.fullmatch(size) or int(size) > MAX_SIZE:
        raise CheckpointMalformed("the size line is not a decimal tree size", computed=size)
    try:
        digest = strict_b64decode(root)
    except ValueError as exc:
        raise CheckpointMalformed(f"the root line: {exc}") from None
    if len(digest) != HASH_SIZE:
        raise CheckpointMalformed("the root is not 32 bytes", computed=len(digest))
    return Checkpoint(origin, int(size), digest, tuple(lines[3:]))


def sign_checkpoint(checkpoint: Checkpoint, signers: Sequence[Ed25519Signer]) -> bytes:
    """The signed note of `checkpoint` (the log's key name should be its origin)."""
    return sign_note(format_checkpoint(checkpoint), signers)


def open_checkpoint(
    data: bytes, origin: str, verifiers: Sequence[NoteVerifier]
) -> tuple[Checkpoint, Note]:
    """Parse a signed checkpoint, verify it under `verifiers`, and check its origin.

    Raises NoteMalformed, NoteSignatureInvalid (no known key signed, or a known signature fails) or
    CheckpointMalformed (a bad body, or another origin than `origin`).
    """
    note = parse_note(data)
    verify_note(note, verifiers)
    checkpoint = parse_checkpoint(note.text)
    if checkpoint.origin != origin:
        raise CheckpointMalformed(
            "another log's origin", expected=origin, computed=checkpoint.origin
        )
    return checkpoint, note
