"""The transparency-log part of `crovia audit`: the seal chain, the seals' RFC 6962 roots, and
the stored checkpoints, all checked with the pure code of ledger/tlog/.

- Chain: each seal carrying `prev_seal_sha256` names the sha256 of the previous seal's signed
  bytes ("" for the first seal), and once one seal carries it every later one must: a deleted,
  reordered or altered seal line breaks the chain at the first line after the change.
- Roots: a seal's `rfc6962_root` is the RFC 6962 root of the leaves at its leaf_count.
- Checkpoints: each line of tlog/checkpoints.jsonl is a note signed by the seal's key under one
  origin, for the size and root of a seal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ledger.seal import seal_sha256
from ledger.store.tlog_store import (
    CHECKPOINTS_PATH,
    CheckpointStore,
    StoredCheckpoint,
    checkpoint_of,
)
from ledger.tlog import rfc6962
from ledger.tlog.checkpoint import open_checkpoint
from ledger.tlog.exceptions import (
    CheckpointMismatch,
    Rfc6962RootMismatch,
    SealChainBroken,
    TlogCheckFailed,
)
from ledger.tlog.note import Ed25519Verifier


class SealChain:
    """Feed it the seals in file order; it raises at the first broken link."""

    def __init__(self) -> None:
        self._previous: Mapping[str, Any] | None = None
        self._chained = False

    def check(self, number: int, seal: Mapping[str, Any]) -> None:
        """Raises SealChainBroken naming seals.jsonl line `number`."""
        where = f"seals.jsonl line {number}"
        self._chained = check_link(where, seal, seal_sha256(self._previous), self._chained)
        self._previous = seal


def check_link(where: str, seal: Mapping[str, Any], previous_sha256: str, chained: bool) -> bool:
    """Hold `seal` to the chain: it names the seal before it (`previous_sha256`, "" for none) and,
    once a seal was chained, every later one is too. Returns whether the chain has begun; raises
    SealChainBroken naming `where`. The audit and the monitor share it."""
    named = seal.get("prev_seal_sha256")
    if named is None and chained:
        raise SealChainBroken(f"{where}: an unchained seal after a chained one")
    if named is not None and named != previous_sha256:
        raise SealChainBroken(
            f"{where} does not name the seal before it: a seal was dropped, changed or reordered",
            expected=previous_sha256,
            computed=named,
        )
    return chained or named is not None


def check_rfc6962_root(number: int, seal: Mapping[str, Any], source: rfc6962.NodeSource) -> None:
    """Raises Rfc6962RootMismatch unless the seal's rfc6962_root (if any) is the leaves' root."""
    if "rfc6962_root" not in seal:
        return
    computed = rfc6962.root_at(seal["leaf_count"], source).hex()
    if seal["rfc6962_root"] != computed:
        raise Rfc6962RootMismatch(
            f"seals.jsonl line {number} (leaf_count {seal['leaf_count']}): rfc6962_root",
            expected=seal["rfc6962_root"],
            computed=computed,
        )


def check_checkpoints(
    directory: Path, seals: Iterable[Mapping[str, Any]], end: int | None = None
) -> int:
    """Check tlog/checkpoints.jsonl (its first `end` bytes, if given) against the (already
    verified) seals; return how many.

    Raises CheckpointMismatch naming the line: a note that does not verify under its seal's key,
    another size or root than its seal, no seal at its size, or a change of origin.
    """
    by_count = {s["leaf_count"]: s for s in seals if "rfc6962_root" in s}
    origin, checked = None, 0
    for number, stored in enumerate(CheckpointStore(directory, end), start=1):
        where = f"{CHECKPOINTS_PATH} line {number}"
        seal = by_count.get(stored.leaf_count)
        if seal is None:
            raise CheckpointMismatch(f"{where}: no seal with an rfc6962_root at its size")
        origin = origin or _origin(stored, where)
        verifier = Ed25519Verifier(origin, bytes.fromhex(seal["public_key_hex"]))
        try:
            checkpoint, _note = open_checkpoint(stored.note, origin, [verifier])
        except TlogCheckFailed as exc:
            raise CheckpointMismatch(f"{where}: {exc}") from None
        if checkpoint != checkpoint_of(seal, origin):
            raise CheckpointMismatch(
                f"{where}: not the checkpoint of its seal",
                expected=checkpoint_of(seal, origin),
                computed=checkpoint,
            )
        checked += 1
    return checked


def _origin(stored: StoredCheckpoint, where: str) -> str:
    """The log's origin, from its first checkpoint: every later one must name the same."""
    try:
        return stored.checkpoint.origin
    except TlogCheckFailed as exc:
        raise CheckpointMismatch(f"{where}: {exc}") from None
