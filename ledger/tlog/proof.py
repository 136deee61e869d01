"""The c2sp.org/tlog-proof@v1 file: an entry's index, its inclusion proof and a checkpoint.

    c2sp.org/tlog-proof@v1
    [extra <base64>]
    index <decimal>
    <base64 hash>          (zero or more, the leaf's sibling first)
    <empty line>
    <the signed checkpoint note, verbatim>

`verify_tlog_proof` checks it as the spec's "Verifying a tlog proof" says: the checkpoint's origin
and log signature, then the inclusion of the caller's leaf hash under the checkpoint's root.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ledger.tlog.checkpoint import Checkpoint, open_checkpoint
from ledger.tlog.exceptions import TlogProofMalformed
from ledger.tlog.note import NoteVerifier, strict_b64decode
from ledger.tlog.rfc6962 import HASH_SIZE, verify_inclusion

HEADER = "c2sp.org/tlog-proof@v1"
_INDEX = re.compile(r"index (0|[1-9][0-9]{0,18})")


@dataclass(frozen=True)
class TlogProof:
    """A parsed tlog-proof: `checkpoint` is the signed note's bytes, unparsed and unverified."""

    index: int
    proof: tuple[bytes, ...]
    checkpoint: bytes
    extra: bytes | None = None


def format_tlog_proof(tlog_proof: TlogProof) -> bytes:
    """The file's bytes. Raises TlogProofMalformed when it would not parse back to `tlog_proof`."""
    lines = [HEADER]
    if tlog_proof.extra is not None:
        lines.append("extra " + base64.b64encode(tlog_proof.extra).decode("ascii"))
    lines.append(f"index {tlog_proof.index}")
    lines += [base64.b64encode(h).decode("ascii") for h in tlog_proof.proof]
    data = ("\n".join(lines) + "\n\n").encode("ascii") + tlog_proof.checkpoint
    if parse_tlog_proof(data) != tlog_proof:
        raise TlogProofMalformed("the proof cannot be written as a tlog-proof")
    return data


def parse_tlog_proof(data: bytes) -> TlogProof:
    """Parse a tlog-proof file strictly (the checkpoint is kept as bytes for `verify_tlog_proof`).

    Raises TlogProofMalformed naming the line.
    """
    head, blank, checkpoint = data.partition(b"\n\n")
    if not blank or not checkpoint:
        raise TlogProofMalformed("no empty line followed by a checkpoint")
    try:
        lines = head.decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise TlogProofMalformed("the lines before the checkpoint are not ASCII") from None
    if lines[0] != HEADER:
        raise TlogProofMalformed("the first line", expected=HEADER, computed=lines[0][:80])
    extra, at = None, 1
    if len(lines) > 1 and lines[1].startswith("extra "):
        extra, at = _b64(lines[1][len("extra ") :], "the extra line"), 2
    if at >= len(lines) or not _INDEX.fullmatch(lines[at]):
        raise TlogProofMalformed("no `index N` line where expected")
    hashes = tuple(_b64(line, f"line {n + 1}") for n, line in enumerate(lines[at + 1 :], at + 1))
    if any(len(h) != HASH_SIZE for h in hashes):
        raise TlogProofMalformed("an inclusion proof line is not a 32-byte hash")
    return TlogProof(int(lines[at][len("index ") :]), hashes, checkpoint, extra)


def verify_tlog_proof(
    tlog_proof: TlogProof, leaf_hash: bytes, origin: str, verifiers: Sequence[NoteVerifier]
) -> Checkpoint:
    """Check the checkpoint (origin, a known log key) and the leaf's inclusion under its root.

    Returns the checkpoint. Raises NoteMalformed, NoteSignatureInvalid, CheckpointMalformed or
    InclusionProofInvalid. Witness policy (how many cosignatures) is the caller's.
    """
    checkpoint, _note = open_checkpoint(tlog_proof.checkpoint, origin, verifiers)
    verify_inclusion(
        tlog_proof.index, checkpoint.size, leaf_hash, list(tlog_proof.proof), checkpoint.root
    )
    return checkpoint


def _b64(text: str, where: str) -> bytes:
    try:
        return strict_b64decode(text)
    except ValueError as exc:
        raise TlogProofMalformed(f"{where}: {exc}") from None
