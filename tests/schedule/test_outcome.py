"""Reading back what a run appended: a torn tail left by a killed writer hides no later run."""

from __future__ import annotations

import json

from crovia_spider.schedule.outcome import mark, records_since


def test_the_run_after_a_torn_tail_is_still_found(tmp_path):
    runs = tmp_path / "runs.jsonl"
    first = json.dumps({"run_id": "r1"}).encode() + b"\n"
    runs.write_bytes(first + b'{"run_id": "r-killed", "tot')  # a writer killed mid-line
    before = mark(tmp_path)
    # The next writer's recovery cuts the torn tail off, then appends its own record.
    runs.write_bytes(first + json.dumps({"run_id": "r2"}).encode() + b"\n")
    assert records_since(runs, before.runs) == [{"run_id": "r2"}]


def test_a_line_still_being_written_is_left_out(tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(b'{"run_id": "r1"}\n{"run_id": "r2"')
    assert records_since(runs, 0) == [{"run_id": "r1"}]
    assert mark(tmp_path / "absent").runs == 0
