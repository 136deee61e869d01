"""Golden vectors: small ledgers, their receipts, and systematic mutations of them and of the seed.

Each mutation changes one signed, hashed, proven or fixed field of a valid receipt (or flips one bit
of a signature, swaps a path side, lengthens or shortens the path, moves leaf_index or leaf_count)
and names the check that must reject it. A receipt sealed by TEST_KEY also gets the mutations only
a key holder can make, its seal signed again: another seal schema, kind or family, and a path
pairing the last node of an odd level with another hash than itself (duplicate_last).

The tests import these functions; to write the vectors out for another verifier (one receipt per
file, plus mutations.jsonl):

    .venv/bin/python -m tests.vectors.make_vectors OUT_DIR
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import nacl.signing

from ledger import merkle
from ledger.canonical import canonical_json
from ledger.envelope import new_envelope
from ledger.merkle import tree_height
from ledger.seal import SEAL_FIXED_VALUES, seal_signed_bytes
from ledger.store import Ledger

SEED_RECEIPT = Path(__file__).with_name("seed_axiom_proof.json")
# A fixed, PUBLIC key: the vectors must be reproducible. Never sign anything real with it.
TEST_KEY = nacl.signing.SigningKey(hashlib.sha256(b"crovia test vectors: not a secret").digest())
LEDGER_SIZES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17)

# The check a changed value must trip, by the longest matching path prefix ("*" = any list index).
# None: nothing signs or derives that field (ledger_path, urls, the OTS url/time); documented.
EXPECTED: dict[tuple[Any, ...], str | None] = {
    ("_canonicalization",): "receipt_shape",
    ("schema",): "receipt_shape",
    ("axiom_id",): "axiom_id",
    ("bitcoin_anchor",): "bitcoin_anchor",
    ("bitcoin_anchor", "ots_url"): None,
    ("bitcoin_anchor", "stamped_at"): None,
    ("envelope",): "axiom_id",
    ("envelope", "anchors"): "envelope_signature",
    ("envelope", "signature"): "envelope_signature",
    ("ledger", "leaf_hash"): "leaf_hash",
    ("ledger", "leaf_index"): "merkle_path",
    ("ledger", "ledger_path"): None,
    ("merkle_proof",): "merkle_path",
    ("merkle_proof", "path", "*", "sibling"): "merkle_root",
    ("seal",): "seal_signature",
    ("seal", "merkle_root"): "merkle_root",
    ("seal", "public_key_hex"): "envelope_signature",  # the seal's key also verifies the envelope
    ("seal", "sealed_at"): "receipt_shape",  # "...Zx" is no UTC time: refused before signatures
    # the reference seal's fixed values (docs/format.md "Seal"), held before any signature
    ("seal", "schema"): "receipt_shape",
    ("seal", "seal_family_version"): "receipt_shape",
    ("seal", "seal_kind"): "receipt_shape",
    ("trust_root",): "trust_root",
    ("trust_root", "url"): None,
    ("verifier", "spec"): None,
    ("verifier", "url"): "verifier_url",
}


class Mutation(NamedTuple):
    """A changed receipt and the check that must reject it (None: must still verify)."""

    name: str
    receipt: dict[str, Any]
    check: str | None


def seed_receipt() -> dict[str, Any]:
    return json.loads(SEED_RECEIPT.read_bytes())


def sample_record(number: int, *, run: int = 0) -> dict[str, Any]:
    """A deterministic 17-field spider_record (unicode, escapes and newlines included)."""
    fingerprint = hashlib.sha256(f"item {number}".encode()).hexdigest()
    return {
        "axiom_subtype": "news.vendor_press.v1",
        "category": "news",
        "decision_hint": "POSITIVE",
        "envelope_target": "AX.OBS",
        "fingerprint": fingerprint,
        "observed_at": f"2026-06-18T04:{number // 60 % 60:02d}:{number % 60:02d}.219665Z",
        "parent_run_hash": hashlib.sha256(f"run {run}".encode()).hexdigest(),
        "published": "Thu, 18 Jun 2026 00:00:00 -0400",
        "runtime_version": "0.1.0",
        "schema": "spider.news.vendor_press.v1",
        "source_status": 200,
        "source_url": "https://export.arxiv.org/rss/cs.AI",
        "spider": "vendor_press",
        "summary_excerpt": f'Résumé {number}: "quoted" \\ back\nslash, 69--77\\% — ✓ 😀',
        "title": f"Item {number}: Ünïcode title",
        "url": f"https://arxiv.org/abs/2606.{number:05d}",
        "vendor": "arxiv_cs_ai" if number % 3 else "openai_news",
    }


def sample_envelope(number: int, *, run: int = 0) -> dict[str, Any]:
    return new_envelope(sample_record(number, run=run), issued_at="2026-06-18T04:43:37Z")


def build_ledger(directory: Path, size: int) -> list[dict[str, Any]]:
    """A sealed ledger of `size` leaves signed by TEST_KEY; returns the receipt of every leaf."""
    with Ledger.open(directory, signing_key=TEST_KEY) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(size)])
        ledger.seal(run_id=f"vectors_{size}")
        return [ledger.receipt(item.axiom_id) for item in issued]


def mutations(receipt: dict[str, Any]) -> Iterator[Mutation]:
    """Every systematic mutation of `receipt`, each with the check that must reject it."""
    yield from _value_changes(receipt)
    yield from _signature_bit_flips(receipt)
    yield from _path_changes(receipt)
    yield from _count_changes(receipt)
    yield from _structural_changes(receipt)
    if receipt["seal"]["public_key_hex"] == bytes(TEST_KEY.verify_key).hex():
        yield from _resealed_changes(receipt)


def _value_changes(receipt: dict[str, Any]) -> Iterator[Mutation]:
    for path, value in _scalars(receipt, ()):
        changed = copy.deepcopy(receipt)
        _set(changed, path, _changed(value))
        yield Mutation("change " + ".".join(map(str, path)), changed, _expected(receipt, path))


def _signature_bit_flips(receipt: dict[str, Any]) -> Iterator[Mutation]:
    for where, prefix, check in (
        (("envelope", "signature"), "ed25519:", "envelope_signature"),
        (("seal", "signature"), "", "seal_signature"),
    ):
        raw = bytes.fromhex(_get(receipt, where)[len(prefix) :])
        for bit in range(len(raw) * 8):
            flipped = bytearray(raw)
            flipped[bit // 8] ^= 1 << (bit % 8)
            changed = copy.deepcopy(receipt)
            _set(changed, where, prefix + flipped.hex())
            yield Mutation(f"flip bit {bit} of {'.'.join(where)}", changed, check)


def _path_changes(receipt: dict[str, Any]) -> Iterator[Mutation]:
    steps = receipt["merkle_proof"]["path"]
    for level in range(len(steps)):
        changed = copy.deepcopy(receipt)
        step = changed["merkle_proof"]["path"][level]
        step["side"] = "right" if step["side"] == "left" else "left"
        yield Mutation(f"swap side of path[{level}]", changed, "merkle_path")
    longer = copy.deepcopy(receipt)
    longer["merkle_proof"]["path"].append({"sibling": "00" * 32, "side": "right"})
    yield Mutation("path length + 1", longer, "merkle_path")
    if steps:
        shorter = copy.deepcopy(receipt)
        shorter["merkle_proof"]["path"].pop()
        yield Mutation("path length - 1", shorter, "merkle_path")


def _count_changes(receipt: dict[str, Any]) -> Iterator[Mutation]:
    index, count = receipt["ledger"]["leaf_index"], receipt["seal"]["leaf_count"]
    for delta in (-1, 1):
        if index + delta >= 0:
            changed = copy.deepcopy(receipt)
            changed["ledger"]["leaf_index"] = index + delta
            yield Mutation(f"leaf_index {delta:+d}", changed, "merkle_path")
        if count + delta >= 1:
            changed = copy.deepcopy(receipt)
            changed["seal"]["leaf_count"] = count + delta
            yield Mutation(f"leaf_count {delta:+d}", changed, _count_check(receipt, count + delta))
    changed = copy.deepcopy(receipt)
    changed["seal"]["leaf_count"] = index  # the leaf just outside the tree
    yield Mutation("leaf_count = leaf_index", changed, "merkle_path")


def _count_check(receipt: dict[str, Any], new_count: int) -> str:
    """A new leaf_count breaks the path's shape or its duplicate_last siblings, or else only the
    seal signature."""
    index, count = receipt["ledger"]["leaf_index"], receipt["seal"]["leaf_count"]
    if index >= new_count or tree_height(new_count) != tree_height(count):
        return "merkle_path"
    if _unpaired_levels(receipt, new_count):
        return "merkle_path"
    return "seal_signature"


def _unpaired_levels(receipt: dict[str, Any], count: int) -> list[int]:
    """The levels where the tree of `count` leaves pairs the path's node with itself but the
    receipt's path gives another sibling."""
    index = receipt["ledger"]["leaf_index"]
    duplicated = set(merkle.duplicated_levels(index, count))
    current, wrong = bytes.fromhex(receipt["ledger"]["leaf_hash"]), []
    for level, step in enumerate(receipt["merkle_proof"]["path"]):
        sibling = bytes.fromhex(step["sibling"])
        if level in duplicated and sibling != current:
            wrong.append(level)
        pair = (sibling, current) if step["side"] == merkle.LEFT else (current, sibling)
        current = merkle.node_hash(*pair)
    return wrong


