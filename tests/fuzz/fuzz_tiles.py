"""Fuzz harness: published hash tiles and entry bundles, as `crovia monitor` reads them.

The first input byte is the tile's width less one (1 to 256 hashes), the rest the object's bytes:
they are decoded as a level-0 hash tile (`decode_hashes`) and as its entry bundle (`decode_bundle`,
ledger/tlog/tiles.py), and the bundle's entries checked as the monitor checks a new entry
(`check_entries`, ledger/monitor/entries.py: canonical JSON, axiom_id, signature under the fixed
log key, envelope shape, anchor at its index). Documented errors: VerificationError.
"""

from __future__ import annotations

import contextlib
import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from ledger.exceptions import VerificationError
    from ledger.keys.keychain import KeyChain
    from ledger.monitor.entries import check_entries
    from ledger.monitor.keys import LogKeys
    from ledger.tlog.tiles import Tile, decode_bundle, decode_hashes
    from tests.fuzz.keys import LOG_KEY, ORIGIN

DOCUMENTED = (VerificationError,)
SLACK = 16 << 10
PINNED = bytes(LOG_KEY.verify_key).hex()
KEYS = LogKeys(KeyChain((PINNED,), ()), PINNED, ORIGIN)  # a log never rotated: one key


def target(data: bytes) -> None:
    if not data:
        return
    tile, body = Tile(0, 0, data[0] + 1), data[1:]
    with contextlib.suppress(VerificationError):
        decode_hashes(body, tile)
    entries = decode_bundle(body, tile)
    check_entries(entries, 0, 0, KEYS)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
