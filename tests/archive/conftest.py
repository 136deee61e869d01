"""Fixtures of the export tests: one real, sealed ledger of captures (tests/archive/captures.py)
for the whole directory, copied where a test changes it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.archive.captures import CaptureLedger, build


@pytest.fixture(scope="session")
def made(tmp_path_factory: pytest.TempPathFactory) -> CaptureLedger:
    return build(tmp_path_factory.mktemp("captures") / "ledger")


@pytest.fixture
def copied(made: CaptureLedger, tmp_path: Path) -> CaptureLedger:
    """The same ledger, copied into this test's directory (to change it)."""
    directory = tmp_path / "ledger"
    shutil.copytree(made.directory, directory)
    return CaptureLedger(directory, made.key, made.items, made.captures, made.blobs)