def _resealed_changes(receipt: dict[str, Any]) -> Iterator[Mutation]:
    """What only the holder of TEST_KEY can make: the seal changed and signed again."""
    for name in SEAL_FIXED_VALUES:
        changed = copy.deepcopy(receipt)
        changed["seal"][name] = _changed(changed["seal"][name])
        yield Mutation(f"{name} changed, seal signed again", _resign(changed), "receipt_shape")
    index, count = receipt["ledger"]["leaf_index"], receipt["seal"]["leaf_count"]
    for level in merkle.duplicated_levels(index, count):
        changed = copy.deepcopy(receipt)
        changed["merkle_proof"]["path"][level]["sibling"] = hashlib.sha256(b"other").hexdigest()
        steps = [(bytes.fromhex(s["sibling"]), s["side"]) for s in changed["merkle_proof"]["path"]]
        leaf = bytes.fromhex(receipt["ledger"]["leaf_hash"])
        changed["seal"]["merkle_root"] = merkle.root_from_path(leaf, index, steps).hex()
        name = f"path[{level}] pairs the last node of an odd level with another hash, sealed"
        yield Mutation(name, _resign(changed), "merkle_path")


def _resign(receipt: dict[str, Any]) -> dict[str, Any]:
    seal = receipt["seal"]
    seal["signature"] = TEST_KEY.sign(seal_signed_bytes(seal)).signature.hex()
    return receipt


