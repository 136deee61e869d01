"""The Ledger API of docs/design.md on real directories: issue, seal, receipt, lookups, runs."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import nacl.signing
import pytest

from ledger.audit import audit
from ledger.canonical import canonical_json
from ledger.exceptions import (
    CanonicalizationError,
    DuplicateAxiom,
    EmptyLedger,
    IndexCorrupt,
    LedgerNotFound,
    NotSealed,
    ReadOnlyLedger,
    UnknownAxiom,
    WriterFailed,
)
from ledger.merkle import leaf_hash, naive_root
from ledger.receipt import verify_receipt
from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


def _lines(directory: Path, name: str = "axiom_ledger.jsonl") -> list[bytes]:
    return (directory / name).read_bytes().splitlines()


def test_issue_appends_one_canonical_signed_line_per_envelope(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(5)])
        assert ledger.leaf_count == 5
    lines = _lines(ledger_dir)
    assert [item.leaf_index for item in issued] == [0, 1, 2, 3, 4]
    for item, line in zip(issued, lines, strict=True):
        envelope = json.loads(line)
        assert canonical_json(envelope) == line
        assert envelope["axiom_id"] == item.axiom_id
        assert leaf_hash(line).hex() == item.leaf_hash
        assert envelope["anchors"] == [
            {
                "chain": "crovia.axiom_ledger",
                "height": item.leaf_index,
                "merkle_proof": "see receipt merkle_proof",
                "root_at_anchor": "see receipt seal.merkle_root",
            }
        ]


def test_seal_covers_the_whole_ledger_and_describes_the_batch(filled: Path, key) -> None:
    first_seal = json.loads(_lines(filled, "seals.jsonl")[0])
    with Ledger.open(filled, signing_key=key) as ledger:
        seal = ledger.seal(run_id="second")
    lines = _lines(filled)
    assert seal["leaf_count"] == 14 and seal["run_id"] == "second"
    assert seal["merkle_root"] == naive_root([leaf_hash(line) for line in lines]).hex()
    batch = [json.loads(line)["body"] for line in lines[11:]]
    assert seal["first_receipt_hash"] == batch[0]["receipt_hash"]
    assert seal["last_receipt_hash"] == batch[-1]["receipt_hash"]
    assert seal["first_collector_run_id"] == batch[0]["spider_record"]["parent_run_hash"]
    assert first_seal["first_receipt_hash"] == json.loads(lines[0])["body"]["receipt_hash"]
    assert json.loads(_lines(filled, "seals.jsonl")[-1]) == seal


def test_sealing_with_no_new_leaves_returns_the_last_seal_and_writes_nothing(
    filled: Path, key
) -> None:
    with Ledger.open(filled, signing_key=key) as ledger:
        seal = ledger.seal()
        assert ledger.seal(run_id="again") == seal
    assert len(_lines(filled, "seals.jsonl")) == 2


def test_an_empty_ledger_cannot_be_sealed(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger, pytest.raises(EmptyLedger):
        ledger.seal()


def test_receipts_bind_to_the_newest_covering_seal(filled: Path, key) -> None:
    with Ledger.open(filled) as reader:
        early = json.loads(_lines(filled)[3])["axiom_id"]
        late = json.loads(_lines(filled)[12])["axiom_id"]
        assert reader.receipt(early)["seal"]["leaf_count"] == 11
        with pytest.raises(NotSealed, match="crovia seal"):
            reader.receipt(late)
        with pytest.raises(UnknownAxiom):
            reader.receipt("axm_" + "0" * 64)
    with Ledger.open(filled, signing_key=key) as ledger:
        ledger.seal()
        public = bytes(key.verify_key).hex()
        for line in _lines(filled):
            receipt = ledger.receipt(json.loads(line)["axiom_id"])
            assert receipt["seal"]["leaf_count"] == 14
            verify_receipt(receipt, pubkey_hex=public)


def test_latest_for_target_finds_the_newest_leaf_of_an_item(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        first = ledger.issue([sample_envelope(1)])[0]
        assert ledger.latest_for_target("https://arxiv.org/abs/2606.00001").leaf_index == 0
        changed = sample_envelope(1, run=2)
        changed["predecessors"] = [first.axiom_id]
        second = ledger.issue([changed])[0]
        entry = ledger.latest_for_target("https://arxiv.org/abs/2606.00001")
        assert entry == (second.axiom_id, changed["body"]["fingerprint"], 1)
        assert ledger.latest_for_target("https://elsewhere/") is None
    with Ledger.open(ledger_dir) as reader:
        assert reader.latest_for_target("https://arxiv.org/abs/2606.00001").leaf_index == 1


def test_a_bad_batch_writes_nothing(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(1)])
        with pytest.raises(DuplicateAxiom):
            ledger.issue([sample_envelope(2), sample_envelope(1)])
        with pytest.raises(DuplicateAxiom):
            ledger.issue([sample_envelope(3), sample_envelope(3)])
        floaty = sample_envelope(4)
        floaty["confidence"]["score"] = 0.5
        with pytest.raises(CanonicalizationError):
            ledger.issue([sample_envelope(5), floaty])
        assert ledger.issue([]) == []
        assert ledger.leaf_count == 1
    assert len(_lines(ledger_dir)) == 1


def test_seal_every_cuts_seals_as_leaves_accumulate(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key, seal_every=4) as ledger:
        for n in range(10):
            ledger.issue([sample_envelope(n)])
    counts = [json.loads(line)["leaf_count"] for line in _lines(ledger_dir, "seals.jsonl")]
    assert counts == [4, 8]


def _ledger_files(directory: Path) -> dict[Path, int]:
    # SQLite's WAL side files (-wal, -shm) are shared-memory plumbing that readers may create.
    return {
        p: p.stat().st_mtime_ns
        for p in directory.rglob("*")
        if not p.name.endswith(("-wal", "-shm"))
    }


def test_a_reader_never_writes(filled: Path) -> None:
    before = _ledger_files(filled)
    with Ledger.open(filled) as reader:
        assert reader.leaf_count == 14 and not reader.writable
        for attempt in (
            lambda: reader.issue([sample_envelope(99)]),
            reader.seal,
            lambda: reader.append_run({}),
            reader.rebuild_index,
        ):
            with pytest.raises(ReadOnlyLedger):
                attempt()
        reader.stats()
    assert _ledger_files(filled) == before


def test_a_reader_of_a_missing_ledger_says_so(tmp_path: Path) -> None:
    with pytest.raises(LedgerNotFound):
        Ledger.open(tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()


def test_maintenance_mode_can_reindex_but_not_sign(filled: Path) -> None:
    with Ledger.open(filled, writer=True) as ledger:
        with pytest.raises(ReadOnlyLedger, match="cannot sign"):
            ledger.seal()
        assert ledger.rebuild_index() == 14


def test_runs_are_durable_canonical_lines(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.append_run({"run": 1, "elapsed_s": 1.25, "title": "é"})
        ledger.append_run({"run": 2})
        assert list(ledger.runs()) == [{"elapsed_s": 1.25, "run": 1, "title": "é"}, {"run": 2}]
        with pytest.raises(ValueError):
            ledger.append_run({"bad": float("nan")})
    assert _lines(ledger_dir, "runs.jsonl")[0] == '{"elapsed_s":1.25,"run":1,"title":"é"}'.encode()


def test_stats(filled: Path) -> None:
    with Ledger.open(filled) as reader:
        stats = reader.stats()
    assert stats["leaves"] == 14 and stats["seals"] == 1 and stats["unsealed_leaves"] == 3
    assert stats["last_seal"]["leaf_count"] == 11 and stats["last_seal"]["run_id"] == "first"
    assert stats["vendors"] == {"arxiv_cs_ai": 9, "openai_news": 5}
    assert stats["runs"] == 0


def test_rebuild_index_restores_lookups_from_the_jsonl(filled: Path, key) -> None:
    os.remove(filled / "index.sqlite")
    for level_file in (filled / "tree").iterdir():
        level_file.write_bytes(b"garbage")
    with Ledger.open(filled, signing_key=key) as ledger:
        assert ledger.leaf_count == 14
        ledger.seal()
        assert ledger.latest_for_target("https://arxiv.org/abs/2606.00013").leaf_index == 13
        receipt = ledger.receipt(json.loads(_lines(filled)[13])["axiom_id"])
    verify_receipt(receipt)


def test_open_is_a_context_manager_that_releases_the_lock(ledger_dir: Path) -> None:
    key = nacl.signing.SigningKey.generate()
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(1)])
    with Ledger.open(ledger_dir, signing_key=key, lock_timeout=0) as again:
        assert again.leaf_count == 1


def test_a_reader_sees_each_leaf_as_soon_as_issue_returns(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as writer:
        writer.issue([sample_envelope(0)])
        with Ledger.open(ledger_dir) as reader:
            for n in range(1, 4):
                assert reader.latest_for_target(f"https://arxiv.org/abs/2606.{n:05d}") is None
                writer.issue([sample_envelope(n)])
                entry = reader.latest_for_target(f"https://arxiv.org/abs/2606.{n:05d}")
                assert entry is not None and entry.leaf_index == n


def test_a_long_lived_reader_proves_what_was_sealed_after_it_opened(filled: Path, key) -> None:
    with Ledger.open(filled) as reader:
        assert reader.leaf_count == 14
        with Ledger.open(filled, signing_key=key) as writer:
            issued = writer.issue([sample_envelope(14)])[0]
            writer.seal()
        assert reader.leaf_count == 15
        assert reader.receipt(issued.axiom_id)["seal"]["leaf_count"] == 15


def test_missing_node_files_ask_for_a_reindex(filled: Path) -> None:
    for level_file in (filled / "tree").iterdir():
        level_file.unlink()
    with Ledger.open(filled) as reader, pytest.raises(IndexCorrupt, match="crovia reindex"):
        reader.receipt(json.loads(_lines(filled)[0])["axiom_id"])


def test_a_failure_after_the_append_stops_the_writer_until_reopened(ledger_dir: Path, key) -> None:
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(0)])
        # a real I/O fault after the lines are durable: the level-0 node file becomes read-only
        read_only = os.open(os.devnull, os.O_RDONLY)
        os.dup2(read_only, ledger._nodes._fds[0])
        os.close(read_only)
        with pytest.raises((OSError, LookupError)):  # the node file reads empty, writes fail
            ledger.issue([sample_envelope(1)])
        with pytest.raises(WriterFailed, match="reopen"):
            ledger.issue([sample_envelope(2)])
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        assert ledger.leaf_count == 2  # the durable line is kept, and recovery indexed it
        ledger.seal()
    audit(ledger_dir)


def test_a_write_the_disk_refuses_leaves_the_writer_usable(ledger_dir: Path) -> None:
    """The failed batch is cut from the file and forgotten by the index and node files alike."""
    child = subprocess.run(
        [sys.executable, "-m", "tests.ledger.store.full_disk_child", str(ledger_dir)],
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(child.stdout)
    assert report["errno"] == errno.EFBIG and report["after"] == report["before"]
    assert report["issued"] == [1, 2]  # numbered after the one durable leaf, not the lost batch
    assert [json.loads(line)["anchors"][0]["height"] for line in _lines(ledger_dir)] == [0, 1, 2]
    with Ledger.open(ledger_dir) as reader:
        assert reader.leaf_count == 3
        assert reader.latest_for_target("https://arxiv.org/abs/2606.00005") is None
        assert reader.latest_for_target("https://arxiv.org/abs/2606.00101").leaf_index == 2
    assert audit(ledger_dir).leaves == 3


@pytest.mark.parametrize("bad", [0, 50, 99])
def test_a_bad_envelope_anywhere_in_a_large_batch_writes_nothing(
    ledger_dir: Path, key, bad: int
) -> None:
    """Large batches are signed on two threads; either one's failure fails the whole batch."""
    batch = [sample_envelope(n) for n in range(100)]
    batch[bad]["confidence"]["score"] = 0.5
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        with pytest.raises(CanonicalizationError):
            ledger.issue(batch)
        assert ledger.leaf_count == 0
        batch[bad] = sample_envelope(bad)
        assert [item.leaf_index for item in ledger.issue(batch)] == list(range(100))
    assert [json.loads(line)["anchors"][0]["height"] for line in _lines(ledger_dir)] == list(
        range(100)
    )
