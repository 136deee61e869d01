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

from crovia_spider.cli import main
from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, axiom_id_of, sign_envelope
from ledger.publish import publish
from ledger.store import Ledger
from tests.ledger.conftest import Log
from tests.vectors.make_vectors import sample_envelope
from tests.web.corpus_browser import BROKEN, VALID
from tests.web.corpus_capture import capture, changed

ITEM = sample_envelope(1)
RECORDS = {
    name: capture(axiom_id_of(ITEM), outcome, 20 + n, **facts)
    for n, (name, (outcome, facts)) in enumerate(VALID.items())
}


def monitored(log: Log, state: Path) -> int:
    return main(["monitor", str(log.pub), "--vkey", log.vkey, "--state", str(state)])


@pytest.fixture
def followed(log: Log, tmp_path: Path, capsys: pytest.CaptureFixture) -> Path:
    """The log of an item and its browser captures, published and monitored; the state file."""
    state = tmp_path / "state.json"
    with Ledger.open(log.ledger_dir, signing_key=log.key) as ledger:
        ledger.issue([ITEM, *RECORDS.values()])
        ledger.seal()
    publish(log.ledger_dir, log.pub)
    assert monitored(log, state) == 0
    size = 1 + len(RECORDS)
    assert f"size {size}: +{size} entries verified" in capsys.readouterr().out.splitlines()
    return state


def test_a_log_of_browser_captures_is_verified(followed: Path) -> None:
    assert orjson.loads(followed.read_bytes())["size"] == 1 + len(RECORDS)


@pytest.mark.parametrize("wrong", sorted(BROKEN))
def test_an_out_of_shape_browser_capture_is_refused_naming_its_leaf(
    log: Log, followed: Path, capsys: pytest.CaptureFixture, wrong: str
) -> None:
    base, change = BROKEN[wrong]
    envelope = {**RECORDS[base], "body": changed(change)(RECORDS[base]["body"])}
    size = 1 + len(RECORDS)
    anchors = [{"chain": ANCHOR_CHAIN, "height": size, **ANCHOR_SEE_RECEIPT}]
    line = orjson.dumps(sign_envelope(envelope, anchors, log.key), option=orjson.OPT_SORT_KEYS)
    # appended past the writer (which refuses it), as a signer that let it through would
    with (log.ledger_dir / "axiom_ledger.jsonl").open("ab") as ledger_file:
        ledger_file.write(line + b"\n")
    with Ledger.open(log.ledger_dir, signing_key=log.key) as ledger:
        assert ledger.leaf_count == size + 1
        ledger.seal()
    publish(log.ledger_dir, log.pub)
    before = followed.read_bytes()
    assert monitored(log, followed) == 1
    assert f"check entry failed: leaf {size}: " in capsys.readouterr().err
    assert followed.read_bytes() == before
