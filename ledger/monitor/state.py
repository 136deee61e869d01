"""What a monitor remembers between runs: the last verified tree head and where the seals were.

One small JSON file, replaced atomically, written only after a run verified everything. It holds
nothing the log asserted without the monitor checking it: the size and root it verified, the number
of seals it checked and the sha256 of the last one (so the seal chain continues across runs).
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ledger.exceptions import LedgerError
from ledger.publish.publish_dir import write_atomically
from ledger.tlog.rfc6962 import EMPTY_ROOT

STATE_SCHEMA = "crovia.monitor_state.v1"
_HEX64_OR_EMPTY = re.compile(r"([0-9a-f]{64})?")


class MonitorStateInvalid(LedgerError):
    """The state file is not a monitor state, or belongs to another log (a usage error)."""


@dataclass(frozen=True)
class MonitorState:
    """The last tree head verified for the log `origin`, and the seal chain's position."""

    origin: str
    size: int
    root: bytes
    seals: int
    last_seal_sha256: str
    chained: bool

    @classmethod
    def empty(cls, origin: str) -> MonitorState:
        """Before the first run: the empty tree, no seal."""
        return cls(origin, 0, EMPTY_ROOT, 0, "", False)

    def to_bytes(self) -> bytes:
        record = {
            "chained": self.chained,
            "last_seal_sha256": self.last_seal_sha256,
            "origin": self.origin,
            "root": base64.b64encode(self.root).decode("ascii"),
            "schema": STATE_SCHEMA,
            "seals": self.seals,
            "size": self.size,
        }
        return (json.dumps(record, sort_keys=True, indent=1) + "\n").encode("utf-8")


def load_state(path: Path, origin: str) -> MonitorState:
    """The state in `path` (the empty state when the file does not exist).

    Raises MonitorStateInvalid for a file that is not a state, or a state of another origin.
    """
    try:
        record = json.loads(path.read_bytes())
    except FileNotFoundError:
        return MonitorState.empty(origin)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MonitorStateInvalid(f"{path} is not a monitor state file: {exc}") from None
    state = _parse(record, path)
    if state.origin != origin:
        raise MonitorStateInvalid(
            f"{path} is the state of the log {state.origin!r}, not of {origin!r}"
        )
    return state


def save_state(path: Path, state: MonitorState) -> None:
    """Replace the state file atomically (the old state survives a crash)."""
    write_atomically(path, state.to_bytes())


def _parse(record: object, path: Path) -> MonitorState:
    types = {
        "chained": bool,
        "last_seal_sha256": str,
        "origin": str,
        "root": str,
        "schema": str,
        "seals": int,
        "size": int,
    }
    if not isinstance(record, dict) or set(record) != set(types):
        raise MonitorStateInvalid(f"{path}: not the fields of a monitor state")
    for name, kind in types.items():
        if type(record[name]) is not kind:
            raise MonitorStateInvalid(f"{path}: {name} is not {kind.__name__}")
    try:
        root = base64.b64decode(record["root"], validate=True)
    except ValueError:
        root = b""
    if (
        record["schema"] != STATE_SCHEMA
        or len(root) != 32
        or min(record["size"], record["seals"]) < 0
        or not _HEX64_OR_EMPTY.fullmatch(record["last_seal_sha256"])
    ):
        raise MonitorStateInvalid(f"{path}: not a valid {STATE_SCHEMA}")
    return MonitorState(
        record["origin"],
        record["size"],
        root,
        record["seals"],
        record["last_seal_sha256"],
        record["chained"],
    )
