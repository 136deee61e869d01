"""The parent of an audit on worker processes only cuts the ledger into blocks of whole lines
(ledger/audit/processes.py `_cuts`), reading the few KiB before each cut. The blocks must cover
exactly the complete lines `jsonl.iter_lines` gives, in order, whatever the line lengths: lines
longer than a block or than the window read back, a torn tail, a snapshot end. A worker takes
its first leaf from the block's first line; a wrong or unreadable claim is checked again from
the real first leaf, so every failure is named under its own leaf."""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from ledger import jsonl
from ledger.audit import processes


def _lines_of_blocks(path: Path, end: int | None) -> list[tuple[int, int, bytes]]:
    data = path.read_bytes()
    found = []
    next_offset = 0
    for offset, length in processes._cuts(path, end):
        assert offset == next_offset  # contiguous, from the start
        block = data[offset : offset + length]
        assert block.endswith(b"\n")
        for line in block.split(b"\n")[:-1]:
            found.append((len(found), offset, line))
            offset += len(line) + 1
        next_offset = offset
    return found


@pytest.mark.parametrize("tail", [b"", b'{"torn'])
def test_blocks_cover_the_complete_lines(tmp_path: Path, monkeypatch, tail: bytes) -> None:
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 64)  # lines shorter, equal and longer
    monkeypatch.setattr(processes, "_WINDOW_BYTES", 16)  # read back in several windows
    lengths = [3, 63, 64, 65, 200, 1, 129, 10, 640, 5]
    lines = [bytes([97 + n % 26]) * length for n, length in enumerate(lengths)]
    path = tmp_path / "axiom_ledger.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines) + tail)
    expected = [(n, off, line) for n, (off, line) in enumerate(jsonl.iter_lines(path))]
    assert [line for _, _, line in expected] == lines
    got = _lines_of_blocks(path, None)
    assert [(n, line) for n, _, line in got] == [(n, line) for n, _, line in expected]
    end = sum(length + 1 for length in lengths[:6])  # a snapshot's end, at a line end
    assert [line for _, _, line in _lines_of_blocks(path, end)] == lines[:6]
    assert list(processes._cuts(path, 0)) == []


def test_an_end_inside_a_line_stops_there(tmp_path: Path, monkeypatch) -> None:
    """An `end` that is not a line end (a caller's size read while a line was being appended)
    ends the blocks at the last complete line before it, as `jsonl.iter_lines` does; it used to
    spin for ever, doubling a read that `end` capped."""
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 64)
    monkeypatch.setattr(processes, "_WINDOW_BYTES", 16)
    lengths = [10, 200, 3, 70]
    path = tmp_path / "axiom_ledger.jsonl"
    path.write_bytes(b"".join(b"x" * length + b"\n" for length in lengths))
    size = path.stat().st_size
    results: dict[int, list[tuple[int, int, bytes]]] = {}

    def walk() -> None:
        for end in range(size + 1):
            results[end] = _lines_of_blocks(path, end)

    walker = threading.Thread(target=walk, daemon=True)
    walker.start()
    walker.join(timeout=30)
    assert not walker.is_alive(), f"_cuts did not finish for end={len(results)}"
    for end in range(size + 1):
        expected = [(n, off, line) for n, (off, line) in enumerate(jsonl.iter_lines(path, end=end))]
        assert results[end] == expected, end


def _sealed_ledger(directory: Path, key) -> Path:
    from ledger.store import Ledger
    from tests.vectors.make_vectors import sample_envelope

    with Ledger.open(directory, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(14)])
        ledger.seal()
    return directory


def _rewrite(directory: Path, change) -> None:
    path = directory / "axiom_ledger.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    change(lines)
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        # Two lines swapped: blocks start with lines claiming another leaf's height.
        (
            lambda lines: lines.__setitem__(slice(5, 11), [*lines[8:11], *lines[5:8]]),
            "AnchorMismatch",
            "leaf 5: ",
        ),
        # A line that is not JSON: a block can start with a line that claims nothing.
        (lambda lines: lines.__setitem__(7, b"not json\n"), "LineInvalid", "leaf 7: not signable"),
        # A line dropped: every later block's first line claims one leaf more than it is.
        (lambda lines: lines.__delitem__(4), "AnchorMismatch", "leaf 4: "),
    ],
)
def test_blocks_whose_first_line_misleads_are_named_at_their_real_leaf(
    tmp_path: Path, key, monkeypatch, change, error: str, message: str
) -> None:
    from ledger import exceptions
    from ledger.audit import audit

    directory = _sealed_ledger(tmp_path / "ledger", key)
    _rewrite(directory, change)
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 2048)  # a line or two a block
    with pytest.raises(getattr(exceptions, error), match=message):
        audit(directory, pubkey_hex=bytes(key.verify_key).hex(), processes=True)


def test_a_worker_checks_a_block_from_the_height_its_first_line_claims(
    tmp_path: Path, key, monkeypatch
) -> None:
    """The guess the parent then holds to: right on a sound ledger, so no block is checked
    twice."""
    from ledger.audit.keys import audit_keys
    from ledger.audit.seals import parse_seals

    directory = _sealed_ledger(tmp_path / "ledger", key)
    seals = parse_seals(list(jsonl.iter_lines(directory / "seals.jsonl")))
    path = directory / "axiom_ledger.jsonl"
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 2048)
    initargs = (audit_keys(directory, None, seals, True), str(directory), str(path))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, context, processes._start, initargs) as worker:
        answers = [
            worker.submit(processes._check_block, None, offset, length).result()
            for offset, length in processes._cuts(path)
        ]
    assert len(answers) > 3
    assert all(a.error is None and type(a.result) is processes.PassedBlock for a in answers)
    counts = [a.count for a in answers]
    assert [a.first for a in answers] == [sum(counts[:i]) for i in range(len(answers))]


def test_a_failure_in_a_block_whose_first_line_lies_is_named_at_the_real_leaf(
    tmp_path: Path, key, monkeypatch
) -> None:
    """A block's first line claiming another height, which breaks its signature: the worker's
    guess names the wrong leaf, so the parent has the block checked again from the real one."""
    from ledger.audit import audit
    from ledger.exceptions import SignatureInvalid

    directory = _sealed_ledger(tmp_path / "ledger", key)
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 2048)
    path = directory / "axiom_ledger.jsonl"
    _first, second_cut, *_rest = processes._cuts(path)
    leaf = path.read_bytes()[: second_cut[0]].count(b"\n")  # the second block's first leaf
    assert 1 <= leaf <= 9 and second_cut[1] > 0
    lie = 8 if leaf == 9 else leaf + 1  # as many digits: the cuts stay where they are

    def claim_another_height(lines: list[bytes]) -> None:
        lines[leaf] = lines[leaf].replace(b'"height":%d,' % leaf, b'"height":%d,' % lie, 1)

    _rewrite(directory, claim_another_height)
    with pytest.raises(SignatureInvalid, match=f"failed: leaf {leaf}: envelope signature"):
        audit(directory, pubkey_hex=bytes(key.verify_key).hex(), processes=True)
