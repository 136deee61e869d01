"""Writing a command's output file: never over an existing file without --force, never over a key.

Every `crovia` command that writes a file goes through `write_output` (docs/ledger.md, "Output
files"). A *key file* is never written over, even with --force; a path is one when, following
symlinks, any of these holds:

- it is the same file as the configured signing key ($CROVIA_SIGNING_KEY_FILE);
- its name ends in `.key` or `.pem` (whatever it holds now: a name says what it is for);
- its first 4 KiB are a crovia key file (64 hex characters and a newline) or hold a PEM or
  OpenSSH `PRIVATE KEY` block.

The file mode is not a sign: receipts written under `umask 077` are 0600 too.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

from crovia_spider.options import path_default

T = TypeVar("T")

KEY_SUFFIXES = frozenset({".key", ".pem"})
_SNIFF_BYTES = 4096
_SEED_HEX = re.compile(rb"\s*[0-9a-fA-F]{64}\s*")


def force_flag(parser: argparse.ArgumentParser) -> None:
    """Add --force (write over an existing output file, but never over a key file)."""
    parser.add_argument(
        "--force",
        action="store_true",
        help="write over an existing output file (never over a key file)",
    )


def check_output(path: Path, *, force: bool) -> None:
    """Raise KeyFileError if `path` is a key file, OutputExists if it exists and not `force`."""
    from crovia_spider.exceptions import OutputExists
    from ledger.exceptions import KeyFileError

    if not os.path.lexists(path):
        return
    if is_key_file(path):
        raise KeyFileError(f"{path} is a key file: refusing to write over it, --force or not")
    if not force:
        raise OutputExists(f"{path} exists: refusing to overwrite it (add --force to replace it)")


def write_output(path: Path, data: bytes, *, force: bool) -> None:
    """Write `data` to a new file at `path`, or replace a non-key file when `force`.

    Raises what `check_output` raises, or OSError. A new file is created exclusively (a file
    appearing meanwhile is not overwritten); a replacement goes through a temporary file and a
    rename, so a symlink at `path` is replaced, never written through.
    """
    check_output(path, force=force)
    if not os.path.lexists(path):
        with open(path, "xb") as out:
            out.write(data)
        return
    import tempfile  # here: `crovia verify` imports this module and never writes

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))  # the replaced file's mode, not 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_streamed(path: Path, write: Callable[[BinaryIO], T], *, force: bool) -> T:
    """Run `write` on a temporary file beside `path`; only if it returns, make that file `path`
    and return what `write` returned. A new file is linked exclusively (a file appearing
    meanwhile is kept, and named); with `force` an existing non-key file is replaced. The file
    gets the mode open() would give it, not mkstemp's 0600. What `write` raises propagates, and
    nothing is left at `path` or beside it."""
    import tempfile  # here: `crovia verify` imports this module and never writes

    check_output(path, force=force)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w+b") as out:
            written = write(out)
            out.flush()
            os.fsync(out.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if force and os.path.lexists(path):
            check_output(path, force=force)  # still never a key file
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                check_output(path, force=force)  # names the file
                raise
    finally:
        Path(tmp).unlink(missing_ok=True)
    return written


def is_key_file(path: Path) -> bool:
    """True when `path` is a key file by the rule of this module's docstring."""
    if path.suffix.lower() in KEY_SUFFIXES or path.resolve().suffix.lower() in KEY_SUFFIXES:
        return True
    configured = path_default("CROVIA_SIGNING_KEY_FILE")
    try:
        if configured.exists() and os.path.samefile(path, configured):
            return True
        with open(path, "rb") as src:
            head = src.read(_SNIFF_BYTES)
    except (FileNotFoundError, IsADirectoryError):
        return False
    return bool(_SEED_HEX.fullmatch(head)) or b"PRIVATE KEY-----" in head
