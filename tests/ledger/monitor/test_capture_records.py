"""`crovia monitor` over a published log holding capture records (AX.CAPTURE): the captures of an
item's page, one of each outcome, are entries like any other ("+N entries verified"); a capture
record whose body breaks a rule of capture_problem, though signed by the log's key, sealed and
published, is refused naming its leaf, and the monitor's state is left as it was. The records and
the broken bodies are the differential corpus's (tests/web/corpus_capture.py), so the monitor is
held to the same verdicts as `crovia verify` and the page."""

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
from tests.web.corpus_capture import BROKEN, BROKEN_ENVELOPE, OUTCOMES, capture_chain, changed

ITEM = sample_envelope(1)
CHAIN = dict(zip(OUTCOMES, capture_chain(axiom_id_of(ITEM)), strict=True))


def monitored(log: Log, state: Path) -> int:
    return main(["monitor", str(log.pub), "--vkey", log.vkey, "--state", str(state)])


def follow(
    log: Log, state: Path, increments: list[list[dict]], capsys: pytest.CaptureFixture
) -> list[str]:
    """Each increment issued, sealed, published and monitored (exit 0), the monitor's state in
    `state`; the lines it printed of the entries it verified."""
    for increment in increments:
        with Ledger.open(log.ledger_dir, signing_key=log.key) as ledger:
            ledger.issue(increment)
            ledger.seal()
        publish(log.ledger_dir, log.pub)
        assert monitored(log, state) == 0
    return [line for line in capsys.readouterr().out.splitlines() if "entries verified" in line]


def refused_past_the_writer(
    log: Log, state: Path, envelope: dict, size: int, capsys: pytest.CaptureFixture
) -> tuple[dict, str]:
    """`envelope` signed by the log's key as leaf `size` and appended past the writer (which
    refuses it), as a signer that let it through would, then sealed and published: the monitor
    refuses it naming its leaf, and its state in `state` is left as it was. The signed envelope
    and what the monitor said on stderr."""
    anchors = [{"chain": ANCHOR_CHAIN, "height": size, **ANCHOR_SEE_RECEIPT}]
    signed = sign_envelope(envelope, anchors, log.key)
    with (log.ledger_dir / "axiom_ledger.jsonl").open("ab") as ledger_file:
        ledger_file.write(orjson.dumps(signed, option=orjson.OPT_SORT_KEYS) + b"\n")
    with Ledger.open(log.ledger_dir, signing_key=log.key) as ledger:
        assert ledger.leaf_count == size + 1
        ledger.seal()
    publish(log.ledger_dir, log.pub)
    before = state.read_bytes()
    assert monitored(log, state) == 1
    err = capsys.readouterr().err
    assert f"check entry failed: leaf {size}: " in err
    assert state.read_bytes() == before
    return signed, err


@pytest.fixture
def followed(log: Log, tmp_path: Path, capsys: pytest.CaptureFixture) -> Path:
    """The log of an item and the first capture of its page, then of the five captures after it,
    each increment published and monitored; the monitor's state file."""
    state = tmp_path / "state.json"
    increments = [[ITEM, CHAIN["first"]], list(CHAIN.values())[1:]]
    assert follow(log, state, increments, capsys) == [
        "size 2: +2 entries verified",
        "size 7: +5 entries verified",
    ]
    return state


def test_a_log_of_capture_records_is_verified(followed: Path) -> None:
    assert orjson.loads(followed.read_bytes())["size"] == 7


def _broken(wrong: str) -> dict:
    """The unsigned record of the corpus case `wrong`: a body out of shape (BROKEN) or an
    envelope that names another page or time than its body (BROKEN_ENVELOPE)."""
    if wrong in BROKEN:
        base, change = BROKEN[wrong]
        return {**CHAIN[base], "body": changed(change)(CHAIN[base]["body"])}
    base, section, field, value = BROKEN_ENVELOPE[wrong]
    return {**CHAIN[base], section: {**CHAIN[base][section], field: value}}


@pytest.mark.parametrize("wrong", [*sorted(BROKEN), *sorted(BROKEN_ENVELOPE)])
def test_an_out_of_shape_capture_record_is_refused_naming_its_leaf(
    log: Log, followed: Path, capsys: pytest.CaptureFixture, wrong: str
) -> None:
    refused_past_the_writer(log, followed, _broken(wrong), 7, capsys)
