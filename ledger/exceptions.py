"""Errors of the ledger package. Every one derives from LedgerError.

Two families: `VerificationError` (a check failed: exit code 1 in the CLI) and the other
`LedgerError` subclasses (usage, configuration or I/O problems: exit code 2).
"""

from __future__ import annotations


class LedgerError(Exception):
    """Root of all ledger errors."""


# -- usage, input and I/O problems -----------------------------------------------------------------


class CanonicalizationError(LedgerError):
    """A structure cannot be canonical JSON (a float, an int beyond 64 bits, a non-str key, ...)."""


class InvalidRecord(LedgerError):
    """A spider_record or envelope argument does not have the shape docs/format.md requires."""


class KeyFileError(LedgerError):
    """A signing key file is missing, corrupt, too permissive, or would be overwritten."""


class InvalidPublicKey(LedgerError):
    """A pinned public key or key_id given by the user is not 64 or 16 hex characters."""


class LedgerLocked(LedgerError):
    """Another writer holds the ledger lock and did not release it within the timeout."""


class LedgerNotFound(LedgerError):
    """The ledger directory or its index does not exist (a reader never creates it)."""


class ReadOnlyLedger(LedgerError):
    """A write was attempted on a ledger opened without a signing key."""


class WriterFailed(LedgerError):
    """A write failed after lines became durable; reopening the ledger recovers."""


class EmptyLedger(LedgerError):
    """The operation needs at least one leaf (a seal over nothing has no Merkle root)."""


class UnknownAxiom(LedgerError):
    """No leaf of this ledger has that axiom_id."""


class NotSealed(LedgerError):
    """The leaf exists but no seal covers it yet."""


class DuplicateAxiom(LedgerError):
    """An envelope with this axiom_id is already in the ledger (or twice in one batch)."""


class WrongSigningKey(LedgerError):
    """A writer offered a key other than the ledger's current key (one key per ledger)."""


class RotationRefused(LedgerError):
    """A key rotation cannot be made (the new key is one the ledger already had)."""


class IndexCorrupt(LedgerError):
    """The derived index disagrees with the JSONL ledger; `crovia reindex` rebuilds it."""


class EntryTooLarge(LedgerError):
    """A ledger line is longer than a tlog-tiles entry bundle can hold (65,535 bytes)."""


class NotPublished(LedgerError):
    """A published log has no object at that path (a 404, or no such file)."""


class SourceUnavailable(LedgerError):
    """A published log cannot be read: the network, the server or the disk failed."""


class PublishConflict(LedgerError):
    """The publish directory holds another history than the ledger (refused without --full)."""


# -- failed checks ---------------------------------------------------------------------------------


class VerificationError(LedgerError):
    """A check of a receipt, envelope, seal or ledger line failed (exit code 1 in the CLI).

    `check` names the failed check; `expected` and `computed` are the values it compared.
    """

    check = "verification"

    def __init__(self, message: str, *, expected: object = None, computed: object = None) -> None:
        super().__init__(message)
        self.expected = expected
        self.computed = computed

    def __str__(self) -> str:
        text = f"check {self.check} failed: {self.args[0]}"
        if self.expected is not None or self.computed is not None:
            text += f" (expected {self.expected!r}, computed {self.computed!r})"
        return text


class ReceiptBytesInvalid(VerificationError):
    """The receipt's bytes are not exactly canonical_json of what they parse to (a duplicate key, a
    BOM, another encoding, an escape or whitespace canonical JSON would not use, ...)."""

    check = "canonical_bytes"


class ReceiptMalformed(VerificationError):
    """The receipt does not have the crovia.axiom_proof.v1 shape."""

    check = "receipt_shape"


class BitcoinAnchorUnverifiable(VerificationError):
    """The receipt claims an Bitcoin attestation that this verifier cannot check."""

    check = "bitcoin_anchor"


class VerifierUrlMismatch(VerificationError):
    """verifier.url is not /v/<axiom_id>."""

    check = "verifier_url"


class AnchorMismatch(VerificationError):
    """An anchor on this ledger's chain names another leaf index than the receipt."""

    check = "anchor"


class AxiomIdMismatch(VerificationError):
    """An axiom_id does not equal the one recomputed from the envelope."""

    check = "axiom_id"


