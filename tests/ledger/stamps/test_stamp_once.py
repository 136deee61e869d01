"""A TSA or calendar that fails or hangs is asked once per run, however many seals wait (issue 19,
obs 10): a hanging TSA costs one timeout, not one per seal; the others still stamp every seal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crovia_spider.demo_tsa import OpenSslTsa, TestPki, closed_port_url
from ledger.keys import generate_signing_key
from ledger.store import Ledger
from tests.ledger.stamps.conftest import crovia
from tests.vectors.make_vectors import sample_envelope

SEALS = 5


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    """A ledger of SEALS seals, none stamped, with its key where `crovia` looks for it."""
    key = generate_signing_key(tmp_path / "keys" / "signing.key")
    with Ledger.open(tmp_path / "ledger", signing_key=key) as ledger:
        for number in range(SEALS):
            ledger.issue([sample_envelope(number)])
            ledger.seal()
    return tmp_path


def attempts(base: Path) -> list[dict]:
    path = base / "ledger/stamps/attempts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("mode", ["hang", "garbage"])
def test_a_failing_tsa_is_asked_once_per_run_and_a_good_one_stamps_every_seal(
    sealed: Path, pki: TestPki, mode: str
) -> None:
    with OpenSslTsa(pki, mode=mode) as bad, OpenSslTsa(pki) as good:
        proc = crovia(sealed, "stamp", "--timeout", "1", CROVIA_TSA_URLS=f"{bad.url},{good.url}")
        assert proc.returncode == 0, proc.stderr
        assert bad.hits == 1, proc.stdout
        assert good.hits == SEALS
    assert f"{SEALS} RFC 3161 tokens kept" in proc.stdout
    assert f"{SEALS - 1} request(s) skipped" in proc.stdout
    assert [a["url"] for a in attempts(sealed)] == [bad.url]


def test_a_calendar_that_is_down_or_hangs_is_asked_once_per_run(sealed: Path, pki) -> None:
    down = closed_port_url()
    with OpenSslTsa(pki, mode="hang") as hanging:  # hangs on any POST, as a calendar too
        calendars = f"{down},{hanging.url}"
        proc = crovia(sealed, "stamp", "--timeout", "1", CROVIA_OTS_CALENDARS=calendars)
        assert proc.returncode == 0, proc.stderr
        assert hanging.hits == 1
    assert sorted(a["url"] for a in attempts(sealed)) == sorted([down, hanging.url])
    assert f"{2 * (SEALS - 1)} request(s) skipped" in proc.stdout
