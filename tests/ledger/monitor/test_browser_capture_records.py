"""`crovia monitor` over a published log holding browser captures (AX.CAPTURE, `mode` "browser"):
the valid records of the differential corpus (tests/web/corpus_browser.py VALID: one of each
verdict, and its edge cases) are entries like any other; each record of its BROKEN, though
signed by the log's key, sealed and published, is refused naming its leaf, and the monitor's
state is left as it was. So the monitor is held to the verdicts `crovia verify` and the page give
the same records (invalid at `envelope_shape`), as tests/ledger/monitor/test_capture_records.py
holds it for plain captures."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ledger.envelope import axiom_id_of
from tests.ledger.conftest import Log
from tests.ledger.monitor.test_capture_records import follow, refused_past_the_writer
from tests.vectors.make_vectors import sample_envelope
from tests.web.corpus_browser import BROKEN, VALID
from tests.web.corpus_capture import capture, changed

ITEM = sample_envelope(1)
RECORDS = {
    name: capture(axiom_id_of(ITEM), outcome, 20 + n, **facts)
    for n, (name, (outcome, facts)) in enumerate(VALID.items())
}


@pytest.fixture
def followed(log: Log, tmp_path: Path, capsys: pytest.CaptureFixture) -> Path:
    """The log of an item and its browser captures, published and monitored; the state file."""
    state = tmp_path / "state.json"
    size = 1 + len(RECORDS)
    verified = follow(log, state, [[ITEM, *RECORDS.values()]], capsys)
    assert verified == [f"size {size}: +{size} entries verified"]
    return state


def test_a_log_of_browser_captures_is_verified(followed: Path) -> None:
    assert orjson.loads(followed.read_bytes())["size"] == 1 + len(RECORDS)


@pytest.mark.parametrize("wrong", sorted(BROKEN))
def test_an_out_of_shape_browser_capture_is_refused_naming_its_leaf(
    log: Log, followed: Path, capsys: pytest.CaptureFixture, wrong: str
) -> None:
    base, change = BROKEN[wrong]
    envelope = {**RECORDS[base], "body": changed(change)(RECORDS[base]["body"])}
    refused_past_the_writer(log, followed, envelope, 1 + len(RECORDS), capsys)
