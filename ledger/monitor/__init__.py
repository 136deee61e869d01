"""The monitor (`crovia monitor`) and the witness's state: checking a published log from outside.

`monitor` follows a log from a saved state; `log_source` reads a directory or HTTP origin;
`entries` and `seals` check what the log serves; `state` keeps what was verified; `watchdog` holds
every HTTP client of ours to its deadline (the stamp and witness clients use it too); `witness` is
the tlog-witness's cosigning state (its HTTP front end lives in crovia_spider/services/). The top
room: it may import every other room of `ledger/`, and none imports it. Exports what the rest of
the project uses.
"""

from __future__ import annotations

from ledger.monitor.entries import check_shape
from ledger.monitor.follow import monitor
from ledger.monitor.log_source import DirectorySource, HttpSource, open_source
from ledger.monitor.state import MonitorState, load_state, save_state
from ledger.monitor.watchdog import Watchdog
from ledger.monitor.witness import Witness, origin_hash, rotations_reader

__all__ = [
    "DirectorySource",
    "HttpSource",
    "MonitorState",
    "Watchdog",
    "Witness",
    "check_shape",
    "load_state",
    "monitor",
    "open_source",
    "origin_hash",
    "rotations_reader",
    "save_state",
]
