"""What a key file holds: a PKCS#8 Ed25519 private key, a public key in one of its forms, or a
raw seed of old, told apart from its text alone and, for a raw seed, from its ledger (`KeyContext`).

Pure: no disk. Errors name the file, never its content (a chained error could quote key material).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import nacl.signing

from ledger.exceptions import KeyFileError
from ledger.key_ids import key_id

_PUBKEY_HEX = re.compile(r"[0-9a-fA-F]{64}")
_NOTE_KEY = re.compile(r"[^\s+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*")
_PEM_END = "-----END PRIVATE KEY-----"
_KEYGEN = "a signing key file is a PKCS#8 PEM private key, as `crovia keygen` writes"


class KeyContext(NamedTuple):
    """What a ledger says of its keys: `signs(public)` is true for each public key its seals,
    rotations or leaf 0 name; `name` names the ledger in messages (its directory)."""

    name: str
    signs: Callable[[bytes], bool]
    new: bool = False  # no key signs it yet


def parse_key_file(
    data: bytes, path: Path, context: KeyContext | None
) -> tuple[nacl.signing.SigningKey, bool]:
    """(the key `data` holds, whether it is a raw seed of old); KeyFileError naming `path` when
    it holds a public key, a raw seed `context` does not sign with, or anything else."""
    try:
        text = data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise KeyFileError(f"{path} is not a crovia key file (not ASCII text)") from None
    if text.startswith("-----BEGIN"):
        return _from_pem(text, path), False
    public = _public_form(text)
    if public is not None:
        raise KeyFileError(f"{path} holds a public key, not a signing key: {public}; {_KEYGEN}")
    if _PUBKEY_HEX.fullmatch(text):
        return _from_raw(bytes.fromhex(text), path, context), True
    raise KeyFileError(f"{path} is not a crovia key file ({_KEYGEN})")


def _from_pem(text: str, path: Path) -> nacl.signing.SigningKey:
    from cryptography.exceptions import InternalError, UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    label = text.splitlines()[0].removeprefix("-----BEGIN ").removesuffix("-----")
    if label == "PUBLIC KEY":
        raise KeyFileError(f"{path} holds a public key, not a signing key: a PEM PUBLIC KEY")
    if label == "ENCRYPTED PRIVATE KEY":
        raise KeyFileError(
            f"{path} is an encrypted private key: crovia reads an unencrypted PKCS#8 key kept at"
            f" mode 0600 (decrypt it with `openssl pkey -in {path} -out NEW`)"
        )
    if label != "PRIVATE KEY" or text.count("-----BEGIN") != 1 or not text.endswith(_PEM_END):
        raise KeyFileError(f"{path} is not a crovia key file (a PEM {label!r} block; {_KEYGEN})")
    try:
        parsed = serialization.load_pem_private_key(text.encode("ascii"), password=None)
    # InternalError: OpenSSL refuses some damaged keys there ("key setup failed"), not as a
    # ValueError (a byte of a valid PKCS#8 key changed, found by the property test).
    except (ValueError, TypeError, UnsupportedAlgorithm, InternalError):
        # `from None`: the chained error could quote the file's content, which is key material
        raise KeyFileError(f"{path} is not a crovia key file (an unreadable PRIVATE KEY)") from None
    if not isinstance(parsed, Ed25519PrivateKey):
        raise KeyFileError(f"{path} holds a private key that is not an Ed25519 key")
    seed = parsed.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return nacl.signing.SigningKey(seed)


def _public_form(text: str) -> str | None:
    """What public key `text` is, or None: a trust root, a note verifier key."""
    if _NOTE_KEY.fullmatch(text):
        return "a note verifier key (origin+hash+key)"
    if text.startswith("{"):
        try:
            document = json.loads(text)
        except ValueError:
            return None
        if isinstance(document, dict) and "public_key_hex" in document:
            return "a trust root (JSON with public_key_hex)"
    return None


def _from_raw(value: bytes, path: Path, context: KeyContext | None) -> nacl.signing.SigningKey:
    """The raw seed of old, if `context` vouches for it; else why it is no signing key."""
    if context is not None and context.signs(value):
        raise KeyFileError(
            f"{path} holds a public key, not a signing key: the public key of key_id"
            f" {key_id(value)} ({context.name} names it)"
        )
    key = nacl.signing.SigningKey(value)
    if context is not None and context.signs(bytes(key.verify_key)):
        return key
    if context is None or context.new:
        where = "a new ledger" if context is None else f"{context.name}, a new ledger"
    else:
        where = f"{context.name}, whose key it is not"
    raise KeyFileError(
        f"{path} holds 64 hex characters, the form of a public key and of raw key files before"
        f" PKCS#8: not a signing key for {where}. A raw key loads only for a ledger whose seals or"
        f" rotations name it; a new ledger starts with `crovia keygen`. A raw key of yours converts"
        f" in place with `{convert_command(path, None)}` (or --public-key HEX, its public key)"
    )


def convert_command(path: Path, context: KeyContext | None) -> str:
    """The command that rewrites the raw key file at `path` as PKCS#8 (`DIR` with no context)."""
    ledger = "DIR" if context is None else context.name
    return shlex.join(["crovia", "keygen", "--convert", str(path), "--ledger-dir", ledger])


def pem_bytes(key: nacl.signing.SigningKey) -> bytes:
    """`key` as an unencrypted PKCS#8 PEM file."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(bytes(key)).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
