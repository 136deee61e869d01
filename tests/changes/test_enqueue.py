"""Enqueueing change events for several targets: each target's message says of an event what
one `crovia changes` says of it, whatever the number of targets (crovia_spider/notify/run.py)."""

from __future__ import annotations

import json

from crovia_spider.notify.config import NotifyConfig, Target
from crovia_spider.notify.outbox import Endpoint, Outbox, endpoint_id
from crovia_spider.notify.run import Settings, enqueue
from ledger.changes import RemovalRule, derive_changes, with_diff
from tests.archive.captures import build

UNREAD = "the kept texts cannot be read"


def test_an_edit_whose_text_is_gone_says_so_once_to_every_target(tmp_path):
    made = build(tmp_path / "ledger")
    directory = made.directory
    (edited,) = [e for e in derive_changes(directory) if e.kind == "edited"]
    (kept,) = (directory / "bodies").rglob(f"{edited.old_text}*")
    kept.unlink()  # crovia audit --bodies would name it; the event says it cannot be read
    said = with_diff(edited, directory).detail
    assert said.count(UNREAD) == 1
    targets = tuple(Target("webhook", f"https://hook{n}.example/crovia") for n in range(3))
    box = Outbox(directory / "notify")
    for target in targets:  # known endpoints, told of everything after leaf -1
        box.endpoints[endpoint_id(target.kind, target.url)] = Endpoint(target.kind, target.url)
    settings = Settings(key_file=tmp_path / "notify.key", rule=RemovalRule())
    assert enqueue(box, directory, NotifyConfig(targets), settings) == 9  # 3 events, 3 targets
    details = [
        json.loads(m.body)["data"]["detail"] for m in box.messages.values() if m.kind == "edited"
    ]
    assert details == [said] * 3


def test_with_diff_leaves_the_event_as_it_was(tmp_path):
    made = build(tmp_path / "ledger")
    (edited,) = [e for e in derive_changes(made.directory) if e.kind == "edited"]
    before = edited.detail
    (made.directory / "bodies" / edited.old_text[:2] / f"{edited.old_text}.gz").unlink()
    once = with_diff(edited, made.directory)
    assert edited.detail == before and once.detail.startswith(before + "; " + UNREAD)
    assert with_diff(edited, made.directory).detail == once.detail
