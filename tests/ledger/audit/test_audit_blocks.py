"""The parent of an audit on worker processes only cuts the ledger into blocks of whole lines and
counts them (ledger/audit/processes.py `_blocks`): it reads each block once at its own offset,
without carrying bytes over. The blocks must cover exactly the complete lines `jsonl.iter_lines`
gives, with the right first leaf index, whatever the line lengths: lines longer than a block, a
torn tail, a snapshot end."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ledger import jsonl
from ledger.audit import processes


def _lines_of_blocks(path: Path, end: int | None) -> list[tuple[int, int, bytes]]:
    data = path.read_bytes()
    found = []
    for start, offset, length in processes._blocks(path, end):
        block = data[offset : offset + length]
        assert block.endswith(b"\n")
        for i, line in enumerate(block.split(b"\n")[:-1]):
            found.append((start + i, offset, line))
            offset += len(line) + 1
    return found


@pytest.mark.parametrize("tail", [b"", b'{"torn'])
def test_blocks_cover_the_complete_lines(tmp_path: Path, monkeypatch, tail: bytes) -> None:
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 64)  # lines shorter, equal and longer
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
    assert list(processes._blocks(path, 0)) == []


def test_an_end_inside_a_line_stops_there(tmp_path: Path, monkeypatch) -> None:
    """An `end` that is not a line end (a caller's size read while a line was being appended)
    ends the blocks at the last complete line before it, as `jsonl.iter_lines` does; it used to
    spin for ever, doubling a read that `end` capped."""
    monkeypatch.setattr(processes, "_BLOCK_BYTES", 64)
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
    assert not walker.is_alive(), f"_blocks did not finish for end={len(results)}"
    for end in range(size + 1):
        expected = [(n, off, line) for n, (off, line) in enumerate(jsonl.iter_lines(path, end=end))]
        assert results[end] == expected, end