def _structural_changes(receipt: dict[str, Any]) -> Iterator[Mutation]:
    for key in receipt:
        changed = copy.deepcopy(receipt)
        del changed[key]
        yield Mutation(f"remove {key}", changed, "receipt_shape")
    changed = copy.deepcopy(receipt)
    changed["extra"] = 1
    yield Mutation("add a top-level key", changed, "receipt_shape")
    changed = copy.deepcopy(receipt)
    changed["envelope"]["confidence"]["score"] = 0.5
    yield Mutation("a float in the envelope", changed, "receipt_shape")
    changed = copy.deepcopy(receipt)
    changed["bitcoin_anchor"]["bitcoin_attestations"] = [{"height": 1}]
    yield Mutation("claim a bitcoin attestation", changed, "bitcoin_anchor")


def _scalars(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _scalars(value, (*path, key))
    elif isinstance(node, list) and node:
        for index, value in enumerate(node):
            yield from _scalars(value, (*path, index))
    else:
        yield path, node


def _changed(value: Any) -> Any:
    """A different value of the same JSON type (hex stays hex, so shape checks still pass)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        if value and value[-1] in "0123456789abcdef":
            return value[:-1] + ("1" if value[-1] == "0" else "0")
        return {"left": "right", "right": "left"}.get(value, value + "x")
    if isinstance(value, list):
        return ["x"]
    if isinstance(value, dict):
        return {"x": "x"}
    return "x"


def _expected(receipt: dict[str, Any], path: tuple[Any, ...]) -> str | None:
    if path[:2] == ("seal", "leaf_count"):
        return _count_check(receipt, receipt["seal"]["leaf_count"] + 1)
    if path[:2] == ("merkle_proof", "path") and path[-1] == "side":
        return "merkle_path"
    if path[:2] == ("merkle_proof", "path") and path[-1] == "sibling":
        duplicated = merkle.duplicated_levels(
            receipt["ledger"]["leaf_index"], receipt["seal"]["leaf_count"]
        )
        # the node's own sibling (duplicate_last) at that level or above: it no longer is
        if any(level >= path[2] for level in duplicated):
            return "merkle_path"
    pattern = tuple("*" if isinstance(part, int) else part for part in path)
    for length in range(len(pattern), 0, -1):
        if pattern[:length] in EXPECTED:
            return EXPECTED[pattern[:length]]
    raise KeyError(f"no expectation for {path}")


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def _set(node: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(node, path[:-1])[path[-1]] = value


def main(out_dir: str) -> None:
    """Write small ledgers' receipts and every mutation (of the seed and of two receipts)."""
    out = Path(out_dir)
    bases = {"seed": seed_receipt()}
    for size in LEDGER_SIZES:
        receipts = build_ledger(out / f"ledger_{size}", size)
        for receipt in receipts:
            (out / f"receipt_{size}_{receipt['ledger']['leaf_index']}.json").write_bytes(
                canonical_json(receipt)
            )
        bases[f"ledger_{size}_last"] = receipts[-1]
    with open(out / "mutations.jsonl", "wb") as lines:
        for base_name, base in bases.items():
            for mutation in mutations(base):
                record = {"base": base_name, "name": mutation.name, "check": mutation.check}
                # json.dumps, not canonical_json: one mutation carries a float on purpose
                text = json.dumps({**record, "receipt": mutation.receipt}, sort_keys=True)
                lines.write(text.encode() + b"\n")
    print(f"vectors written to {out} (public key {bytes(TEST_KEY.verify_key).hex()})")


if __name__ == "__main__":
    main(sys.argv[1])
