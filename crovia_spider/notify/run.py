"""Enqueue the new change events for each target, then deliver what is due (docs/watching.md).

One run, under the outbox's lock: the ledger's change events are derived (ledger/changes/); each
target configured gets, as messages, the events shown by leaves after its cursor (a target seen
for the first time starts at the newest event: no backlog), filtered by its `events` and
`vendors`, a page's capped at CROVIA_CHANGES_PER_PAGE with one "+N more"; the outbox is saved
(durable) before anything is sent. Then each pending message whose time has come is attempted
once, oldest first, within the run's time budget, the outbox saved after each answer:
- a 2xx delivers it;
- a 410 from a webhook disables that endpoint (`crovia notify status` says so; its messages wait);
- anything else (another status, a 3xx, a timeout, a refusal by the fetch policy) is a failed
  attempt: the next is due after the next wait of CROVIA_NOTIFY_RETRIES (Standard Webhooks'
  schedule: 5s, 5m, 30m, 2h, 5h, 10h, 14h, 20h, 24h), or the receiver's Retry-After when longer;
  after the last, the message is given up (said in status).
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from crovia_spider.exceptions import ConfigError
from crovia_spider.notify.config import NotifyConfig, Target
from crovia_spider.notify.keys import signature_header
from crovia_spider.notify.outbox import (
    DELIVERED,
    GAVE_UP,
    OUTBOX_DIR,
    Endpoint,
    Message,
    Outbox,
    endpoint_id,
    message_id,
)
from crovia_spider.notify.send import Attempt, apprise_send, post

logger = logging.getLogger(__name__)
LOCK_WAIT = 10.0  # seconds a run waits for another to finish with the outbox


@dataclass
class Settings:
    """What a run takes from the settings (crovia_spider/options.py)."""

    key_file: Path
    rule: Any  # ledger.changes.RemovalRule
    per_page: int = 5
    retries: tuple[int, ...] = (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
    timeout: float = 15.0
    budget: float = 60.0  # seconds of delivery in one run


@dataclass
class Report:
    enqueued: int = 0
    delivered: int = 0
    failed: int = 0
    gave_up: int = 0
    waiting: int = 0  # pending messages left (not due yet, over the budget, or disabled)
    disabled: list[str] = field(default_factory=list)
    skipped: str = ""


def settings_from_env(overrides: dict[str, Any] | None = None) -> Settings:
    """The run's settings from the environment (and `overrides`, a crawl's `-s` values)."""
    from crovia_spider.options import read_setting, resolve_path, setting
    from ledger.changes import RemovalRule

    def value(name: str) -> Any:
        given = (overrides or {}).get(name)
        return setting(name) if given in (None, "") else read_setting(name, given, "-s")

    return Settings(
        key_file=resolve_path(value("CROVIA_NOTIFY_KEY_FILE")),
        rule=RemovalRule(value("CROVIA_REMOVAL_CAPTURES"), float(value("CROVIA_REMOVAL_SPAN"))),
        per_page=value("CROVIA_CHANGES_PER_PAGE"),
        retries=tuple(value("CROVIA_NOTIFY_RETRIES")) or Settings.retries,
        timeout=float(value("CROVIA_NOTIFY_TIMEOUT")),
    )


def notify_once(ledger_dir: Path, config: NotifyConfig, settings: Settings) -> Report:
    """Enqueue and deliver once (the module docstring). Raises ConfigError for a notify key or a
    secret file that cannot be used, OSError or ValueError for an outbox that cannot be read."""
    from ledger import lock
    from ledger.exceptions import LedgerLocked

    if not config.targets:
        return Report(skipped="no webhook or Apprise URL in the notify config")
    try:
        held = lock.acquire(Outbox(Path(ledger_dir) / OUTBOX_DIR).lock_path(), LOCK_WAIT)
    except LedgerLocked as exc:
        return Report(skipped=f"another delivery holds the outbox: {exc}")
    try:
        box = Outbox.load(ledger_dir)  # read inside the lock: another run may have changed it
        report = Report(enqueued=enqueue(box, ledger_dir, config, settings))
        box.save()
        deliver(box, config, settings, report)
        report.waiting = len(box.pending())
        report.disabled = [e.url for e in box.endpoints.values() if e.disabled]
        return report
    finally:
        lock.release(held)


def enqueue(box: Outbox, ledger_dir: Path, config: NotifyConfig, settings: Settings) -> int:
    """Add each target's messages for the events after its cursor; returns how many."""
    from ledger.changes import derive_changes, fold, with_diff

    events = derive_changes(ledger_dir, settings.rule)
    newest = max((e.leaf_index for e in events), default=-1)
    known = [box.endpoints.get(endpoint_id(t.kind, t.url)) for t in config.targets]
    since = min((e.cursor for e in known if e is not None and not e.disabled), default=newest)
    # Each event a target may be told of, diffed once whatever the number of targets.
    events = [with_diff(e, ledger_dir) for e in events if e.leaf_index > since]
    checkpoint = _checkpoint(ledger_dir)
    added = 0
    for target in config.targets:
        key = endpoint_id(target.kind, target.url)
        endpoint = box.endpoints.get(key)
        if endpoint is None:  # a new target: told of what happens from now on
            box.endpoints[key] = Endpoint(target.kind, target.url, cursor=newest)
            continue
        if endpoint.disabled:  # a 410 stopped it: nothing more is queued for it
            endpoint.cursor = max(endpoint.cursor, newest)
            continue
        wanted = [
            e for e in events if e.leaf_index > endpoint.cursor and target.wants(e.kind, e.vendor)
        ]
        for event in fold(wanted, settings.per_page):
            message = _message(key, target, event, checkpoint, config.site)
            if message.id not in box.messages:
                box.messages[message.id] = message
                added += 1
        endpoint.cursor = max(endpoint.cursor, newest)
    return added


