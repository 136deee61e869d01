"""The RFC 6962 tree against transparency-dev/merkle's vectors, and Hypothesis properties."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.tlog import rfc6962
from ledger.tlog.exceptions import ConsistencyProofInvalid, InclusionProofInvalid
from ledger.tlog.rfc6962 import CompactRange, MemoryNodes

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "c2sp" / "rfc6962"
TREE = json.loads((VECTORS / "tree.json").read_text())
LEAVES = [rfc6962.leaf_hash(bytes.fromhex(h)) for h in TREE["leaf_inputs_hex"]]


def _vectors(kind: str) -> list[Path]:
    found = sorted((VECTORS / kind).rglob("*.json"))
    assert len(found) > 40  # the copy is complete
    return found


def _b64(text: str) -> bytes:
    return base64.b64decode(text)


@pytest.mark.parametrize("path", _vectors("inclusion"), ids=lambda p: str(p.relative_to(VECTORS)))
def test_inclusion_vector(path: Path) -> None:
    case = json.loads(path.read_text())
    args = (case["leafIdx"], case["treeSize"], _b64(case["leafHash"]))
    proof, root = [_b64(h) for h in case["proof"] or []], _b64(case["root"])
    if case["wantErr"]:
        with pytest.raises(InclusionProofInvalid):
            rfc6962.verify_inclusion(*args, proof, root)
    else:
        rfc6962.verify_inclusion(*args, proof, root)


@pytest.mark.parametrize("path", _vectors("consistency"), ids=lambda p: str(p.relative_to(VECTORS)))
def test_consistency_vector(path: Path) -> None:
    case = json.loads(path.read_text())
    args = (case["size1"], case["size2"], _b64(case["root1"]), _b64(case["root2"]))
    proof = [_b64(h) for h in case["proof"] or []]
    if case["wantErr"]:
        with pytest.raises(ConsistencyProofInvalid):
            rfc6962.verify_consistency(*args, proof)
    else:
        rfc6962.verify_consistency(*args, proof)


def test_happy_path_proofs_are_the_ones_we_generate() -> None:
    """Our prover gives the vectors' exact proofs (same tree: tree.json's 8 leaves)."""
    nodes = MemoryNodes(LEAVES)
    for path in (VECTORS / "inclusion").glob("*/happy-path.json"):
        case = json.loads(path.read_text())
        made = rfc6962.inclusion_proof(case["leafIdx"], case["treeSize"], nodes)
        assert made == [_b64(h) for h in case["proof"] or []], path
    for path in (VECTORS / "consistency").glob("*/happy-path.json"):
        case = json.loads(path.read_text())
        made = rfc6962.consistency_proof(case["size1"], case["size2"], nodes)
        assert made == [_b64(h) for h in case["proof"] or []], path


def test_every_root_of_tree_json() -> None:
    nodes = MemoryNodes()
    compact = CompactRange()
    for size, want in enumerate(TREE["root_hash_by_size_hex"]):
        assert rfc6962.root_of(LEAVES[:size]).hex() == want
        assert rfc6962.root_at(size, nodes).hex() == want
        assert compact.root().hex() == want
        assert CompactRange.at(size, nodes).root().hex() == want
        if size < len(LEAVES):
            nodes.append(LEAVES[size])
            compact.append(LEAVES[size])


def test_complete_nodes_are_the_duplicate_last_trees_nodes() -> None:
    """Why the ledger's stored nodes serve both trees: a complete node is the same in each."""
    from ledger import merkle

    leaves = [rfc6962.leaf_hash(bytes([n])) for n in range(16)]
    assert rfc6962.root_of(leaves) == merkle.naive_root(leaves)
    assert rfc6962.root_of(leaves[:8]) == merkle.naive_root(leaves[:8])
    assert rfc6962.root_of(leaves[:5]) != merkle.naive_root(leaves[:5])  # the right edges differ


def test_prover_refuses_impossible_requests() -> None:
    nodes = MemoryNodes(LEAVES)
    for index, size in ((0, 0), (8, 8), (-1, 3)):
        with pytest.raises(ValueError):
            rfc6962.inclusion_proof(index, size, nodes)
    for old, new in ((0, 3), (4, 3)):
        with pytest.raises(ValueError):
            rfc6962.consistency_proof(old, new, nodes)
    with pytest.raises(LookupError):
        rfc6962.root_at(9, nodes)


def test_refusal_names_expected_and_computed_roots() -> None:
    nodes = MemoryNodes(LEAVES)
    proof = rfc6962.inclusion_proof(2, 8, nodes)
    with pytest.raises(InclusionProofInvalid) as caught:
        rfc6962.verify_inclusion(2, 8, LEAVES[2], proof, bytes(32))
    assert caught.value.expected == bytes(32).hex()
    assert caught.value.computed == rfc6962.root_at(8, nodes).hex()
    assert caught.value.check == "tlog_inclusion"


_TREES: dict[int, MemoryNodes] = {}


def _tree(size: int) -> MemoryNodes:
    if size not in _TREES:
        _TREES[size] = MemoryNodes([rfc6962.leaf_hash(n.to_bytes(4, "big")) for n in range(size)])
    return _TREES[size]


@st.composite
def _inclusion(draw: st.DrawFn) -> tuple[int, int]:
    size = draw(st.integers(1, 300))
    return draw(st.integers(0, size - 1)), size


@st.composite
def _consistency(draw: st.DrawFn) -> tuple[int, int]:
    new = draw(st.integers(1, 300))
    return draw(st.integers(1, new)), new


@settings(max_examples=150, deadline=None)
@given(_inclusion(), st.data())
def test_any_inclusion_proof_verifies_and_any_flipped_bit_breaks_it(
    case: tuple[int, int], data: st.DataObject
) -> None:
    index, size = case
    nodes = _tree(size)
    leaf, root = nodes.node(0, index), rfc6962.root_at(size, nodes)
    assert root == rfc6962.root_of([nodes.node(0, n) for n in range(size)])
    proof = rfc6962.inclusion_proof(index, size, nodes)
    rfc6962.verify_inclusion(index, size, leaf, proof, root)
    parts = [leaf, *proof, root]
    which = data.draw(st.integers(0, len(parts) - 1))
    bit = data.draw(st.integers(0, 255))
    parts[which] = _flip(parts[which], bit)
    with pytest.raises(InclusionProofInvalid):
        rfc6962.verify_inclusion(index, size, parts[0], parts[1:-1], parts[-1])


@settings(max_examples=150, deadline=None)
@given(_consistency(), st.data())
def test_any_consistency_proof_verifies_and_any_flipped_bit_breaks_it(
    case: tuple[int, int], data: st.DataObject
) -> None:
    old, new = case
    nodes = _tree(new)
    old_root, new_root = rfc6962.root_at(old, nodes), rfc6962.root_at(new, nodes)
    proof = rfc6962.consistency_proof(old, new, nodes)
    rfc6962.verify_consistency(old, new, old_root, new_root, proof)
    parts = [old_root, new_root, *proof]
    which = data.draw(st.integers(0, len(parts) - 1))
    parts[which] = _flip(parts[which], data.draw(st.integers(0, 255)))
    with pytest.raises(ConsistencyProofInvalid):
        rfc6962.verify_consistency(old, new, parts[0], parts[1], parts[2:])


@settings(max_examples=100, deadline=None)
@given(_consistency(), st.integers(1, 300))
def test_a_proof_for_other_sizes_is_refused(case: tuple[int, int], other: int) -> None:
    old, new = case
    nodes = _tree(max(new, other))
    proof = rfc6962.consistency_proof(old, new, nodes)
    if other != new:
        with pytest.raises(ConsistencyProofInvalid):
            rfc6962.verify_consistency(
                old, other, rfc6962.root_at(old, nodes), rfc6962.root_at(other, nodes), proof
            )


def _flip(digest: bytes, bit: int) -> bytes:
    changed = bytearray(digest)
    changed[bit // 8] ^= 1 << (bit % 8)
    return bytes(changed)
