"""`crovia capture` (captures of items' pages, from cron) and `crovia diff` (what an edit changed).

`crovia capture [VENDOR|PATTERN ...] [--all]` runs the crawl of the chosen sources' spiders with
captures only (`-s CROVIA_CAPTURE_ONLY=1`): no feed is fetched, the pages the capture book says
are due are captured and signed (AX.CAPTURE, docs/format.md), as a crawl does after its feeds;
`--all` captures every page in the book now. Same exit status as `crovia crawl`.

`crovia diff AXIOM_ID [--from TIME] [--to TIME]` prints the unified diff of the main text of an
item's page between two versions: by default the last two, else the version in force at each
TIME (the newest capture that started a version at or before it). Each side names its capture
record. The texts are the kept ones the records sign (`text.sha256`), checked on reading. What
the captures after the newer version saw (up to --to) is reported too, each naming its capture:
the page removed (404 or 410), answered without a main text, there again. A page is "removed"
only when a capture saw it there first.

Exit status, one table (docs/spider.md, "Captures"):
  0  two versions compared have the same main text, and nothing was removed since
  1  they differ (as diff(1)), or the newer is a move, or a capture after the newer version
     saw the page removed or without its main text
  2  usage or I/O error; AXIOM_ID is neither an item nor a capture record
  3  nothing to compare: the item's page was never captured (a source without captures), never
     seen there, has one version and nothing since, or no version at a time asked
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import Any

from crovia_spider.cli.crawl_cmds import settings_option
from crovia_spider.cli.ledger_args import (
    json_flag,
    ledger_dir,
    print_json,
    printable,
    require_ledger,
    utc_time,
)
from ledger.records.capture import MOVED, NEW_VERSION, REMOVED

EXIT_SAME, EXIT_CHANGED, EXIT_NO_VERSION = 0, 1, 3


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `capture` and `diff`."""
    parser = subparsers.add_parser(
        "capture",
        help="capture the pages that are due (items of sources with capture)",
        description="Capture the pages of items that are due again (CROVIA_RECAPTURE_AFTER), or"
        " every page with --all: a crawl that fetches no feed, only pages, signed into the"
        " ledger as capture records. For cron; `crovia crawl` captures new items' pages itself."
        " Exit status as `crovia crawl`.",
    )
    parser.add_argument("vendors", nargs="*", metavar="VENDOR", help="vendor ids or patterns")
    parser.add_argument("--all", dest="everything", action="store_true",
                        help="capture every page in the book now, due or not")  # fmt: skip
    parser.add_argument("--spider", metavar="NAME", help="this spider's sources only")
    settings_option(parser, "the capture crawl")
    parser.set_defaults(handler=cmd_capture)

    parser = subparsers.add_parser(
        "diff",
        help="the unified diff of an item's page between two captured versions",
        description="Print the unified diff of the main text of the page of AXIOM_ID (any version"
        " of the item, or one of its capture records) between two versions: the last two, or"
        " those in force at --from and --to; and what the captures after the newer one saw (a"
        " removal, a page without its main text), each naming its capture. Exit 0 the same and"
        " nothing since, 1 a difference, a move, or a removal or no main text since, 2 usage"
        " error or AXIOM_ID neither an item nor a capture, 3 nothing to compare (never"
        " captured, never seen there, one version and nothing since, no version at a time).",
    )
    parser.add_argument("axiom_id", metavar="AXIOM_ID")
    parser.add_argument(
        "--from", dest="since", metavar="TIME", type=utc_time,
        help="the version in force at this time (2026-12-01 or 2026-12-01T09:00:00Z; UTC)",
    )  # fmt: skip
    parser.add_argument(
        "--to", dest="until", metavar="TIME", type=utc_time,
        help="the version in force at this time (default: the newest)",
    )  # fmt: skip
    parser.add_argument(
        "--browser", action="store_true",
        help="the browser captures' versions (`capture = \"browser\"`), not the plain ones;"
        " implied by AXIOM_ID naming a browser capture",
    )  # fmt: skip
    ledger_dir(parser)
    json_flag(parser)
    parser.set_defaults(handler=cmd_diff)


