"""Writing a `[[feeds]]` entry into the feed list, for `crovia feeds add`: every byte there kept.

The entry is rendered by tomlkit (`render_tables`) and appended to the file's bytes in the file's
own line endings (`appended`), under an exclusive lock beside the file, so two `add`s at once
both land (`add_entry`): inside the lock the list is read again, the entry refused if its vendor
id or URL was taken meanwhile (`refuse_taken`), and the new list validated whole before it
replaces the file, or a symlink's target, atomically (`replace_validated`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any


def existing_feeds(feeds_file: Path) -> list[Any]:
    """The entries of the feed list at `feeds_file`: none when it is missing, or empty or only
    comments (`add` starts the list there); ConfigError when it does not validate."""
    import tomllib

    from crovia_spider.config.feeds import load_feeds
    from crovia_spider.config.tables import read_toml

    try:
        if not read_toml(feeds_file):
            return []
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        pass  # load_feeds says what is wrong, naming the file
    return load_feeds(feeds_file)


def refuse_taken(feeds_file: Path, existing: list[Any], vendor: str, url: str) -> None:
    from crovia_spider.exceptions import ConfigError

    for feed in existing:
        if feed.vendor == vendor:
            raise ConfigError(
                f"{feeds_file}: vendor {vendor!r} is configured already ({feed.url}); give"
                " another with --vendor ID"
            )
        if url == feed.url or url in feed.urls:
            raise ConfigError(f"{feeds_file}: {url} is configured already, as {feed.vendor!r}")


def render_tables(tables: list[dict[str, Any]]) -> str:
    import tomlkit

    document = tomlkit.document()
    document.append("feeds", tomlkit.aot())
    for table in tables:
        document["feeds"].append(table)
    return tomlkit.dumps(document)


def add_entry(feeds_file: Path, entry: dict[str, Any]) -> None:
    """Append `entry` to the feed list at `feeds_file` (a symlink: its target) as one
    `[[feeds]]` table, under an exclusive lock on `.NAME.lock` beside the target: inside the lock
    the list is read again, `entry` refused if its vendor id or URL was taken meanwhile, the new
    list validated, and the target replaced atomically. Raises ConfigError or OSError, the file
    as it was."""
    import fcntl

    target = feeds_file.resolve()
    lock_path = target.with_name(f".{target.name}.lock")
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = target.read_bytes() if target.exists() else b""
        url = entry.get("url") or entry["urls"][0]  # a watch source lists its pages in urls
        refuse_taken(feeds_file, existing_feeds(target), entry["vendor"], url)
        replace_validated(feeds_file, target, appended(old, entry))
    finally:
        os.close(lock)  # and the lock with it


def appended(old: bytes, entry: dict[str, Any]) -> bytes:
    """`old` (a feed list's bytes) with `entry` appended as a `[[feeds]]` table in the file's
    line ending (CRLF if its first line ends so): every byte of `old` kept, a missing final line
    ending added, a blank line between the two (none in an empty file)."""
    first = old.find(b"\n")
    newline = b"\r\n" if first > 0 and old[first - 1 : first] == b"\r" else b"\n"
    table = render_tables([entry]).encode("utf-8").replace(b"\n", newline)
    if old and not old.endswith(b"\n"):
        old += newline
    return old + (newline if old.strip() else b"") + table


def replace_validated(feeds_file: Path, target: Path, data: bytes) -> None:
    """Replace `target` (what `feeds_file` names) with `data` atomically, once the whole list
    validates: ConfigError naming `feeds_file`, `target` untouched, if it does not. The new file
    is made by mkstemp beside `target` (no name known in advance, no symlink followed) and keeps
    `target`'s mode."""
    import stat

    from crovia_spider.config.feeds import load_feeds
    from crovia_spider.exceptions import ConfigError

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            load_feeds(tmp)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(tmp, str(feeds_file))) from None
        os.chmod(tmp, stat.S_IMODE(target.stat().st_mode) if target.exists() else _new_mode())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _new_mode() -> int:
    """The mode a new file gets under the process's umask (mkstemp's own is 0600)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask
