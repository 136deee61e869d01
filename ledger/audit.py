"""`crovia audit`: re-check a whole ledger directory in one streaming pass.

Every line: canonical form, axiom_id, ed25519 signature, leaf hash (folded into an in-memory
frontier of O(log n) nodes); every seal: signature, key and the Merkle root at its leaf_count.
Batches of lines are checked on a thread pool: PyNaCl releases the GIL while verifying, so both
cores work. Only a bounded number of batches is in flight, so memory stays constant whatever the
ledger's size.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nacl.exceptions
import nacl.signing
import orjson

from ledger import jsonl, merkle
from ledger.canonical import check_signable, encode_checked
from ledger.envelope import axiom_id_of
from ledger.exceptions import (
    AxiomIdMismatch,
    CanonicalizationError,
    LedgerNotFound,
    LineInvalid,
    RootMismatch,
    SealInvalid,
    SealSignatureInvalid,
    UntrustedKey,
    VerificationError,
)
from ledger.keychain import KeyChain, ledger_key_chain
from ledger.keys import parse_pin
from ledger.reader import LEDGER_FILE, ROTATIONS_FILE, SEALS_FILE
from ledger.rotation import parse_rotation_lines
from ledger.seal import SEAL_KEY_SETS
from ledger.tlog_audit import SealChain, check_checkpoints, check_rfc6962_root
from ledger.tree import MemoryFrontier
from ledger.verify import check_envelope_signature, check_seal_signature

BATCH_LINES = 256


@dataclass(frozen=True)
class AuditReport:
    """What a passing audit covered."""

    leaves: int
    seals: int
    public_key_hex: str | None
    key_pinned: bool
    seconds: float
    torn_tail: bool
    key_rotations: int = 0

    @property
    def signatures_checked(self) -> bool:
        return self.public_key_hex is not None


def audit(
    directory: str | Path,
    *,
    pubkey_hex: str | None = None,
    workers: int = 2,
    progress: Callable[[int], None] | None = None,
) -> AuditReport:
    """Check every leaf and seal of the ledger at `directory`; return a report or raise.

    The envelope key is `pubkey_hex` if given (then every seal must carry it too, else
    UntrustedKey), else the first seal's key; with neither, signatures cannot be checked and the
    report's `public_key_hex` is None. With rotations.jsonl, each leaf and seal is checked under
    the key of its era (ledger/keychain.py) and `pubkey_hex` may be any key of the chain.
    Without `pubkey_hex` (`key_pinned` False) a pass shows the ledger is consistent under
    whatever key its first seal names, not who signed it: a ledger re-signed wholesale under
    another key passes too. Raises InvalidPublicKey for a malformed `pubkey_hex`. Raises the
    VerificationError of the first bad leaf or seal, its message naming the leaf index or seal
    number; LedgerNotFound when there is no ledger file.
    """
    pubkey_hex = parse_pin(pubkey_hex, None)[0]
    directory = Path(directory)
    ledger_file = directory / LEDGER_FILE
    if not ledger_file.exists():
        raise LedgerNotFound(f"no ledger at {directory}")
    started = time.monotonic()
    seals = parse_seals(list(jsonl.iter_lines(directory / SEALS_FILE)))
    rotations = parse_rotation_lines(
        [line for _, line in jsonl.iter_lines(directory / ROTATIONS_FILE)]
    )
    chain = ledger_key_chain(rotations, [seal for _number, seal in seals], pubkey_hex)
    key_hex = None if chain is None else pubkey_hex or chain.keys[0]
    checker = _SealChecker(seals, chain)
    frontier, leaves = MemoryFrontier(), 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for digests in _checked_batches(pool, ledger_file, chain, workers):
            for digest in digests:
                merkle.append_leaf(frontier, leaves, digest)
                leaves += 1
                checker.at(leaves, frontier)
            if progress is not None:
                progress(leaves)
    checker.finish(leaves)
    check_checkpoints(directory, [seal for _number, seal in seals])
    torn = ledger_file.stat().st_size != jsonl.complete_size(ledger_file)
    elapsed = time.monotonic() - started
    return AuditReport(
        leaves, len(seals), key_hex, pubkey_hex is not None, elapsed, torn, len(rotations)
    )


def check_line(line: bytes, leaf_index: int, key: nacl.signing.VerifyKey | None) -> bytes:
    """Check one ledger line; return its leaf hash. Raises the VerificationError naming the leaf."""
    try:
        envelope = orjson.loads(line)
        check_signable(envelope)
        canonical = encode_checked(envelope)
    except (orjson.JSONDecodeError, CanonicalizationError) as exc:
        raise LineInvalid(f"leaf {leaf_index}: not signable JSON ({exc})") from None
    if canonical != line or type(envelope) is not dict:
        raise LineInvalid(f"leaf {leaf_index}: line is not in canonical form")
    computed = axiom_id_of(envelope)
    if envelope.get("axiom_id") != computed:
        raise AxiomIdMismatch(
            f"leaf {leaf_index}: axiom_id", expected=envelope.get("axiom_id"), computed=computed
        )
    if key is not None:
        _check_signature(envelope, leaf_index, key)
    return merkle.leaf_hash(line)


def _check_signature(
    envelope: dict[str, Any], leaf_index: int, key: nacl.signing.VerifyKey
) -> None:
    _located(f"leaf {leaf_index}", lambda: check_envelope_signature(envelope, key))


def _located(where: str, check: Callable[[], object]) -> None:
    """Run one of the verifier's checks; on failure, the same error prefixed with `where`."""
    try:
        check()
    except VerificationError as exc:
        raise type(exc)(
            f"{where}: {exc.args[0]}", expected=exc.expected, computed=exc.computed
        ) from None