class SignatureInvalid(VerificationError):
    """The envelope's ed25519 signature does not verify."""

    check = "envelope_signature"


class LeafHashMismatch(VerificationError):
    """The leaf hash does not equal sha256(0x00 || canonical envelope)."""

    check = "leaf_hash"


class ProofMalformed(VerificationError):
    """The Merkle path has the wrong length, sides, index or encoding (CVE-2012-2459 guards)."""

    check = "merkle_path"


class RootMismatch(VerificationError):
    """The Merkle path does not lead to the sealed root."""

    check = "merkle_root"


class SealSignatureInvalid(VerificationError):
    """The seal's ed25519 signature does not verify under its public key."""

    check = "seal_signature"


class KeyIdMismatch(VerificationError):
    """A key_id does not equal the first 16 hex of sha256 of the public key."""

    check = "key_id"


class EnvelopeMalformed(VerificationError):
    """An envelope lacks the AX.OBS shape: its exact key set, schema, axiom_type, anchors, or the
    fields a verifier reports."""

    check = "envelope_shape"


class TrustRootMismatch(VerificationError):
    """The receipt's trust_root names a different key from the one that signed the seal."""

    check = "trust_root"


class UntrustedKey(VerificationError):
    """The signing key is not the key the user pinned."""

    check = "pinned_key"


class LineInvalid(VerificationError):
    """A ledger line is not canonical JSON of an envelope (found by `crovia audit`)."""

    check = "line_canonical"


class SealInvalid(VerificationError):
    """A seal line in seals.jsonl is malformed or out of order (found by `crovia audit`)."""

    check = "seal"


class NoAuditKey(VerificationError):
    """`crovia audit` has no key to check the leaves' signatures against (no seal, no --pubkey)."""

    check = "audit_key"


class DuplicateLeaf(VerificationError):
    """Two leaves carry the same axiom_id: a replayed line (found by `crovia audit`)."""

    check = "duplicate_axiom"


class IndexMismatch(VerificationError):
    """index.sqlite is missing, unreadable, or a row disagrees with the JSONL (`crovia audit`)."""

    check = "index"


class TileMalformed(VerificationError):
    """A published tile or entry bundle has the wrong size, or disagrees with what it hashes to."""

    check = "tile"


class LogRolledBack(VerificationError):
    """A published log shows a smaller tree than one seen (and verified) before."""

    check = "rollback"


class LogForked(VerificationError):
    """A published log's tree does not extend the one seen before: a fork or a rewritten past."""

    check = "fork"


class EntryInvalid(VerificationError):
    """A published entry is not an envelope of this ledger's shape and schema at its index."""

    check = "entry"


class LogMisbehaved(VerificationError):
    """A published log answered as no honest static server does: a redirect off its origin, an
    answer over the size limit (declared, sent or decompressed), a broken compression, an HTTP
    refusal, or too slowly for the monitor's deadline. The message names the file."""

    check = "log_transport"


class QuorumNotMet(VerificationError):
    """Fewer valid witness cosignatures on a checkpoint than the quorum asked for."""

    check = "witness_quorum"


class RotationInvalid(VerificationError):
    """A key rotation record is malformed, badly signed, or does not chain (docs/ledger.md)."""

    check = "key_rotation"


# -- timestamps (ledger/stamps/) -------------------------------------------------------------------


class StampTransportError(LedgerError):
    """A TSA or calendar could not be reached or answered with an HTTP error (`status`, if any).

    A stamping run records it and goes on; the next run asks again.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Rfc3161Invalid(VerificationError):
    """An RFC 3161 reply or token fails a check (imprint, nonce, CMS signature, ESS, EKU, chain)."""

    check = "rfc3161"


class OtsInvalid(VerificationError):
    """An OpenTimestamps proof is malformed, for other data, or disagrees with what it claims."""

    check = "opentimestamps"


class BodyMismatch(VerificationError):
    """A kept fetch body an envelope cites is missing, unreadable, or not the bytes its
    `object.fetch.body_sha256` names (found by `crovia audit` and `crovia body`)."""

    check = "fetch_body"


class EntriesMismatch(VerificationError):
    """A kept body read again does not hold the entries its fetch record (AX.FETCH) signs: the
    count or the digest of their identities differs (ledger/store/timeline.py)."""

    check = "fetch_entries"
