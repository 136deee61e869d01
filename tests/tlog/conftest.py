"""Fixtures of the transparency-log tests: a real ledger with a real key, grown and sealed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nacl.signing
import pytest

from ledger.store import Ledger
from ledger.tlog_store import default_origin, note_verifier_key
from tests.vectors.make_vectors import sample_envelope


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
