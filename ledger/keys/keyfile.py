"""Ed25519 signing keys on disk, and key ids.

Key file format: the 32-byte ed25519 seed as 64 lowercase hex characters and one newline, mode 0600.
Nothing here logs or returns key material as text; errors name the file, never its content.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import nacl.signing

from ledger.exceptions import InvalidPublicKey, KeyFileError
from ledger.key_ids import key_id, public_key_hex

__all__ = [
    "generate_signing_key",
    "key_id",
    "load_signing_key",
    "parse_pin",
    "public_key_hex",
]

SEED_BYTES = 32
_PUBKEY_HEX = re.compile(r"[0-9a-fA-F]{64}")
_KEY_ID = re.compile(r"[0-9a-fA-F]{16}")


def parse_pin(pubkey_hex: str | None, key_id: str | None) -> tuple[str | None, str | None]:
    """A pinned public key and key_id as given by a user, lowercased; None stays None.

    Raises InvalidPublicKey when `pubkey_hex` is not 64 hex characters or `key_id` not 16: a
    malformed pin is a usage error, not a failed check.
    """
    if pubkey_hex is not None and not _PUBKEY_HEX.fullmatch(pubkey_hex):
        raise InvalidPublicKey(f"--pubkey must be 64 hex characters, not {pubkey_hex!r}")
    if key_id is not None and not _KEY_ID.fullmatch(key_id):
        raise InvalidPublicKey(f"--key-id must be 16 hex characters, not {key_id!r}")
    return (
        None if pubkey_hex is None else pubkey_hex.lower(),
        None if key_id is None else key_id.lower(),
    )


def generate_signing_key(path: str | os.PathLike[str]) -> nacl.signing.SigningKey:
    """Create a new key file at `path` (mode 0600, parents created) and return the key.

    The file is created with O_EXCL and mode 0600 in one call, so it never exists with a looser
    mode. Raises KeyFileError if `path` already exists (a key is never overwritten).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = nacl.signing.SigningKey.generate()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise KeyFileError(f"{path} already exists; refusing to overwrite a key") from exc
    with os.fdopen(fd, "w") as out:
        os.fchmod(out.fileno(), 0o600)  # the umask can only narrow 0600, but be explicit
        out.write(bytes(key).hex() + "\n")
        out.flush()
        os.fsync(out.fileno())
    return key


def load_signing_key(path: str | os.PathLike[str]) -> nacl.signing.SigningKey:
    """Load the key at `path`.

    Raises KeyFileError when the file is missing, is readable or writable by group or others (the
    message says `chmod 600 PATH`), or does not hold exactly one 64-hex-character seed.
    """
    path = Path(path)
    try:
        with open(path, "rb") as src:
            mode = os.fstat(src.fileno()).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise KeyFileError(
                    f"{path} is accessible by group or others (mode {stat.S_IMODE(mode):o}); "
                    f"run `chmod 600 {path}`"
                )
            raw = src.read(4 * SEED_BYTES)
    except FileNotFoundError as exc:
        raise KeyFileError(f"no signing key at {path}; create one with `crovia keygen`") from exc
    except IsADirectoryError as exc:
        raise KeyFileError(f"{path} is a directory, not a key file") from exc
    return nacl.signing.SigningKey(_parse_seed(raw, path))


def _parse_seed(raw: bytes, path: Path) -> bytes:
    text = raw.strip()
    if len(text) != 2 * SEED_BYTES:
        raise KeyFileError(f"{path} is not a crovia key file (expected 64 hex characters)")
    try:
        return bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        # `from None`: the chained error could quote the file's content, which is key material
        raise KeyFileError(f"{path} is not a crovia key file (not hex)") from None
