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

from ledger.exceptions import EnvelopeMalformed
from ledger.records.shape import check_envelope_shape
from tests.ledger.conftest import Log
from tests.ledger.monitor.test_capture_records import follow, refused_past_the_writer
from tests.web.corpus_capture import changed
from tests.web.corpus_coverage import BROKEN, BROKEN_ENVELOPE, VALID, later_record, record

RECORDS = {name: record(name, n, **fields) for n, (name, fields) in enumerate(VALID.items())}
LATER = later_record(RECORDS["a day read both ways"])


@pytest.fixture
def followed(log: Log, tmp_path: Path, capsys: pytest.CaptureFixture) -> Path:
    """The log of the corpus's valid coverage records, in two increments, each published and
    monitored; the monitor's state file."""
    state = tmp_path / "state.json"
    records = list(RECORDS.values())
    assert follow(log, state, [records[:1], [*records[1:], LATER]], capsys) == [
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
    signed, err = refused_past_the_writer(log, followed, _broken(wrong), size, capsys)
    with pytest.raises(EnvelopeMalformed) as refused:  # `crovia verify`'s envelope_shape
        check_envelope_shape(signed, anchor=False)
    assert f"check entry failed: leaf {size}: {refused.value.args[0]}" in err
