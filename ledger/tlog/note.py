"""C2SP signed notes (c2sp.org/signed-note) with Ed25519 keys: sign, format, parse, verify.

A note is UTF-8 text ending in a newline, a blank line, then signature lines
`— <key name> base64(4-byte key hash || signature)`. Parsing is strict and happens once, at the
edge: `parse_note` refuses anything the spec does not allow, then `verify_note` checks the
signatures of known keys (a line whose name and key hash both match a known key), ignores every
other line, and requires at least one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import nacl.exceptions
import nacl.signing

from ledger.tlog.exceptions import NoteMalformed, NoteSignatureInvalid, TlogKeyError

ED25519 = 0x01
MAX_SIGNATURES = 100  # the spec asks for at least 16; a bound keeps a hostile note cheap
_DASH = "— "
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class NoteSignature:
    """One signature line: the key name, the 4-byte key hash and the signature bytes after it."""

    name: str
    key_hash: bytes
    signature: bytes

    def line(self) -> str:
        encoded = base64.b64encode(self.key_hash + self.signature).decode("ascii")
        return f"{_DASH}{self.name} {encoded}\n"


@dataclass(frozen=True)
class Note:
    """A parsed note: its text (final newline included) and its signature lines, in order."""

    text: str
    signatures: tuple[NoteSignature, ...]

    def to_bytes(self) -> bytes:
        return (self.text + "\n" + "".join(s.line() for s in self.signatures)).encode("utf-8")


class NoteVerifier(Protocol):
    """A known key: its name, its key hash, and a check that raises NoteSignatureInvalid."""

    name: str
    key_hash: bytes

    def verify(self, text: str, signature: bytes) -> None: ...


def key_hash(name: str, sig_type: int, public_key: bytes) -> bytes:
    """sha256(name || 0x0A || type || public key)[:4] (signed-note, "Signatures")."""
    check_key_name(name)
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([sig_type]) + public_key).digest()[
        :4
    ]


def check_key_name(name: str) -> None:
    """Raise TlogKeyError unless `name` is non-empty, with no space, `+` or control character."""
    if not name or any(c.isspace() or c == "+" for c in name) or _CONTROL.search(name):
        raise TlogKeyError(f"{name!r} is not a note key name (non-empty, no spaces, no '+')")


def verifier_key(name: str, sig_type: int, public_key: bytes) -> str:
    """The vkey string `name+hex(key hash)+base64(type || public key)`."""
    encoded = base64.b64encode(bytes([sig_type]) + public_key).decode("ascii")
    return f"{name}+{key_hash(name, sig_type, public_key).hex()}+{encoded}"


def parse_verifier_key(vkey: str) -> tuple[str, int, bytes]:
    """(name, signature type, public key) of a vkey string; its key hash must recompute.

    Raises TlogKeyError for anything else (a vkey comes from the operator: a usage error).
    """
    parts = vkey.strip().split("+", 2)
    if len(parts) != 3 or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        raise TlogKeyError(f"{vkey!r} is not a verifier key (name+hash+base64)")
    name, hash_hex, material = parts
    try:
        raw = strict_b64decode(material)
    except ValueError as exc:
        raise TlogKeyError(f"verifier key {name!r}: {exc}") from None
    if len(raw) != 33:
        raise TlogKeyError(f"verifier key {name!r}: not a type byte and a 32-byte Ed25519 key")
    if key_hash(name, raw[0], raw[1:]).hex() != hash_hex:
        raise TlogKeyError(f"verifier key {name!r}: its key hash does not match its key")
    return name, raw[0], raw[1:]


class Ed25519Signer:
    """Signs note texts with an Ed25519 key under `name` (signature type 0x01)."""

    def __init__(self, name: str, key: nacl.signing.SigningKey) -> None:
        self.name = name
        self._key = key
        self.public_key = bytes(key.verify_key)
        self.key_hash = key_hash(name, ED25519, self.public_key)

    @property
    def vkey(self) -> str:
        return verifier_key(self.name, ED25519, self.public_key)

    def sign(self, text: str) -> NoteSignature:
        signature = self._key.sign(text.encode("utf-8")).signature
        return NoteSignature(self.name, self.key_hash, signature)


class Ed25519Verifier:
    """A known Ed25519 note key (type 0x01)."""

    def __init__(self, name: str, public_key: bytes) -> None:
        self.name = name
        self.public_key = public_key
        self.key_hash = key_hash(name, ED25519, public_key)
        self._key = nacl.signing.VerifyKey(public_key)

    @classmethod
    def from_vkey(cls, vkey: str) -> Ed25519Verifier:
        """Raises TlogKeyError for a malformed vkey or one of another signature type."""
        name, sig_type, public_key = parse_verifier_key(vkey)
        if sig_type != ED25519:
            raise TlogKeyError(f"verifier key {name!r} has type {sig_type:#04x}, not Ed25519 0x01")
        return cls(name, public_key)

    @property
    def vkey(self) -> str:
        return verifier_key(self.name, ED25519, self.public_key)

    def verify(self, text: str, signature: bytes) -> None:
        try:
            self._key.verify(text.encode("utf-8"), signature)
        except (nacl.exceptions.BadSignatureError, ValueError):
            raise NoteSignatureInvalid(f"the signature by {self.name} does not verify") from None


def parse_signer_key(skey: str) -> Ed25519Signer:
    """An Ed25519Signer from `PRIVATE+KEY+name+hash+base64(0x01 || seed)` (Go's note format)."""
    parts = skey.strip().split("+", 4)
    if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
        raise TlogKeyError("not a note signer key (PRIVATE+KEY+name+hash+base64)")
    try:
        raw = strict_b64decode(parts[4])
    except ValueError:
        raise TlogKeyError("note signer key: bad base64") from None
    if len(raw) != 33 or raw[0] != ED25519:
        raise TlogKeyError("note signer key: not an Ed25519 seed")
    signer = Ed25519Signer(parts[2], nacl.signing.SigningKey(raw[1:]))
    if signer.key_hash.hex() != parts[3]:
        raise TlogKeyError("note signer key: its key hash does not match its key")
    return signer


def sign_note(text: str, signers: Sequence[Ed25519Signer]) -> bytes:
    """The signed note of `text` (which must end in a newline) by each of `signers`."""
    check_text(text)
    return Note(text, tuple(signer.sign(text) for signer in signers)).to_bytes()


def check_text(text: str) -> None:
    """Raise NoteMalformed unless `text` is a note text: ends in a newline, no control characters
    but newlines."""
    if not text.endswith("\n") or _CONTROL.search(text):
        raise NoteMalformed("a note text ends in a newline and has no control characters")


def parse_note(data: bytes) -> Note:
    """Parse a signed note strictly. Raises NoteMalformed naming what is wrong."""
    try:
        whole = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteMalformed(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if _CONTROL.search(whole):
        raise NoteMalformed("a control character other than newline")
    split = whole.rfind("\n\n")
    if split < 0:
        raise NoteMalformed("no blank line before the signatures")
    text, block = whole[: split + 1], whole[split + 2 :]
    if not block.endswith("\n"):
        raise NoteMalformed("no signature lines, or the last one lacks its newline")
    lines = block[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise NoteMalformed("too many signatures", expected=MAX_SIGNATURES, computed=len(lines))
    return Note(text, tuple(_parse_signature(line) for line in lines))


def verify_note(note: Note, verifiers: Sequence[NoteVerifier]) -> list[str]:
    """Verify every signature by a known key; return the names that signed, in line order.

    Lines of unknown keys (name or key hash differs) are ignored. Raises NoteSignatureInvalid when
    a known key's signature fails, or when no known key signed.
    """
    known = {(v.name, v.key_hash): v for v in verifiers}
    signed = []
    for sig in note.signatures:
        verifier = known.get((sig.name, sig.key_hash))
        if verifier is not None:
            verifier.verify(note.text, sig.signature)
            signed.append(sig.name)
    if not signed:
        names = sorted(name for name, _ in known)
        raise NoteSignatureInvalid(
            "no known key signed the note",
            expected=names,
            computed=[s.name for s in note.signatures],
        )
    return signed


def strict_b64decode(text: str) -> bytes:
    """Standard base64 (RFC 4648 section 4), padded and canonical; raises ValueError otherwise."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError(f"{text[:60]!r} is not standard base64") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError(f"{text[:60]!r} is not canonical base64")
    return raw


def _parse_signature(line: str) -> NoteSignature:
    if not line.startswith(_DASH):
        raise NoteMalformed(f"signature line does not start with an em dash: {line[:80]!r}")
    name, space, encoded = line[len(_DASH) :].partition(" ")
    try:
        check_key_name(name)
        raw = strict_b64decode(encoded) if space else b""
    except (TlogKeyError, ValueError) as exc:
        raise NoteMalformed(f"signature line {line[:80]!r}: {exc}") from None
    if len(raw) < 5:
        raise NoteMalformed(
            f"signature line {line[:80]!r}: shorter than a key hash and a signature"
        )
    return NoteSignature(name, raw[:4], raw[4:])