def cmd_capture(args: argparse.Namespace) -> int:
    from crovia_spider.cli.crawl_cmds import _feeds_file, _run, plan
    from crovia_spider.options import project_root
    from crovia_spider.schedule.children import crawl_command

    settings = ["-s", "CROVIA_CAPTURE_ONLY=1"]
    if args.everything:
        settings += ["-s", "CROVIA_CAPTURE_ALL=1"]
    settings += [arg for pair in args.settings for arg in ("-s", pair)]
    if args.verbose:
        settings = ["-s", "LOG_LEVEL=INFO", *settings]
    code = 0
    for spider, vendors in plan(args.vendors, [], args.spider, _feeds_file(args.settings)):
        argv = [*crawl_command(), "crawl", spider, *settings]
        if vendors:
            argv += ["-a", "vendor=" + ",".join(vendors)]
        status, interrupted = _run(argv, project_root())
        code = max(code, status)
        if status or interrupted:
            break
    return code


def cmd_diff(args: argparse.Namespace) -> int:
    from ledger.store import BodyStore

    require_ledger(args.ledger_dir)
    history, mode = _page_history(args.ledger_dir, args.axiom_id)
    # One chain: the plain captures, or the browser's (--browser, or a browser capture named).
    mode = "browser" if args.browser else mode
    captures = [c for c in history.captures if c.mode == mode]
    versions = [c for c in captures if c.outcome in NEW_VERSION]
    if args.since is None and args.until is None:
        old, new = (versions[-2], versions[-1]) if len(versions) >= 2 else (None, None)
    else:
        old = _at(versions, args.since) if args.since else (versions[0] if versions else None)
        new = _at(versions, args.until) if args.until else (versions[-1] if versions else None)
    last = new if new is not None else (versions[-1] if len(versions) == 1 else None)
    events = _after(captures, last, args.until) if last is not None else []
    if old is None or new is None:
        if last is not None and events and args.since is None and args.until is None:
            return _report_events(args, last, events)  # one version, then taken down
        return _nothing_to_compare(args, captures, versions, old)
    store = BodyStore(args.ledger_dir)
    # Every line ends in a newline: the text's last line (which has none) is no change when a
    # line after it is added or removed.
    texts = [[f"{line}\n" for line in _text(store, side).splitlines()] for side in (old, new)]
    lines = list(difflib.unified_diff(texts[0], texts[1], fromfile=_label(old), tofile=_label(new)))
    moved = new is not old and new.outcome == MOVED
    changed = bool(lines) or moved or any(e["what"] != THERE_AGAIN for e in events)
    code = EXIT_CHANGED if changed else EXIT_SAME
    if args.json:
        print_json(
            {
                "ok": True,
                "exit_code": code,
                "from": _side(old),
                "to": _side(new),
                "changed": bool(lines),
                "moved": moved,
                "diff": "".join(lines),
                "after": events,
            }
        )
        return code
    for line in lines:
        sys.stdout.write(line if line.endswith("\n") else line + "\n")
    if not lines:
        same = (
            f"version {old.axiom_id} was in force at both times"
            if new is old
            else f"{_label(old)} and {_label(new)}"
        )
        print(f"no change in the main text: {same}")
    if moved:
        print(
            f"moved: the page {printable(new.url)} answered at {printable(new.final_url)} at"
            f" {new.captured_at}, seen by capture {new.axiom_id}"
        )
    _print_events(events)
    return code


# What a capture after the last version saw: the page gone, answered without its main text, or
# there again after one of those.
REMOVED_SINCE, NO_TEXT_SINCE, THERE_AGAIN = "removed", "no_main_text", "there_again"


def _after(captures: list[Any], version: Any, until: str | None) -> list[dict[str, Any]]:
    """What the captures after `version` (up to `until`) saw, as events: each removal (404,
    410) and each answer without a main text, and the page there again after one of those."""
    events: list[dict[str, Any]] = []
    gone = False
    for capture in captures[captures.index(version) + 1 :]:
        if until is not None and capture.captured_at[:19] > until[:19]:
            break
        if capture.outcome == REMOVED:
            what, gone = REMOVED_SINCE, True
        elif capture.no_main_text:
            what, gone = NO_TEXT_SINCE, True
        elif gone and capture.present:
            what, gone = THERE_AGAIN, False
        else:
            continue
        events.append(
            {
                "what": what,
                "axiom_id": capture.axiom_id,
                "captured_at": capture.captured_at,
                "status": capture.status,
                "final_url": capture.final_url,
                "error": capture.error,
            }
        )
    return events


