"""A publisher killed in the middle of a file leaves no torn file visible; the next one repairs."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ledger.monitor import DirectorySource, MonitorState, monitor
from ledger.publish import TEMP_PREFIX, publish
from tests.ledger.conftest import Log

PROJECT = Path(__file__).resolve().parents[3]


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


def kill_mid_write(log: Log, target: int) -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.ledger.publish.publish_child",
            str(log.ledger_dir),
            str(log.pub),
            str(target),
        ],
        cwd=PROJECT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "torn"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdin.close()
        child.stdout.close()


@pytest.mark.parametrize("victim", ["tile/", "tile/entries/", "seals/", "checkpoint"])
def test_a_crash_mid_publish_leaves_no_torn_file_and_the_next_publish_repairs(
    log: Log, tmp_path: Path, victim: str
) -> None:
    log.grow(300)
    publish(log.ledger_dir, log.pub)
    first = MonitorState.empty(log.origin)
    _, at_300 = monitor(DirectorySource(log.pub), log.vkey, first)
    before = files(log.pub)
    log.grow(500)
    shutil.copytree(log.pub, tmp_path / "expected")
    written = publish(log.ledger_dir, tmp_path / "expected").written
    after = files(tmp_path / "expected")

    # the write that dies: the first of the victim's kind (each file is one os.write)
    kill_mid_write(log, 1 + next(i for i, p in enumerate(written) if p.startswith(victim)))
    assert list(log.pub.rglob(f"{TEMP_PREFIX}*"))  # the torn write is there, under a temp name
    for name, data in files(log.pub).items():
        assert data in (before.get(name), after[name]), name  # old or new, never torn
    report, same = monitor(DirectorySource(log.pub), log.vkey, at_300)
    assert report.size == 300 and same == at_300  # readers still see the old log, whole

    assert publish(log.ledger_dir, log.pub).previous_size == 300
    assert not list(log.pub.rglob(f"{TEMP_PREFIX}*"))
    assert files(log.pub) == after
    report, _ = monitor(DirectorySource(log.pub), log.vkey, at_300)
    assert (report.size, report.entries) == (800, 500)
