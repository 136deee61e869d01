"""`crovia monitor` over a published log holding coverage records (AX.COVERAGE): the valid records
of the differential corpus (tests/web/corpus_coverage.py), one of each state and edge, are entries
like any other ("+N entries verified"); a coverage record whose body breaks a rule of
coverage_problem, or whose envelope breaks its tie to the body, though signed by the log's key,
sealed and published, is refused naming its leaf and the rule `crovia verify` names (its
envelope_shape check, the page's too), and the monitor's state is left as it was. The records and
the broken bodies are the corpus's, so the monitor is held to the same verdicts as `crovia verify`
and the page."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from crovia_spider.cli import main
from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, axiom_id_of, sign_envelope
from ledger.exceptions import EnvelopeMalformed
from ledger.publish import publish
from ledger.records.shape import check_envelope_shape
from ledger.store import Ledger
from tests.ledger.conftest import Log
from tests.web.corpus_capture import changed
from tests.web.corpus_coverage import BROKEN, BROKEN_ENVELOPE, VALID, record

RECORDS = {name: record(name, n, **fields) for n, (name, fields) in enumerate(VALID.items())}
LATER = record(
    "a later record of the first day",
    50,
    rss={"state": "read", "fetches": RECORDS["a day read both ways"]["body"]["rss"]["fetches"]},
    predecessors=[axiom_id_of(RECORDS["a day read both ways"])],
)


def monitored(log: Log, state: Path) -> int:
    return main(["monitor", str(log.pub), "--vkey", log.vkey, "--state", str(state)])


@pytest.fixture
def followed(log: Log, tmp_path: Path, capsys: pytest.CaptureFixture) -> Path:
    """The log of the corpus's valid coverage records, in two increments, each published and
    monitored; the monitor's state file."""
    state = tmp_path / "state.json"
    records = list(RECORDS.values())
    for increment in (records[:1], [*records[1:], LATER]):
        with Ledger.open(log.ledger_dir, signing_key=log.key) as ledger:
            ledger.issue(increment)
            ledger.seal()
        publish(log.ledger_dir, log.pub)
        assert monitored(log, state) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line for line in printed if "entries verified" in line] == [
        "size 1: +1 entries verified",
        f"size {len(RECORDS) + 1}: +{len(RECORDS)} entries verified",
    ]
    return state


def test_a_log_of_coverage_records_is_verified(followed: Path) -> None:
    assert orjson.loads(followed.read_bytes())["size"] == len(RECORDS) + 1


def _broken(wrong: str) -> dict:
    """The unsigned record of the corpus case `wrong`: a body out of shape (BROKEN) or an
    envelope whose tie to its body is broken (BROKEN_ENVELOPE)."""
    if wrong in BROKEN:
        base, change = BROKEN[wrong]
        return {**RECORDS[base], "body": changed(change)(RECORDS[base]["body"])}
    section, field, value = BROKEN_ENVELOPE[wrong]
    base = RECORDS["a day read both ways"]
    return {**base, section: {**base[section], field: value}}


@pytest.mark.parametrize("wrong", [*sorted(BROKEN), *sorted(BROKEN_ENVELOPE)])
def test_an_out_of_shape_coverage_record_is_refused_naming_its_leaf_and_rule(
    log: Log, followed: Path, capsys: pytest.CaptureFixture, wrong: str
) -> None:
    size = len(RECORDS) + 1
    anchors = [{"chain": ANCHOR_CHAIN, "height": size, **ANCHOR_SEE_RECEIPT}]
    signed = sign_envelope(_broken(wrong), anchors, log.key)
    with pytest.raises(EnvelopeMalformed) as refused:  # `crovia verify`'s envelope_shape
        check_envelope_shape(signed, anchor=False)
    line = orjson.dumps(signed, option=orjson.OPT_SORT_KEYS)
    # appended past the writer (which refuses it), as a signer that let it through would
    with (log.ledger_dir / "axiom_ledger.jsonl").open("ab") as ledger_file:
        ledger_file.write(line + b"\n")
    with Ledger.open(log.ledger_dir, signing_key=log.key) as ledger:
        assert ledger.leaf_count == size + 1
        ledger.seal()
    publish(log.ledger_dir, log.pub)
    before = followed.read_bytes()
    assert monitored(log, followed) == 1
    err = capsys.readouterr().err
    assert f"check entry failed: leaf {size}: " in err
    assert f"check entry failed: leaf {size}: {refused.value.args[0]}" in err
    assert followed.read_bytes() == before
