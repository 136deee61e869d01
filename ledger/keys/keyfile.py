"""Ed25519 signing keys on disk, and key ids.

Key file format: PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, an unencrypted Ed25519 private key, as
`openssl genpkey -algorithm ed25519` writes it), mode 0600: a regular file, owned by the user or
root, in a directory no one else can write (OpenSSH's StrictModes rule for the files it trusts:
owner the user or root, no group or world write, sticky or not). Whoever can write the directory
can put another key, or a FIFO that hangs the reader, at the key's name. A key path is never
opened in a way that blocks: it must be a regular file by stat, is opened O_NONBLOCK, and must be
a regular file by fstat before a byte is read. The file says it holds a private key, so a public
key (64 hex, a PEM PUBLIC KEY, a trust root, a note verifier key) is refused as one and never read
as a seed. Files of the format before (the 32-byte seed as 64 hex and a newline, which looks
exactly like a public key) load only when `context` says its ledger already signs with that key,
with a notice naming `crovia keygen --convert` (docs/ledger.md, "Key files").
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
    if not path.parent.exists():  # created private: a key directory must be the owner's alone
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.exists() or path.is_symlink():
        raise KeyFileError(f"{path} already exists; refusing to overwrite a key")
    _check_directory(path, path.parent)  # a key made here would be refused when loaded
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
    Raises KeyFileError when the file is missing; is not a regular file (a FIFO, a device, a
    directory: refused before any read, so nothing blocks); is owned by another user, or lies in
    a directory others can write (`_check_directory`); holds a public key (the message says so);
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
    with _opened(path) as (fd, mode):
        data = b""
        while len(data) <= MAX_KEY_FILE:
            chunk = os.read(fd, MAX_KEY_FILE + 1 - len(data))
            if not chunk:
                break
            data += chunk
    if len(data) > MAX_KEY_FILE:
        raise KeyFileError(f"{path} is not a crovia key file (larger than {MAX_KEY_FILE} bytes)")
    key, legacy = parse_key_file(data, path, context)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):  # checked once the file is known to be private
        raise KeyFileError(
            f"{path} is accessible by group or others (mode {stat.S_IMODE(mode):o}); "
            f"run `chmod 600 {path}`"
        )
    return key, legacy


# What a path that is not a regular file is, in the words of a refusal.
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class _opened:
    """A context: (fd, st_mode) of the regular file at `path`, opened for reading without ever
    blocking (O_NONBLOCK: a FIFO opens at once and is refused by fstat, before any read), its
    owner and its directory checked; the fd is closed on the way out. KeyFileError otherwise."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> tuple[int, int]:
        path = self.path
        try:
            _refuse_kind(path, os.stat(path).st_mode)  # a FIFO is refused before it is opened
            flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
            self.fd = os.open(path, flags)  # and, swapped in meanwhile, is not waited on here
        except FileNotFoundError as exc:
            raise KeyFileError(
                f"no signing key at {path}; create one with `crovia keygen`"
            ) from exc
        except OSError as exc:
            raise KeyFileError(f"{path} cannot be read: {exc.strerror}") from None
        try:
            mode = self._checked()
        except BaseException:
            os.close(self.fd)
            raise
        return self.fd, mode

    def _checked(self) -> int:
        path = self.path
        st = os.fstat(self.fd)
        _refuse_kind(path, st.st_mode)
        if st.st_uid not in (os.getuid(), 0):
            raise KeyFileError(
                f"{path} is owned by another user (uid {st.st_uid}), who can change it: a key"
                " file must be yours or root's"
            )
        _check_directory(path, path.absolute().parent)
        real = Path(os.path.realpath(path)).parent
        if real != path.absolute().parent:  # a link: the target's directory counts too
            _check_directory(path, real)
        os.set_blocking(self.fd, True)
        return st.st_mode

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)


def _refuse_kind(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise KeyFileError(f"{path} is {kind}, not a key file (a key file is a regular file)")


def _check_directory(path: Path, directory: Path) -> None:
    """KeyFileError unless `directory` (where `path` lies) is owned by the user or root and
    writable by no group and no other user, sticky bit or not, as OpenSSH's StrictModes asks of
    the directories of the files it trusts: whoever can write it can replace the key, or put a
    FIFO at its name."""
    try:
        st = os.stat(directory)
    except OSError as exc:
        raise KeyFileError(
            f"{path}: its directory {directory} cannot be read: {exc.strerror}"
        ) from None
    mode = stat.S_IMODE(st.st_mode)
    kinds = [
        kind
        for bit, kind in ((stat.S_IWGRP, "group-writable"), (stat.S_IWOTH, "world-writable"))
        if mode & bit
    ]
    if kinds:
        kinds += ["sticky"] if mode & stat.S_ISVTX else []
        raise KeyFileError(
            f"{path} lies in {directory}, which others can write (mode {mode:o}:"
            f" {', '.join(kinds)}): a key's directory must be writable by its owner only; move"
            f" the key to a private directory, or run `chmod go-w {directory}`"
        )
    if st.st_uid not in (os.getuid(), 0):
        raise KeyFileError(
            f"{path} lies in {directory}, owned by another user (uid {st.st_uid}), who can replace"
            " the key: a key's directory must be yours or root's"
        )


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
