"""The Merkle inclusion check of a receipt, with the CVE-2012-2459 guards of docs/format.md.

`leaf_index < leaf_count`, a path of exactly ceil(log2 leaf_count) steps whose sides are the bits
of the index, siblings of 64 hex, the node itself as its sibling wherever duplicate_last pairs it
with itself (the last node of a level of odd node count), and the path leading to the sealed
root. Part of ledger/receipt/verify.py's checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ledger import merkle
from ledger.exceptions import ProofMalformed, RootMismatch
from ledger.receipt.build import MERKLE_PROOF_PARAMS

_HEX64 = re.compile(r"[0-9a-f]{64}")


def check_path(receipt: Mapping[str, Any]) -> str:
    """The path from `ledger.leaf_hash` leads to `seal.merkle_root`; else ProofMalformed or
    RootMismatch. The receipt has passed the shape check."""
    proof, seal = receipt["merkle_proof"], receipt["seal"]
    index, count = receipt["ledger"]["leaf_index"], seal["leaf_count"]
    params = {k: proof.get(k) for k in MERKLE_PROOF_PARAMS}
    if params != MERKLE_PROOF_PARAMS:
        raise ProofMalformed(
            "merkle_proof parameters", expected=MERKLE_PROOF_PARAMS, computed=params
        )
    if not 0 <= index < count:
        raise ProofMalformed("leaf_index < leaf_count", expected=f"< {count}", computed=index)
    steps = _path_steps(proof.get("path"), index, merkle.tree_height(count))
    leaf = bytes.fromhex(receipt["ledger"]["leaf_hash"])
    computed = _fold(leaf, index, count, steps).hex()
    if computed != seal["merkle_root"]:
        raise RootMismatch(
            "path does not lead to seal.merkle_root",
            expected=seal["merkle_root"],
            computed=computed,
        )
    return "merkle_path"


def _path_steps(path: object, index: int, height: int) -> list[tuple[bytes, str]]:
    if not isinstance(path, list) or len(path) != height:
        computed = len(path) if isinstance(path, list) else type(path).__name__
        raise ProofMalformed(
            "path length = ceil(log2 leaf_count)", expected=height, computed=computed
        )
    steps = []
    for level, step in enumerate(path):
        side = merkle.LEFT if (index >> level) & 1 else merkle.RIGHT
        if not isinstance(step, dict) or set(step) != {"sibling", "side"}:
            raise ProofMalformed(f"path[{level}] shape", expected="{sibling, side}", computed=step)
        if step["side"] != side:
            raise ProofMalformed(
                f"path[{level}].side = bit {level} of leaf_index",
                expected=side,
                computed=step["side"],
            )
        if not isinstance(step["sibling"], str) or not _HEX64.fullmatch(step["sibling"]):
            raise ProofMalformed(
                f"path[{level}].sibling is 64 hex", expected="64 hex", computed=step["sibling"]
            )
        steps.append((bytes.fromhex(step["sibling"]), side))
    return steps


def _fold(leaf: bytes, index: int, count: int, steps: list[tuple[bytes, str]]) -> bytes:
    """The root the path leads to; ProofMalformed where the path pairs the last node of an odd
    level with another hash than itself (a tree of more leaves than the signed `leaf_count`)."""
    duplicated = set(merkle.duplicated_levels(index, count))
    current = leaf
    for level, (sibling, side) in enumerate(steps):
        if level in duplicated and sibling != current:
            raise ProofMalformed(
                f"path[{level}].sibling is the node itself: node {index >> level} is the last of"
                f" an odd level of a tree of {count} leaves (duplicate_last)",
                expected=current.hex(),
                computed=sibling.hex(),
            )
        current = (
            merkle.node_hash(sibling, current)
            if side == merkle.LEFT
            else merkle.node_hash(current, sibling)
        )
    return current
