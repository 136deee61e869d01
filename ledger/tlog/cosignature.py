"""C2SP tlog-cosignature/v1: a witness's timestamped Ed25519 signature of a checkpoint.

The signed message is `cosignature/v1\\n`, `time <POSIX seconds>\\n`, then the checkpoint's whole
note text; the signature line carries base64(key hash || 8-byte big-endian time || signature), and
the key hash uses signature type 0x04, so a cosigner key never verifies a plain note signature.
"""

from __future__ import annotations

import nacl.exceptions
import nacl.signing

from ledger.tlog.exceptions import CosignatureInvalid, TlogKeyError
from ledger.tlog.note import NoteSignature, key_hash, parse_verifier_key, verifier_key

COSIGNATURE_V1 = 0x04
MAX_TIMESTAMP = 2**63 - 1


def cosigned_message(text: str, timestamp: int) -> bytes:
    """The bytes a v1 cosignature signs for checkpoint note text `text` at `timestamp`."""
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        raise CosignatureInvalid("a timestamp outside 0..2**63-1", computed=timestamp)
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


class CosignatureSigner:
    """A witness's cosigning key under `name` (key hash with type 0x04)."""

    def __init__(self, name: str, key: nacl.signing.SigningKey) -> None:
        self.name = name
        self._key = key
        self.public_key = bytes(key.verify_key)
        self.key_hash = key_hash(name, COSIGNATURE_V1, self.public_key)

    @property
    def vkey(self) -> str:
        return verifier_key(self.name, COSIGNATURE_V1, self.public_key)

    def sign(self, text: str, timestamp: int) -> NoteSignature:
        """The cosignature line's content for checkpoint text `text`, made at `timestamp`."""
        signature = self._key.sign(cosigned_message(text, timestamp)).signature
        return NoteSignature(self.name, self.key_hash, timestamp.to_bytes(8, "big") + signature)


class CosignatureVerifier:
    """A known witness key (type 0x04); a NoteVerifier, so `verify_note` counts its lines."""

    def __init__(self, name: str, public_key: bytes) -> None:
        self.name = name
        self.public_key = public_key
        self.key_hash = key_hash(name, COSIGNATURE_V1, public_key)
        self._key = nacl.signing.VerifyKey(public_key)

    @classmethod
    def from_vkey(cls, vkey: str) -> CosignatureVerifier:
        """Raises TlogKeyError for a malformed vkey or one of another type than 0x04."""
        name, sig_type, public_key = parse_verifier_key(vkey)
        if sig_type != COSIGNATURE_V1:
            raise TlogKeyError(f"verifier key {name!r} has type {sig_type:#04x}, not 0x04")
        return cls(name, public_key)

    def verify(self, text: str, signature: bytes) -> None:
        """Raises NoteSignatureInvalid (a CosignatureInvalid) unless `signature` cosigns `text`."""
        self.timestamp(text, signature)

    def timestamp(self, text: str, signature: bytes) -> int:
        """Verify and return the cosignature's time. Raises CosignatureInvalid."""
        if len(signature) != 8 + 64:
            raise CosignatureInvalid(
                f"a cosignature by {self.name} of the wrong length",
                expected=72,
                computed=len(signature),
            )
        timestamp = int.from_bytes(signature[:8], "big")
        try:
            self._key.verify(cosigned_message(text, timestamp), signature[8:])
        except nacl.exceptions.BadSignatureError:
            raise CosignatureInvalid(f"the cosignature by {self.name} does not verify") from None
        return timestamp
