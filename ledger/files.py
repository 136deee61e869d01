"""Whole-file writes that a reader never sees half done (publishing, state files)."""

from __future__ import annotations

import os
from pathlib import Path


def replace_file(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically: a temporary file beside it, fsync, rename over.

    A reader sees the old bytes or the new ones, never a torn file. The caller fsyncs the
    directory (once for many files) to make the rename itself durable. Raises OSError.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def replace_if_changed(path: Path, data: bytes) -> bool:
    """`replace_file` unless `path` already holds exactly `data`; True if it wrote."""
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    replace_file(path, data)
    return True
