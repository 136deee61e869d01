"""`crovia notify`: deliver change events by hand, print the webhook key, say how delivery goes.

`crovia notify [deliver] [--wait SECONDS]` enqueues the new change events for every target of
config/notify.toml and delivers what is due (crovia_spider/notify/run.py), as a crawl does after
it ends; with --wait it keeps delivering until nothing is pending or SECONDS have passed, waiting
for each retry's time. `crovia notify key` prints the public key webhook receivers pin
(`whpk_...`), making the notify key at first use. `crovia notify status` lists each endpoint (a
410 disabled it, or not) and its messages: pending with their next attempt and last error,
delivered, given up. Exit 0; 1 when `deliver` leaves messages it failed to deliver or gave up;
2 usage, configuration or I/O error.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from crovia_spider.cli.ledger_args import json_flag, ledger_dir, print_json, printable
from crovia_spider.options import path_default


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `notify`."""
    parser = subparsers.add_parser(
        "notify",
        help="tell webhooks and people of the change events now; the webhook key; status",
        description="deliver (the default): enqueue the new change events for each target of the"
        " notify config and deliver what is due, signed webhooks (Standard Webhooks, v1a) and"
        " Apprise messages (unsigned); key: print the whpk_ public key receivers verify with;"
        " status: each endpoint and its messages. Exit 1 when deliver leaves failures.",
    )
    parser.add_argument(
        "action", nargs="?", default="deliver", choices=("deliver", "key", "status")
    )
    parser.add_argument(
        "--wait", type=float, default=0.0, metavar="SECONDS",
        help="deliver: keep delivering, retries included, until nothing is pending or SECONDS pass",
    )  # fmt: skip
    parser.add_argument(
        "--config", type=Path, default=path_default("CROVIA_NOTIFY_FILE"),
        help="the notify config (default: $CROVIA_NOTIFY_FILE or %(default)s)",
    )  # fmt: skip
    ledger_dir(parser)
    json_flag(parser)
    parser.set_defaults(handler=cmd_notify)


def cmd_notify(args: argparse.Namespace) -> int:
    if args.action == "key":
        return _key(args)
    if args.action == "status":
        return _status(args)
    return _deliver(args)


def _key(args: argparse.Namespace) -> int:
    from crovia_spider.notify.keys import notify_key, public_key_text
    from crovia_spider.notify.run import settings_from_env

    settings = settings_from_env()
    text = public_key_text(notify_key(settings.key_file))
    if args.json:
        print_json({"ok": True, "public_key": text, "key_file": str(settings.key_file)})
    else:
        print(text)
    return 0


def _deliver(args: argparse.Namespace) -> int:
    from crovia_spider.cli.ledger_args import require_ledger
    from crovia_spider.notify.config import load_notify
    from crovia_spider.notify.run import Report, notify_once, settings_from_env

    require_ledger(args.ledger_dir)
    config = load_notify(args.config)
    settings = settings_from_env()
    deadline = time.monotonic() + max(0.0, args.wait)
    total = Report()
    while True:
        settings.budget = max(1.0, deadline - time.monotonic()) if args.wait else 300.0
        report = notify_once(args.ledger_dir, config, settings)
        for name in ("enqueued", "delivered", "failed", "gave_up"):
            setattr(total, name, getattr(total, name) + getattr(report, name))
        total.waiting, total.disabled, total.skipped = (
            report.waiting,
            report.disabled,
            report.skipped,
        )
        if report.skipped or not report.waiting or time.monotonic() >= deadline:
            break
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    if args.json:
        print_json({"ok": True, **total.__dict__})
    elif total.skipped:
        print(f"nothing delivered: {total.skipped}")
    else:
        print(
            f"{total.enqueued} new messages, {total.delivered} delivered, {total.failed} failed"
            f" attempts (retried later), {total.gave_up} given up, {total.waiting} waiting"
        )
        for url in total.disabled:
            print(f"disabled by a 410 Gone: {printable(url)}")
    return 1 if (total.waiting and total.failed) or total.gave_up else 0


def _status(args: argparse.Namespace) -> int:
    from crovia_spider.notify.outbox import Outbox

    box = Outbox.load(args.ledger_dir)
    rows: list[dict[str, Any]] = []
    for key, endpoint in sorted(box.endpoints.items()):
        messages = [m for m in box.messages.values() if m.endpoint == key]
        counts: dict[str, int] = {}
        for message in messages:
            counts[message.state] = counts.get(message.state, 0) + 1
        rows.append(
            {
                "endpoint": key,
                "kind": endpoint.kind,
                "url": endpoint.url,
                "disabled": endpoint.disabled,
                "disabled_at": endpoint.disabled_at,
                "messages": counts,
                "pending": [
                    {
                        "id": m.id,
                        "event": m.event_id,
                        "kind": m.kind,
                        "attempts": m.attempts,
                        "next_at": m.next_at,
                        "last_error": m.last_error,
                    }
                    for m in messages
                    if m.state == "pending"
                ],
                "gave_up": [m.id for m in messages if m.state == "gave_up"],
            }
        )
    if args.json:
        print_json({"ok": True, "endpoints": rows})
        return 0
    if not rows:
        print("no endpoint yet (config/notify.toml, then a crawl or crovia notify)")
    for row in rows:
        state = (
            f"DISABLED since {row['disabled_at']}: {row['disabled']}"
            if row["disabled"]
            else "enabled"
        )
        print(f"{row['kind']} {printable(row['url'])}: {state}")
        counts = ", ".join(f"{n} {state}" for state, n in sorted(row["messages"].items())) or "none"
        print(f"  messages: {counts}")
        for message in row["pending"]:
            print(
                f"  pending {message['id']} ({message['kind']}): {message['attempts']} attempts,"
                f" next at {message['next_at'] or 'now'}: {printable(message['last_error'])}"
            )
    return 0