def _print_events(events: list[dict[str, Any]]) -> None:
    for event in events:
        status = f"HTTP {event['status']}"
        if event["what"] == REMOVED_SINCE:
            said = f"removed since: {status} at {event['captured_at']}"
        elif event["what"] == NO_TEXT_SINCE:
            said = (
                f"no main text since: {status} at {event['captured_at']}, kept"
                f" ({printable(event['error'])})"
            )
        else:
            said = f"there again: {status} at {event['captured_at']}"
        print(f"{said}, seen by capture {event['axiom_id']}")


def _report_events(args: argparse.Namespace, version: Any, events: list[dict[str, Any]]) -> int:
    """A page with one version, then removed or without its main text: exit 1, naming each."""
    if args.json:
        print_json(
            {
                "ok": True,
                "exit_code": EXIT_CHANGED,
                "from": _side(version),
                "to": _side(version),
                "changed": False,
                "moved": False,
                "diff": "",
                "after": events,
            }
        )
        return EXIT_CHANGED
    print(f"one version of the page: {_label(version)}")
    _print_events(events)
    return EXIT_CHANGED


def _nothing_to_compare(
    args: argparse.Namespace, captures: list[Any], versions: list[Any], old: Any
) -> int:
    """Exit 3, saying why there is nothing to compare (`old`: the older side found, if any)."""
    if versions and (args.since or args.until):
        when = args.since if old is None else args.until
        message = f"the page of {args.axiom_id} has no captured version at or before {when}"
    elif len(versions) == 1:
        since = captures[captures.index(versions[0]) + 1 :]
        message = (
            f"the page of {args.axiom_id} has one version, {_label(versions[0])}: nothing to"
            f" compare; {len(since)} captures since"
            + (f", the newest {since[-1].outcome} at {since[-1].captured_at}" if since else "")
        )
    elif any(c.present for c in captures):
        message = (
            f"the page of {args.axiom_id} was never captured with a main text: its"
            f" {len(captures)} captures found none (crovia history shows each)"
        )
    elif captures:
        message = (
            f"the page of {args.axiom_id} was never seen there: its {len(captures)} captures"
            " failed or found it gone, so nothing was removed (crovia history shows each)"
        )
    else:
        message = (
            f"the page of {args.axiom_id} was never captured (its source captures no page:"
            ' capture = true, docs/spider.md "Captures")'
        )
    if args.json:
        print_json({"ok": False, "exit_code": EXIT_NO_VERSION, "error": message})
    else:
        print(f"crovia diff: {message}", file=sys.stderr)
    return EXIT_NO_VERSION


def _page_history(directory: Any, axiom_id: str) -> tuple[Any, str]:
    """The captures of the page of the item `axiom_id` names (any version, or a capture): its
    envelope found by the index, then one pass over the ledger (ledger/store/pages.py); and the
    mode of the capture named ("" for an item, or a plain capture)."""
    from crovia_spider.exceptions import CroviaError
    from ledger.store import Ledger, page_history

    mode = ""
    with Ledger.open(directory) as ledger:
        envelope = ledger.envelope_of(axiom_id)
        if envelope.get("axiom_type") == "AX.CAPTURE":
            mode = str((envelope.get("body") or {}).get("mode", ""))
            envelope = ledger.envelope_of(str((envelope.get("body") or {}).get("item", "")))
    identity = (envelope.get("object") or {}).get("identity")
    if envelope.get("axiom_type") != "AX.OBS" or not isinstance(identity, dict):
        raise CroviaError(f"{axiom_id} is neither an item nor a capture of an item's page")
    return page_history(directory, identity), mode


def _at(versions: list[Any], moment: str) -> Any:
    """The version in force at `moment`: the newest that started at or before it."""
    found = None
    for version in versions:
        if version.captured_at[:19] <= moment[:19]:
            found = version
    return found


def _text(store: Any, capture: Any) -> str:
    if not capture.text_sha256:
        return ""  # a page without text (a PDF): only its body digest tells versions apart
    return store.get(capture.text_sha256).decode("utf-8")


def _label(capture: Any) -> str:
    return f"{capture.axiom_id} ({capture.outcome}, captured {capture.captured_at})"


def _side(capture: Any) -> dict[str, Any]:
    return {
        "axiom_id": capture.axiom_id,
        "captured_at": capture.captured_at,
        "outcome": capture.outcome,
        "final_url": capture.final_url,
        "text_sha256": capture.text_sha256,
    }
