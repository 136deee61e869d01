"""A restarted sequencer reads back what its run signed (remote.signed_by_run), in one pass past
the run's ledger offset: the feeds of its fetch records and the pages of its capture records.
A line it cannot read as such (not JSON, another run, a field of the wrong type: a list where a
URL belongs) is passed over, never a crash of the sequencer (crovia audit names such lines)."""

from __future__ import annotations

import orjson

from crovia_spider.spiders.remote import signed_by_run

RUN = "a" * 64


def line(axiom_type: str, **body) -> bytes:
    return orjson.dumps({"axiom_type": axiom_type, "body": body}) + b"\n"


def test_what_the_run_signed_is_read_back_and_unreadable_lines_are_passed_over(tmp_path):
    ledger = tmp_path / "axiom_ledger.jsonl"
    before = line("AX.FETCH", run=RUN, feed_url="https://lab.example/before.xml")
    ledger.write_bytes(
        before
        + line("AX.FETCH", run=RUN, feed_url="https://lab.example/feed.xml")
        + line("AX.FETCH", run="b" * 64, feed_url="https://lab.example/other.xml")
        + line("AX.FETCH", run=RUN, feed_url=["https://lab.example/list.xml"])
        + line("AX.CAPTURE", run=RUN, url="https://lab.example/a", item="i1", outcome="first")
        + line("AX.CAPTURE", run=RUN, url=["https://lab.example/b"], item="i2", outcome="first")
        + line("AX.CAPTURE", run=RUN, url="https://lab.example/c", outcome="first")
        + b'{"axiom_type":"AX.FETCH","body":"'
        + RUN.encode()
        + b'"}\n'
        + b"not json "
        + RUN.encode()
        + b" AX.FETCH\n"
    )
    fetches, captures = signed_by_run(ledger, len(before), RUN)
    assert fetches == {"https://lab.example/feed.xml"}
    assert captures == {("https://lab.example/a", "i1"): "first"}
