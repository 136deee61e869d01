"""Fixtures of the ledger tests: real keys, real ledger directories under tmp_path."""

from __future__ import annotations

from pathlib import Path

import nacl.signing
import pytest

from ledger.store import Ledger
from tests.vectors.make_vectors import sample_envelope


@pytest.fixture
def key() -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey.generate()


@pytest.fixture
def ledger_dir(tmp_path: Path) -> Path:
    return tmp_path / "ledger"


@pytest.fixture
def filled(ledger_dir: Path, key: nacl.signing.SigningKey) -> Path:
    """A ledger of 11 leaves sealed at 11, then 3 more unsealed leaves."""
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(11)])
        ledger.seal(run_id="first")
        ledger.issue([sample_envelope(n) for n in range(11, 14)])
    return ledger_dir
