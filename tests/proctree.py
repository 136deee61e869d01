"""A process tree read from /proc (Linux), for tests that watch what a crawl starts and leaves.

A process is `(pid, start time)`: a pid alone may be reused once its process has gone, the pair
names one process for good.
"""

from __future__ import annotations

import os
from pathlib import Path

Process = tuple[int, str]


def stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None once gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        fields = stat(int(entry.name))
        if fields is not None:
            tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def descendants(pid: int) -> set[Process]:
    """The live descendants of `pid` (zombies left out), each (pid, start time)."""
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            fields = stat(child)
            if fields is not None and fields[0] != "Z":
                found.add((child, fields[19]))
                todo.append(child)
    return found


def alive(process: Process) -> bool:
    fields = stat(process[0])
    return fields is not None and fields[0] != "Z" and fields[19] == process[1]


def cpu_seconds(process: Process) -> float:
    """The CPU time (user and system) `process` has had; 0 once gone."""
    fields = stat(process[0]) or ["", "", "", ""] + ["0"] * 20
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cmdline(process: Process) -> bytes:
    try:
        return Path(f"/proc/{process[0]}/cmdline").read_bytes()
    except OSError:
        return b""


def parser_workers(pid: int) -> list[Process]:
    """The spawned worker processes (multiprocessing's spawn_main) below `pid`."""
    return [p for p in descendants(pid) if b"spawn_main" in cmdline(p)]
