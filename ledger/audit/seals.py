"""The seals half of `crovia audit`: seals.jsonl parsed strictly, and each seal checked when the
leaf stream reaches its leaf_count (signature, key, Merkle root), in growing order.

A seal must be signed by the key of the era its last leaf belongs to (ledger/audit/keys.py): with
one era, every seal carries the ledger's one key.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import orjson

from ledger import merkle
from ledger.audit.keys import AuditKeys, verify_key
from ledger.audit.leaves import located
from ledger.audit.tlog_audit import SealChain, check_rfc6962_root
from ledger.exceptions import RootMismatch, SealInvalid, UntrustedKey
from ledger.keys.signatures import check_seal_signature
from ledger.seal import SEAL_KEY_SETS
from ledger.store.tree import MemoryFrontier

_SEAL_TYPES = {
    "leaf_count": int,
    "merkle_root": str,
    "public_key_hex": str,
    "key_id": str,
    "signature": str,
    "sig_algorithm": str,
}


class SealChecker:
    """Checks each seal when the leaf stream reaches its leaf_count."""

    def __init__(self, seals: list[tuple[int, dict[str, Any]]], keys: AuditKeys) -> None:
        self._seals = deque(seals)
        self._keys = keys
        self.last_count = 0  # leaves covered by the newest seal checked
        chain = SealChain()
        for position, (number, seal) in enumerate(seals):  # before any leaf: a wrong key fails all
            self._check_key(number, seal, self._expected_key(position, seal))
            chain.check(number, seal)

    def at(self, leaf_count: int, frontier: MemoryFrontier) -> None:
        """The stream has `leaf_count` leaves folded into `frontier`: check the seals there."""
        while self._seals and self._seals[0][1]["leaf_count"] == leaf_count:
            number, seal = self._seals.popleft()
            self._check(number, seal)
            computed = merkle.root(leaf_count, frontier).hex()
            if seal["merkle_root"] != computed:
                raise RootMismatch(
                    f"seals.jsonl line {number} (leaf_count {leaf_count}): merkle_root",
                    expected=seal["merkle_root"],
                    computed=computed,
                )
            check_rfc6962_root(number, seal, frontier)

    def finish(self, leaf_count: int) -> None:
        """After the last leaf: SealInvalid if a seal was never reached."""
        if self._seals:
            number, seal = self._seals[0]
            raise SealInvalid(
                f"seals.jsonl line {number} covers leaf_count {seal['leaf_count']}, not a"
                f" count the ledger passed through in order (it has {leaf_count} leaves)"
            )

    def _check(self, number: int, seal: dict[str, Any]) -> None:
        count = seal["leaf_count"]
        if count <= self.last_count:
            raise SealInvalid(f"seals.jsonl line {number}: leaf_count {count!r} does not grow")
        self.last_count = count
        where = f"seals.jsonl line {number}"
        key = verify_key(seal["public_key_hex"], where)
        located(where, lambda: check_seal_signature(seal, key))

    def _expected_key(self, position: int, seal: dict[str, Any]) -> str:
        if self._keys.seal_keys is not None:
            return self._keys.seal_keys[position]
        return self._keys.for_leaf(max(0, seal["leaf_count"] - 1)).public_key_hex

    def _check_key(self, number: int, seal: dict[str, Any], expected: str) -> None:
        if seal["public_key_hex"] == expected:
            return
        if self._keys.pinned:
            raise UntrustedKey(
                f"seals.jsonl line {number}: signed by another key than the pinned one",
                expected=expected,
                computed=seal["public_key_hex"],
            )
        raise SealInvalid(
            f"seals.jsonl line {number}: signed by another key than the ledger's (the key of"
            " its first seal), with no rotation to it",
            expected=expected,
            computed=seal["public_key_hex"],
        )


def parse_seals(seal_lines: list[tuple[int, bytes]]) -> list[tuple[int, dict[str, Any]]]:
    """(line number from 1, seal) for each line; SealInvalid for one that is not a seal object."""
    seals = []
    for number, (_offset, line) in enumerate(seal_lines, start=1):
        try:
            seal = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise SealInvalid(f"seals.jsonl line {number} is not JSON") from None
        if not isinstance(seal, dict) or seal.keys() not in SEAL_KEY_SETS:
            raise SealInvalid(f"seals.jsonl line {number} does not have a seal's fields")
        for name, kind in _SEAL_TYPES.items():
            if type(seal[name]) is not kind:
                raise SealInvalid(f"seals.jsonl line {number}: {name} is not {kind.__name__}")
        seals.append((number, seal))
    return seals
