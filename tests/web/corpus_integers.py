"""Differential-corpus cases of the integer range (issue 47, item 8a; docs/format.md "Canonical
JSON"): a receipt holds integers from -2**63 to 2**64 - 1 inclusive (orjson's range, i64 below
zero and u64 above), in `crovia verify` and the page alike; one past either end is refused at
`canonical_bytes`, whatever the rest of the receipt.

The integers sit in an item's `body` (the body is open: docs/format.md "relayed items"), signed,
sealed and proved by TEST_KEY, so the in-range receipt is valid and the out-of-range ones differ
from it by one digit only: no other check can be what refuses them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ledger.canonical import canonical_json
from ledger.envelope import new_envelope
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_record
from tests.web import corpus as c
from tests.web.corpus_eras import resealed

INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
# 2**53 + 1 is the first integer a JavaScript number cannot hold: the page keeps it as a BigInt.
EXTREMES = {"n_max": INT_MAX, "n_min": INT_MIN, "n_past_double": 2**53 + 1, "n_zero": 0}


def _receipt(work: Path) -> dict[str, Any]:
    envelope = new_envelope(sample_record(7), body_extra=EXTREMES, issued_at="2026-06-18T04:43:37Z")
    with Ledger.open(work / "integers", signing_key=TEST_KEY) as ledger:
        (issued,) = ledger.issue([envelope])
        ledger.seal(run_id="corpus_integers")
        return ledger.receipt(issued.axiom_id)


def _respelled(data: bytes, key: str, new: str) -> bytes:
    """`data` with the integer of its one key `key` spelled `new` instead."""
    start = data.index(f'"{key}":'.encode()) + len(key) + 3
    assert data.count(f'"{key}":'.encode()) == 1, key
    end = start + 1
    while data[end : end + 1].isdigit():
        end += 1
    return data[:start] + new.encode() + data[end:]


def hostile_cases(work: Path, pki: Any) -> list[c.Expected]:
    """The cases, from a one-leaf ledger in `work` (`pki` is not needed)."""
    del pki
    receipt = _receipt(work)
    data = canonical_json(receipt)
    pin = c.trust_root(TEST_KEY)
    refused = (
        ("2**64 (one past the top)", "n_max", str(2**64)),
        ("-2**63 - 1 (one past the bottom)", "n_min", str(INT_MIN - 1)),
        ("2**65", "n_max", str(2**65)),
        ("a 21-digit integer", "n_max", "1" + "0" * 20),
        ("-0 (canonical JSON writes 0)", "n_zero", "-0"),
    )
    wide = resealed(receipt, TEST_KEY, leaf_count=INT_MAX)
    too_wide = _respelled(canonical_json(wide), "leaf_count", str(2**64))
    return [
        c.Expected("integers at both ends of the range, signed", receipt, pin, "valid", None),
        *(
            c.Expected(f"an item body integer of {name}", _respelled(data, old, new), pin,
                       "invalid", "canonical_bytes")
            for name, old, new in refused
        ),
        # the same range for the receipt's own integers: a leaf count of 2**64 - 1 is read (its
        # path must then have 64 steps), one of 2**64 is not JSON a receipt may hold
        c.Expected("a seal of 2**64 - 1 leaves", wide, pin, "invalid", "merkle_path"),
        c.Expected("a seal of 2**64 leaves", too_wide, pin, "invalid", "canonical_bytes"),
    ]  # fmt: skip
