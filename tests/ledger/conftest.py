"""Fixtures of the ledger tests: real keys, real ledger directories under tmp_path, and (for the
publish and monitor rooms) a real ledger with its published directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nacl.signing
import pytest

from ledger.store import Ledger, default_origin, note_verifier_key
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


@dataclass
class Log:
    """A ledger directory, its key, and its published directory."""

    ledger_dir: Path
    pub: Path
    key: nacl.signing.SigningKey

    @property
    def origin(self) -> str:
        return default_origin(bytes(self.key.verify_key))

    @property
    def vkey(self) -> str:
        return note_verifier_key(bytes(self.key.verify_key), self.origin)

    def grow(self, count: int, *, seal: bool = True, tag: int = 0) -> int:
        """Issue `count` new leaves (seal them unless told not to); return the leaf count."""
        with Ledger.open(self.ledger_dir, signing_key=self.key) as ledger:
            start = ledger.leaf_count
            envelopes = [sample_envelope(n, run=tag) for n in range(start, start + count)]
            ledger.issue(envelopes)
            if seal:
                ledger.seal()
            return ledger.leaf_count


@pytest.fixture
def log(tmp_path: Path) -> Log:
    return Log(tmp_path / "ledger", tmp_path / "pub", nacl.signing.SigningKey.generate())
