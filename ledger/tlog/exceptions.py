"""Errors of the transparency-log formats; every one derives from TlogError (a LedgerError).

Malformed or unverifiable log data (a proof, a note, a checkpoint, a cosignature) is a failed check:
those classes are also `VerificationError`s (exit code 1) carrying `expected` and `computed`. A
malformed key or name given by the operator is a usage error (`TlogKeyError`, exit code 2).
"""

from __future__ import annotations

from ledger.exceptions import LedgerError, VerificationError


class TlogError(LedgerError):
    """Root of the transparency-log errors."""


class TlogKeyError(TlogError):
    """A verifier key, signer key or key name given by the operator is malformed."""


class TlogCheckFailed(TlogError, VerificationError):
    """A transparency-log check failed; subclasses name the check."""

    check = "tlog"


class InclusionProofInvalid(TlogCheckFailed):
    """An RFC 6962 inclusion proof is malformed or does not lead to the root."""

    check = "tlog_inclusion"


class ConsistencyProofInvalid(TlogCheckFailed):
    """An RFC 9162 consistency proof is malformed or does not join the two roots."""

    check = "tlog_consistency"


class NoteMalformed(TlogCheckFailed):
    """The bytes are not a signed note as c2sp.org/signed-note defines it."""

    check = "note_format"


class NoteSignatureInvalid(TlogCheckFailed):
    """A note signature by a known key does not verify, or no known key signed the note."""

    check = "note_signature"


class CheckpointMalformed(TlogCheckFailed):
    """A note text is not a c2sp.org/tlog-checkpoint body, or names another origin."""

    check = "checkpoint"


class CosignatureInvalid(NoteSignatureInvalid):
    """A tlog-cosignature/v1 is malformed or does not verify (a note signature that failed)."""

    check = "cosignature"


class TlogProofMalformed(TlogCheckFailed):
    """The bytes are not a c2sp.org/tlog-proof@v1 file."""

    check = "tlog_proof"


class SealChainBroken(TlogCheckFailed):
    """A seal does not name the seal before it (deleted, reordered or altered seal lines)."""

    check = "seal_chain"


class Rfc6962RootMismatch(TlogCheckFailed):
    """A seal's rfc6962_root is not the RFC 6962 root of the ledger's leaves at its leaf_count."""

    check = "rfc6962_root"


class CheckpointMismatch(TlogCheckFailed):
    """A stored checkpoint does not verify, or does not say what its seal says."""

    check = "checkpoint"
