"""A monitor's check of the seals published since its last run (`seals/<n>`,
ledger/publish/publisher.py).

Each seal must be canonical JSON with a seal's fields, signed by the key of its era (the pinned key
or one the signed rotations lead to: ledger/monitor/keys.py), chained to the
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
    LogForked,
    NotPublished,
    RootMismatch,
    RotationInvalid,
    SealInvalid,
)
from ledger.monitor.keys import WHERE, LogKeys, check_rotation_links
from ledger.monitor.log_source import LogSource
from ledger.monitor.state import MonitorState
from ledger.publish.publisher import seal_path
from ledger.receipt.verify import check_seal_signature
from ledger.seal import SEAL_KEY_SETS, seal_sha256
from ledger.tlog.checkpoint import Checkpoint
from ledger.tlog.exceptions import Rfc6962RootMismatch
from ledger.tlog.rfc6962 import root_at
from ledger.tlog.tile_tree import GrownTree

MAX_SEAL = 1 << 16


class SealWalk:
    """Checks seals from the state's next one to the one at the checkpoint's size."""

    def __init__(
        self,
        source: LogSource,
        keys: LogKeys,
        state: MonitorState,
        checkpoint: Checkpoint,
        tree: GrownTree,
    ) -> None:
        self._source, self._state, self._checkpoint, self._tree = source, state, checkpoint, tree
        self._keys = keys
        self.checked = 0

    def run(self) -> MonitorState:
        """Check every new seal; return the state after the last. Raises the failed check."""
        number, count = self._state.seals, self._state.size
        last_sha, chained = self._state.last_seal_sha256, self._state.chained
        self._check_state_key()
        while count < self._checkpoint.size:
            where = seal_path(number)
            seal = self._fetch(where)
            previous, count = count, self._check_count(where, seal, count)
            chained = check_link(where, seal, last_sha, chained)
            self._check_signature(where, seal)
            self._check_roots(where, seal)
            last_sha, number, self.checked = seal_sha256(seal), number + 1, self.checked + 1
            check_rotation_links(self._keys, seal, last_sha, previous)
        return MonitorState(
            self._state.origin,
            self._checkpoint.size,
            self._checkpoint.root,
            number,
            last_sha,
            chained,
        )

    def _check_state_key(self) -> None:
        """The key the saved state was verified under (its last seal's) must be the key of its
        era in the signed rotations: a new key with no hand-over from it fails here. Before any
        seal, a hand-over at leaf 0 names no seal."""
        if self._state.seals == 0:
            for number, record in self._keys.rotations_at(0):
                if record["prev_seal_sha256"] != "":
                    raise RotationInvalid(
                        f"{WHERE} {number}: a hand-over at leaf_count 0 names no seal",
                        expected="",
                        computed=record["prev_seal_sha256"],
                    )
            return
        where = seal_path(self._state.seals - 1)
        seal = self._fetch(where)
        if seal_sha256(seal) != self._state.last_seal_sha256:
            raise LogForked(
                f"{where} is not the seal verified before: the log rewrote its history",
                expected=self._state.last_seal_sha256,
                computed=seal_sha256(seal),
            )
        if seal["public_key_hex"] != self._keys.seal_key(seal["leaf_count"]):
            raise self._keys.untrusted(
                f"{where} (verified in an earlier run)", seal["public_key_hex"]
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
        expected = self._keys.seal_key(seal["leaf_count"])
        if seal["public_key_hex"] != expected:
            raise self._keys.untrusted(where, seal["public_key_hex"])
        check_seal_signature(seal, nacl.signing.VerifyKey(bytes.fromhex(expected)))
        self._keys.chain.check_seal_era(seal, where)  # by time too: the era by leaf is `expected`

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
