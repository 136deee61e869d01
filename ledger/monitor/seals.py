"""A monitor's check of the seals published since its last run (`seals/<n>`,
ledger/publish/publisher.py).

Each seal must be canonical JSON with a seal's fields, signed by the log's key, chained to the
seal before it (`prev_seal_sha256`, continuing from the monitor's state), cover more leaves than
the one before and no more than the checkpoint, and carry the roots of the verified tree at its
leaf_count: the receipts' duplicate_last `merkle_root` and, when present, `rfc6962_root`. The walk
ends at the seal whose leaf_count is the checkpoint's size; there must be one.
"""

from __future__ import annotations

from typing import Any

import nacl.signing
import orjson

from ledger import merkle
from ledger.audit.tlog_audit import check_link
from ledger.canonical import encode_checked
from ledger.exceptions import (
    CanonicalizationError,
    NotPublished,
    RootMismatch,
    SealInvalid,
    UntrustedKey,
)
from ledger.monitor.log_source import LogSource
from ledger.monitor.state import MonitorState
from ledger.publish.publisher import seal_path
from ledger.receipt.verify import check_seal_signature
from ledger.seal import SEAL_KEY_SETS, seal_sha256
from ledger.tlog.checkpoint import Checkpoint
from ledger.tlog.exceptions import Rfc6962RootMismatch
from ledger.tlog.note import Ed25519Verifier
from ledger.tlog.rfc6962 import root_at
from ledger.tlog.tile_tree import GrownTree

MAX_SEAL = 1 << 16


class SealWalk:
    """Checks seals from the state's next one to the one at the checkpoint's size."""

    def __init__(
        self,
        source: LogSource,
        log: Ed25519Verifier,
        state: MonitorState,
        checkpoint: Checkpoint,
        tree: GrownTree,
    ) -> None:
        self._source, self._state, self._checkpoint, self._tree = source, state, checkpoint, tree
        self._key_hex = log.public_key.hex()
        self._key = nacl.signing.VerifyKey(log.public_key)
        self.checked = 0

    def run(self) -> MonitorState:
        """Check every new seal; return the state after the last. Raises the failed check."""
        number, count = self._state.seals, self._state.size
        last_sha, chained = self._state.last_seal_sha256, self._state.chained
        while count < self._checkpoint.size:
            where = seal_path(number)
            seal = self._fetch(where)
            count = self._check_count(where, seal, count)
            chained = check_link(where, seal, last_sha, chained)
            self._check_signature(where, seal)
            self._check_roots(where, seal)
            last_sha, number, self.checked = seal_sha256(seal), number + 1, self.checked + 1
        return MonitorState(
            self._state.origin,
            self._checkpoint.size,
            self._checkpoint.root,
            number,
            last_sha,
            chained,
        )

    def _fetch(self, where: str) -> dict[str, Any]:
        try:
            data = self._source.get(where, MAX_SEAL)
        except NotPublished:
            raise SealInvalid(
                f"{where} is not published, but no seal reached size {self._checkpoint.size}"
            ) from None
        try:
            seal = orjson.loads(data)
            canonical = encode_checked(seal)
        except (orjson.JSONDecodeError, CanonicalizationError):
            raise SealInvalid(f"{where} is not canonical JSON") from None
        if canonical != data or not isinstance(seal, dict) or frozenset(seal) not in SEAL_KEY_SETS:
            raise SealInvalid(f"{where} is not a seal's canonical JSON")
        for name, value in seal.items():
            if type(value) is not (int if name == "leaf_count" else str):
                raise SealInvalid(
                    f"{where}: {name} is not {'int' if name == 'leaf_count' else 'str'}"
                )
        return seal

    def _check_count(self, where: str, seal: dict[str, Any], previous: int) -> int:
        count = seal["leaf_count"]
        if not previous < count <= self._checkpoint.size:
            raise SealInvalid(
                f"{where} covers {count!r} leaves: not more than the seal before it ({previous})"
                f" and at most the checkpoint's {self._checkpoint.size}"
            )
        return count

    def _check_signature(self, where: str, seal: dict[str, Any]) -> None:
        if seal["public_key_hex"] != self._key_hex:
            raise UntrustedKey(
                f"{where} is signed by another key than the log's",
                expected=self._key_hex,
                computed=seal["public_key_hex"],
            )
        check_seal_signature(seal, self._key)

    def _check_roots(self, where: str, seal: dict[str, Any]) -> None:
        count = seal["leaf_count"]
        computed = merkle.root(count, self._tree).hex()
        if seal["merkle_root"] != computed:
            raise RootMismatch(
                f"{where} (leaf_count {count}): merkle_root is not the entries' root",
                expected=seal["merkle_root"],
                computed=computed,
            )
        if "rfc6962_root" in seal:
            computed = root_at(count, self._tree).hex()
            if seal["rfc6962_root"] != computed:
                raise Rfc6962RootMismatch(
                    f"{where} (leaf_count {count}): rfc6962_root is not the entries' root",
                    expected=seal["rfc6962_root"],
                    computed=computed,
                )
