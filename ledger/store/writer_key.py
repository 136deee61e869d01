"""Which key may write a ledger: its current key, changed only by a rotation (docs/ledger.md).

The current key is the new key of the newest record in rotations.jsonl; else the key of the first
seal; else, with no seal yet, the key that signed leaf 0 (checked by verifying that leaf's
signature); an empty ledger takes any key. Everything here only reads, so a refused writer
changes no byte of the ledger directory. `ledger_key_context` tells the key loader which keys a
ledger already signs with, so a raw key file of old loads only for its own ledger.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import nacl.exceptions
import nacl.signing
import orjson

from ledger import jsonl
from ledger.envelope import SIGNATURE_PREFIX, signed_bytes
from ledger.exceptions import CanonicalizationError, WrongSigningKey
from ledger.keys.key_content import KeyContext
from ledger.keys.keyfile import key_id, load_signing_key
from ledger.store.reader import LEDGER_FILE, ROTATIONS_FILE, SEALS_FILE

_HOW = "use the ledger's key, or hand over on purpose with `crovia rotate-key`"


def check_writer_key(directory: Path, key: nacl.signing.SigningKey) -> None:
    """Raise WrongSigningKey, naming both key ids, unless `key` is the ledger's current key."""
    offered = bytes(key.verify_key)
    current = current_key_hex(directory)
    if current is None:
        _check_leaf_zero(directory, key.verify_key)
    elif current != offered.hex():
        raise WrongSigningKey(
            f"{directory} is signed by key_id {_key_id(current)}, not by the offered key"
            f" (key_id {key_id(offered)}): refusing to write with another key; {_HOW}"
        )


def load_ledger_key(
    key_file: str | os.PathLike[str],
    directory: Path,
    *,
    notice: Callable[[str], None] | None = None,
) -> nacl.signing.SigningKey:
    """`load_signing_key` for a writer of `directory`: a raw key file of old loads only when the
    ledger already signs with it (KeyFileError otherwise, as for a public key)."""
    return load_signing_key(key_file, context=ledger_key_context(directory), notice=notice)


def ledger_key_context(directory: Path) -> KeyContext:
    """The keys `directory` signs with: each key of its rotations and seals, else the signer of
    leaf 0 (checked against its signature); none for an empty or absent ledger."""
    directory = Path(directory)
    keys = _named_keys(directory)
    has_leaf = any(True for _ in jsonl.iter_lines(directory / LEDGER_FILE))
    if keys:
        return KeyContext(str(directory), lambda public: public.hex() in keys)
    return KeyContext(
        str(directory), lambda public: _signs_leaf_zero(directory, public), new=not has_leaf
    )


def _named_keys(directory: Path) -> frozenset[str]:
    # Keys change only by rotation: the first seal and the rotations name every key.
    found = set()
    for _offset, line in jsonl.iter_lines(directory / SEALS_FILE):
        found.update(_fields(line, ("public_key_hex",)))
        break
    for _offset, line in jsonl.iter_lines(directory / ROTATIONS_FILE):
        found.update(_fields(line, ("old_public_key_hex", "new_public_key_hex")))
    return frozenset(found)


def _fields(line: bytes, names: tuple[str, ...]) -> list[str]:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return []  # a line it cannot read names no key (the writer refuses such a ledger anyway)
    if not isinstance(record, dict):
        return []
    return [value.lower() for name in names if isinstance(value := record.get(name), str)]


def _signs_leaf_zero(directory: Path, public: bytes) -> bool:
    try:
        _check_leaf_zero(directory, nacl.signing.VerifyKey(public))
    except (WrongSigningKey, nacl.exceptions.CryptoError):
        return False
    return any(True for _ in jsonl.iter_lines(directory / LEDGER_FILE))


def current_key_hex(directory: Path) -> str | None:
    """The public key (hex) of the newest rotation, else of the first seal; None with neither."""
    try:
        rotation = jsonl.last_line(directory / ROTATIONS_FILE)
        if rotation is not None:
            return _public(rotation, "new_public_key_hex", ROTATIONS_FILE)
        for _offset, line in jsonl.iter_lines(directory / SEALS_FILE):
            return _public(orjson.loads(line), "public_key_hex", SEALS_FILE)
    except orjson.JSONDecodeError:
        raise WrongSigningKey(_unreadable(directory, "a line is not JSON")) from None
    return None


def _check_leaf_zero(directory: Path, verify_key: nacl.signing.VerifyKey) -> None:
    for _offset, line in jsonl.iter_lines(directory / LEDGER_FILE):
        try:
            envelope = orjson.loads(line)
            signature = bytes.fromhex(str(envelope["signature"]).removeprefix(SIGNATURE_PREFIX))
            verify_key.verify(signed_bytes(envelope), signature)
        except nacl.exceptions.BadSignatureError:
            raise WrongSigningKey(
                f"leaf 0 of {directory} is not signed by the offered key (key_id"
                f" {key_id(bytes(verify_key))}) and no seal names the ledger's key yet:"
                f" refusing to write with another key; {_HOW}"
            ) from None
        except (orjson.JSONDecodeError, CanonicalizationError, LookupError, TypeError, ValueError):
            why = "leaf 0 is not a signed envelope"
            raise WrongSigningKey(_unreadable(directory, why)) from None
        return


def _public(record: object, name: str, file: str) -> str:
    value = record.get(name) if isinstance(record, dict) else None
    if not isinstance(value, str) or len(value) != 64:
        raise WrongSigningKey(f"{file} has no {name} where expected: cannot tell the ledger's key")
    return value


def _key_id(public_hex: str) -> str:
    try:
        return key_id(bytes.fromhex(public_hex))
    except ValueError:
        return repr(public_hex)


def _unreadable(directory: Path, why: str) -> str:
    return f"cannot tell which key signs {directory} ({why}); check it with `crovia audit`"