def deliver(box: Outbox, config: NotifyConfig, settings: Settings, report: Report) -> None:
    """Attempt each pending message that is due, oldest first, within the run's budget."""
    from crovia_spider.notify.keys import notify_key

    targets = {endpoint_id(t.kind, t.url): t for t in config.targets}
    started = time.monotonic()
    key = None
    for message in box.pending():
        if time.monotonic() - started > settings.budget:
            break
        endpoint, target = box.endpoints.get(message.endpoint), targets.get(message.endpoint)
        if endpoint is None or target is None or endpoint.disabled:
            continue  # no longer configured, or disabled by a 410: it waits
        if message.next_at and _parse(message.next_at) > datetime.now(UTC):
            continue
        if target.kind == "webhook" and key is None:
            key = notify_key(settings.key_file)
        attempt = _attempt(message, target, key, config, settings)
        _settle(box, endpoint, message, attempt, settings, report)
        box.save()


def _attempt(
    message: Message, target: Target, key: Any, config: NotifyConfig, settings: Settings
) -> Attempt:
    if target.kind == "apprise":
        return apprise_send(
            target.url, message.title, message.body, settings.timeout, config.allows
        )
    body = message.body.encode("utf-8")
    stamp = int(time.time())
    secret = _secret(target.secret_file) if target.secret_file else ""
    headers = {
        "webhook-id": message.id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": signature_header(key, message.id, stamp, body, secret),
    }
    return post(target.url, body, headers, settings.timeout, config.allows)


def _settle(
    box: Outbox,
    endpoint: Endpoint,
    message: Message,
    attempt: Attempt,
    settings: Settings,
    report: Report,
) -> None:
    now = datetime.now(UTC)
    message.attempts += 1
    message.last_status = attempt.status
    if attempt.ok:
        message.state, message.delivered_at, message.last_error = DELIVERED, _text(now), ""
        report.delivered += 1
        return
    message.last_error = attempt.error
    if attempt.status == 410 and endpoint.kind == "webhook":
        endpoint.disabled = "HTTP 410 Gone: the receiver asked for no more deliveries"
        endpoint.disabled_at = _text(now)
        logger.warning("webhook %s answered 410 Gone: disabled", endpoint.url)
        report.failed += 1
        return
    if message.attempts > len(settings.retries):
        message.state = GAVE_UP
        report.gave_up += 1
        logger.warning("gave up %s to %s: %s", message.id, endpoint.url, attempt.error)
        return
    wait = float(settings.retries[message.attempts - 1])
    if attempt.retry_after is not None:
        wait = max(wait, attempt.retry_after)
    message.next_at = _text(now + timedelta(seconds=wait))
    report.failed += 1


def _message(
    key: str, target: Target, event: Any, checkpoint: dict[str, Any], site: str
) -> Message:
    links = [_link(site, r.axiom_id) for r in event.records]
    title = ""
    if target.kind == "apprise":
        body = (
            f"{event.summary()}\n{event.at}: {event.detail}\n"
            + "".join(
                f"{r.role} record: {link}\n" for r, link in zip(event.records, links, strict=True)
            )
            + "This notification is not signed: check it against the signed records"
            " (crovia verify, or the signed webhook).\n"
        )
        title = f"crovia: {event.summary()}"[:250]
    else:
        data = {
            **event.as_dict(),
            "axiom_ids": [r.axiom_id for r in event.records],
            "leaf_indexes": [r.leaf_index for r in event.records],
            "checkpoint": checkpoint if (checkpoint.get("size") or 0) > event.leaf_index else {},
            "receipts": links,
        }
        payload = {"type": f"crovia.change.{event.kind}", "timestamp": event.at, "data": data}
        body = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return Message(
        id=message_id(key, event.id),
        endpoint=key,
        event_id=event.id,
        kind=event.kind,
        body=body,
        title=title,
        created_at=_text(datetime.now(UTC)),
    )


def _checkpoint(ledger_dir: Path) -> dict[str, Any]:
    """The newest seal as the payload's checkpoint: its size, roots and key id."""
    from ledger.store import Ledger

    with Ledger.open(ledger_dir) as reader:
        seal = reader.last_seal()
    if not seal:
        return {}
    return {
        "size": seal.get("leaf_count"),
        "rfc6962_root": seal.get("rfc6962_root", ""),
        "merkle_root": seal.get("merkle_root", ""),
        "key_id": seal.get("key_id", ""),
    }


def _link(site: str, axiom_id: str) -> str:
    return f"{site.rstrip('/')}/v/{axiom_id}" if site else f"v/{axiom_id}"


def _secret(path: str) -> str:
    """A webhook's `whsec_` secret, from a file only its owner can read."""
    from crovia_spider.options import resolve_path

    file = resolve_path(path)
    try:
        if os.stat(file).st_mode & 0o077:
            raise ConfigError(f"{file}: a webhook secret file is for its owner only (chmod 600)")
        secret = file.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read the webhook secret: {exc}") from None
    if not secret.startswith("whsec_"):
        raise ConfigError(f"{file}: a webhook secret is whsec_ and base64")
    return secret


def _text(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text[:19]).replace(tzinfo=UTC)
