"""The outbox: durable, at-least-once delivery of change events (docs/watching.md).

Kept in `<ledger dir>/notify/outbox.json`, replaced atomically (written, fsynced, renamed, the
directory fsynced) before each send and after each answer, under `notify.lock` (one deliverer at
a time). It holds each endpoint (its cursor: the leaf of the newest event it was given; whether
a 410 disabled it) and each message: its id, its body (the exact bytes every attempt sends), its
attempts, when it is next due, and how it ended. A message's id is derived from its endpoint and
its event (`msg_` and 32 hex), so a crash between a send and the save after it sends the same
message again with the same `webhook-id`, never another: the receiver's idempotency key holds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from crovia_spider.runs.feed_state import save_json

OUTBOX_DIR = "notify"
OUTBOX_FILE = "outbox.json"
LOCK_FILE = "notify.lock"
SCHEMA = "crovia.notify_outbox.v1"
PENDING, DELIVERED, GAVE_UP = "pending", "delivered", "gave_up"
DELIVERED_KEPT = 1000  # delivered messages kept for `crovia notify status`


def endpoint_id(kind: str, url: str) -> str:
    return "ep_" + hashlib.sha256(f"{kind}\0{url}".encode()).hexdigest()[:16]


def message_id(endpoint: str, event_id: str) -> str:
    return "msg_" + hashlib.sha256(f"{endpoint}\0{event_id}".encode()).hexdigest()[:32]


@dataclass
class Endpoint:
    kind: str
    url: str
    cursor: int = -1  # the leaf of the newest event this endpoint was given (or skipped)
    disabled: str = ""  # why it is disabled ("" when it is not): a 410 from it
    disabled_at: str = ""


@dataclass
class Message:
    id: str
    endpoint: str
    event_id: str
    kind: str  # the event's kind
    body: str  # the bytes every attempt sends (JSON for a webhook, text for Apprise)
    title: str = ""
    created_at: str = ""
    state: str = PENDING
    attempts: int = 0
    next_at: str = ""
    last_error: str = ""
    last_status: int | None = None
    delivered_at: str = ""


@dataclass
class Outbox:
    directory: Path
    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)

    @classmethod
    def load(cls, ledger_dir: Path) -> Outbox:
        """The outbox of the ledger at `ledger_dir` (empty when there is none yet). An outbox
        that cannot be read is an error (OSError, ValueError): it is never silently reset, or
        its undelivered messages would be lost."""
        box = cls(Path(ledger_dir) / OUTBOX_DIR)
        path = box.directory / OUTBOX_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return box
        if data.get("schema") != SCHEMA:
            raise ValueError(f"{path}: schema is not {SCHEMA}")
        box.endpoints = {k: Endpoint(**v) for k, v in data["endpoints"].items()}
        box.messages = {m["id"]: Message(**m) for m in data["messages"]}
        return box

    def save(self) -> None:
        """Replace the outbox file atomically and durably (crovia_spider/runs/feed_state.py)."""
        self.directory.mkdir(mode=0o700, exist_ok=True)
        delivered = [m for m in self.messages.values() if m.state != PENDING]
        for old in sorted(delivered, key=lambda m: m.delivered_at or m.next_at)[:-DELIVERED_KEPT]:
            del self.messages[old.id]
        data: dict[str, Any] = {
            "schema": SCHEMA,
            "endpoints": {k: asdict(v) for k, v in sorted(self.endpoints.items())},
            "messages": [asdict(m) for m in self.messages.values()],
        }
        save_json(self.directory / OUTBOX_FILE, data)

    def lock_path(self) -> Path:
        self.directory.mkdir(mode=0o700, exist_ok=True)
        return self.directory / LOCK_FILE

    def pending(self) -> list[Message]:
        return [m for m in self.messages.values() if m.state == PENDING]