def _checked_batches(
    pool: ThreadPoolExecutor, ledger_file: Path, key: KeyChain | None, workers: int
) -> Iterator[list[bytes]]:
    """Leaf hashes batch by batch, in ledger order, with at most 2 * workers batches in flight."""
    in_flight: deque[Future[list[bytes]]] = deque()
    for start, lines in _batches(ledger_file):
        in_flight.append(pool.submit(_check_batch, lines, start, key))
        if len(in_flight) >= 2 * workers:
            yield in_flight.popleft().result()
    while in_flight:
        yield in_flight.popleft().result()


def _check_batch(lines: list[bytes], start: int, chain: KeyChain | None) -> list[bytes]:
    """Each leaf under the key of its era (ledger/rotation.py)."""
    return [
        check_line(line, start + i, chain and chain.verify_key_for_leaf(start + i))
        for i, line in enumerate(lines)
    ]


def _batches(ledger_file: Path) -> Iterator[tuple[int, list[bytes]]]:
    batch: list[bytes] = []
    start = 0
    for _offset, line in jsonl.iter_lines(ledger_file):
        batch.append(line)
        if len(batch) == BATCH_LINES:
            yield start, batch
            start, batch = start + len(batch), []
    if batch:
        yield start, batch


class _SealChecker:
    """Checks each seal when the leaf stream reaches its leaf_count."""

    def __init__(self, seals: list[tuple[int, dict[str, Any]]], chain: KeyChain | None) -> None:
        self._seals = deque(seals)
        self._previous_count = 0
        expected = chain.seal_keys([seal for _number, seal in seals]) if chain else []
        seal_chain = SealChain()
        for (number, seal), key_hex in zip(seals, expected, strict=True):  # before any leaf
            self._check_key(number, seal, key_hex)
            seal_chain.check(number, seal)

    def at(self, leaf_count: int, frontier: MemoryFrontier) -> None:
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
        if self._seals:
            number, seal = self._seals[0]
            raise SealInvalid(
                f"seals.jsonl line {number} covers leaf_count {seal['leaf_count']}, not a"
                f" count the ledger passed through in order (it has {leaf_count} leaves)"
            )

    def _check(self, number: int, seal: dict[str, Any]) -> None:
        count = seal["leaf_count"]
        if count <= self._previous_count:
            raise SealInvalid(f"seals.jsonl line {number}: leaf_count {count!r} does not grow")
        self._previous_count = count
        public = seal["public_key_hex"]
        try:
            key = nacl.signing.VerifyKey(bytes.fromhex(public))
        except ValueError:
            raise SealSignatureInvalid(
                f"seals.jsonl line {number}: public_key_hex is not an ed25519 key",
                computed=public,
            ) from None
        _located(f"seals.jsonl line {number}", lambda: check_seal_signature(seal, key))

    def _check_key(self, number: int, seal: dict[str, Any], key_hex: str) -> None:
        public = seal["public_key_hex"]
        if public != key_hex:
            raise UntrustedKey(
                f"seals.jsonl line {number}: signed by another key",
                expected=key_hex,
                computed=public,
            )


def parse_seals(seal_lines: list[tuple[int, bytes]]) -> list[tuple[int, dict[str, Any]]]:
    """(line number from 1, seal) for each line; SealInvalid for one that is not a seal object."""
    seals = []
    for number, (_offset, line) in enumerate(seal_lines, start=1):
        try:
            seal = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise SealInvalid(f"seals.jsonl line {number} is not JSON") from None
        if not isinstance(seal, dict) or frozenset(seal) not in SEAL_KEY_SETS:
            raise SealInvalid(f"seals.jsonl line {number} does not have a seal's fields")
        for name, kind in _SEAL_TYPES.items():
            if type(seal[name]) is not kind:
                raise SealInvalid(f"seals.jsonl line {number}: {name} is not {kind.__name__}")
        seals.append((number, seal))
    return seals


_SEAL_TYPES = {
    "leaf_count": int,
    "merkle_root": str,
    "public_key_hex": str,
    "key_id": str,
    "signature": str,
}
