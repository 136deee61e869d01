"""Differential-corpus cases of duplicate_last (issue 47, item 8c; docs/format.md "Ledger leaf and
Merkle tree"): where a level of the tree of `leaf_count` leaves has an odd node count and the
path's node is its last, the node is paired with itself, so the path's sibling there must be the
node itself. A seal pairing it with another hash commits to a tree of more leaves than the
`leaf_count` it signs (the CVE-2012-2459 pitfall the leaf count is there to close); `crovia
verify` and the page refuse it at `merkle_path`.

Only a key holder can make such a seal, so each is signed again by TEST_KEY: the root it signs is
exactly what the path leads to, and only the duplicate_last rule can refuse it. Genuine receipts
on the right edge (duplicated at one level and at two), and the reference receipt (duplicated at
levels 13 and 14), are the controls.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ledger import merkle
from tests.vectors.make_vectors import TEST_KEY, build_ledger, seed_receipt
from tests.web import corpus as c
from tests.web.corpus_eras import resealed


def forged_sibling(receipt: dict[str, Any], level: int, sibling: bytes) -> dict[str, Any]:
    """`receipt` with path[level]'s sibling replaced, the root recomputed and the seal signed
    again by TEST_KEY over that root."""
    out = copy.deepcopy(receipt)
    out["merkle_proof"]["path"][level]["sibling"] = sibling.hex()
    steps = [(bytes.fromhex(s["sibling"]), s["side"]) for s in out["merkle_proof"]["path"]]
    leaf = bytes.fromhex(out["ledger"]["leaf_hash"])
    root = merkle.root_from_path(leaf, out["ledger"]["leaf_index"], steps)
    return resealed(out, TEST_KEY, merkle_root=root.hex())


def hostile_cases(work: Path, pki: Any) -> list[c.Expected]:
    """The cases, from ledgers of 5, 6, 8 and 13 leaves in `work` (`pki` is not needed)."""
    del pki
    pin = c.trust_root(TEST_KEY)
    five = build_ledger(work / "five", 5)
    six = build_ledger(work / "six", 6)
    eight = build_ledger(work / "eight", 8)
    thirteen = build_ledger(work / "thirteen", 13)
    seed = seed_receipt()
    assert merkle.duplicated_levels(4, 5) == [0, 1]
    assert merkle.duplicated_levels(12, 13) == [0, 1]
    valid = [
        ("leaf 4 of 5 (its own sibling at levels 0 and 1)", five[4], pin),
        ("leaf 12 of 13 (its own sibling at levels 0 and 1)", thirteen[12], pin),
        ("leaf 3 of 5 (no duplicated level on its path)", five[3], pin),
        ("leaf 4 of 6", six[4], pin),
        ("the reference receipt (levels 13 and 14)", seed,
         c.trust_root(seed["seal"]["public_key_hex"])),
    ]  # fmt: skip
    other = merkle.leaf_hash(b"a leaf the seal's count leaves out")
    invalid = [
        # a tree of 6 leaves sealed as 5: leaf 4's sibling at level 0 is leaf 5, not itself
        ("leaf 4 of 6, sealed as 5 leaves", resealed(six[4], TEST_KEY, leaf_count=5)),
        # a tree of 8 sealed as 6: at level 1 node 2 is the last of 3, paired with node 3
        ("leaf 4 of 8, sealed as 6 leaves", resealed(eight[4], TEST_KEY, leaf_count=6)),
        ("leaf 5 of 8, sealed as 6 leaves", resealed(eight[5], TEST_KEY, leaf_count=6)),
        # a tree of 13 sealed as 9 over a 16-leaf root: leaf 8 is last at levels 0 to 3
        ("leaf 8 of 13, sealed as 9 leaves", resealed(thirteen[8], TEST_KEY, leaf_count=9)),
        ("leaf 4 of 5, another level-0 sibling", forged_sibling(five[4], 0, other)),
        ("leaf 4 of 5, another level-1 sibling", forged_sibling(five[4], 1, other)),
        ("leaf 12 of 13, another level-1 sibling", forged_sibling(thirteen[12], 1, other)),
    ]
    return [
        *(c.Expected(name, receipt, p, "valid", None) for name, receipt, p in valid),
        *(c.Expected(name, r, pin, "invalid", "merkle_path") for name, r in invalid),
    ]
