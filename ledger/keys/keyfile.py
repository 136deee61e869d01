"""Ed25519 signing keys on disk, and key ids.

Key file format: PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, an unencrypted Ed25519 private key, as
`openssl genpkey -algorithm ed25519` writes it), mode 0600. The file says it holds a private key,
so a public key (64 hex, a PEM PUBLIC KEY, a trust root, a note verifier key) is refused as one and
never read as a seed. Files of the format before (the 32-byte seed as 64 hex and a newline, which
looks exactly like a public key) load only when `context` says its ledger already signs with that
key, with a notice naming `crovia keygen --convert` (docs/ledger.md, "Key files").
Nothing here logs or returns key material as text; errors name the file, never its content.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import nacl.signing

from ledger.exceptions import InvalidPublicKey, KeyFileError
from ledger.key_ids import key_id, public_key_hex
from ledger.keys.key_content import KeyContext, convert_command, parse_key_file, pem_bytes

__all__ = [
    "Converted",
    "KeyContext",
    "convert_key_file",
    "generate_signing_key",
    "key_id",
    "load_signing_key",
    "parse_pin",
    "public_key_hex",
]

MAX_KEY_FILE = 1 << 16  # a trust root with its rotations is the largest public file we name
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
    """Create a new PKCS#8 key file at `path` (mode 0600, parents created) and return the key.

    The key is written whole to a 0600 temporary file beside `path`, then linked to `path`, which
    fails if `path` exists: no file ever has a looser mode, a partial key is never at `path`, and
    a key is never overwritten. Raises KeyFileError if `path` already exists.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        raise KeyFileError(f"{path} already exists; refusing to overwrite a key")
    key = nacl.signing.SigningKey.generate()
    with _written(path, pem_bytes(key)) as temporary:
        try:
            os.link(temporary, path)
        except FileExistsError as exc:
            raise KeyFileError(f"{path} already exists; refusing to overwrite a key") from exc
    return key


def load_signing_key(
    path: str | os.PathLike[str],
    *,
    context: KeyContext | None = None,
    notice: Callable[[str], None] | None = None,
) -> nacl.signing.SigningKey:
    """Load the signing key at `path`.

    A PKCS#8 PEM Ed25519 private key loads. A raw 64-hex file of old loads only when
    `context.signs` names its public key (the ledger already signs with it), and `notice` (by
    default a warning on this module's logger) gets one line naming the convert command.
    Raises KeyFileError when the file is missing; holds a public key (the message says so);
    holds a raw key no ledger of `context` signs with; is any other content; or, holding a
    private key, is readable or writable by group or others (the message says `chmod 600 PATH`).
    """
    path = Path(path)
    key, legacy = _read_key(path, context)
    if legacy:
        command = convert_command(path, context)
        (notice or _warn)(
            f"notice: {path} is a raw key file from before PKCS#8 key files; it loads because"
            f" {context.name} names its key; convert it in place with `{command}`"
        )
    return key


class Converted(NamedTuple):
    """What `convert_key_file` did: the key's public key, and whether the file was rewritten."""

    public_key: bytes
    converted: bool


def convert_key_file(path: str | os.PathLike[str], *, context: KeyContext) -> Converted:
    """Rewrite the raw key file at `path` as PKCS#8 PEM, in place.

    The raw key must be one `context` signs with (as for `load_signing_key`). The new content
    goes to a 0600 temporary file that replaces `path` in one rename, so `path` holds the old key
    or the new file, never a part. A file that is already PKCS#8 is left as it is. Raises
    KeyFileError as `load_signing_key` does.
    """
    path = Path(path)
    key, legacy = _read_key(path, context)
    if legacy:
        with _written(path, pem_bytes(key)) as temporary:
            os.replace(temporary, path)
    return Converted(bytes(key.verify_key), legacy)


def _read_key(path: Path, context: KeyContext | None) -> tuple[nacl.signing.SigningKey, bool]:
    """(the key, whether the file is raw of old); KeyFileError for every refusal."""
    try:
        with open(path, "rb") as src:
            mode = os.fstat(src.fileno()).st_mode
            data = src.read(MAX_KEY_FILE + 1)
    except FileNotFoundError as exc:
        raise KeyFileError(f"no signing key at {path}; create one with `crovia keygen`") from exc
    except IsADirectoryError as exc:
        raise KeyFileError(f"{path} is a directory, not a key file") from exc
    if len(data) > MAX_KEY_FILE:
        raise KeyFileError(f"{path} is not a crovia key file (larger than {MAX_KEY_FILE} bytes)")
    key, legacy = parse_key_file(data, path, context)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):  # checked once the file is known to be private
        raise KeyFileError(
            f"{path} is accessible by group or others (mode {stat.S_IMODE(mode):o}); "
            f"run `chmod 600 {path}`"
        )
    return key, legacy


class _written:
    """A context: `data` in a new 0600 file beside `path` (fsynced), removed on the way out if
    still there; the body links or renames it into place, and the directory is fsynced after."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path, self.data = path, data
        self.temporary = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")

    def __enter__(self) -> Path:
        fd = os.open(self.temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), 0o600)  # the umask can only narrow 0600, but be explicit
            out.write(self.data)
            out.flush()
            os.fsync(out.fileno())
        return self.temporary

    def __exit__(self, *exc: object) -> None:
        self.temporary.unlink(missing_ok=True)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def _warn(message: str) -> None:
    """The notice's default: a warning in this module's log (logging imported only then, so
    `crovia verify` starts without it)."""
    import logging

    logging.getLogger(__name__).warning(message)
