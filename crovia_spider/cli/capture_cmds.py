"""`crovia capture` (captures of items' pages, from cron) and `crovia diff` (what an edit changed).

`crovia capture [VENDOR|PATTERN ...] [--all]` runs the crawl of the chosen sources' spiders with
captures only (`-s CROVIA_CAPTURE_ONLY=1`): no feed is fetched, the pages the capture book says
are due are captured and signed (AX.CAPTURE, docs/format.md), as a crawl does after its feeds;
`--all` captures every page in the book now. Same exit status as `crovia crawl`.

`crovia diff AXIOM_ID [--from TIME] [--to TIME]` prints the unified diff of the main text of an
item's page between two versions: by default the last two, else the version in force at each
TIME (the newest capture that started a version at or before it). Each side names its capture
record. The texts are the kept ones the records sign (`text.sha256`), checked on reading.
Exit 0: no difference; 1: differences (as diff(1)); 2: AXIOM_ID is no item nor capture, or a
usage error; 3: the page has no version at a time asked.
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
    require_ledger,
    utc_time,
)

EXIT_NO_VERSION = 3


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
        " those in force at --from and --to. Exit 0 no difference, 1 differences, 2 not an item"
        " with a page, 3 no version at a time asked.",
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
    # One chain at a time: a browser capture's versions against the browser's, plain ones
    # against plain ones (what a script adds is no edit); --browser, or a browser capture named.
    mode = "browser" if args.browser else mode
    versions = [v for v in history.versions if v.mode == mode]
    if args.since is None and args.until is None:
        pair = versions[-2:] if len(versions) >= 2 else versions[:1] * 2
        old, new = (pair[0], pair[-1]) if pair else (None, None)
    else:
        old = _at(versions, args.since) if args.since else (versions[0] if versions else None)
        new = _at(versions, args.until) if args.until else (versions[-1] if versions else None)
    if old is None or new is None:
        when = args.since if old is None else args.until
        message = f"the page of {args.axiom_id} has no captured version" + (
            f" at or before {when}" if when else ""
        )
        if args.json:
            print_json({"ok": False, "error": message})
        else:
            print(f"crovia diff: {message}", file=sys.stderr)
        return EXIT_NO_VERSION
    store = BodyStore(args.ledger_dir)
    # Every line ends in a newline: the text's last line (which has none) is no change when a
    # line after it is added or removed.
    texts = [[f"{line}\n" for line in _text(store, side).splitlines()] for side in (old, new)]
    lines = list(
        difflib.unified_diff(
            texts[0],
            texts[1],
            fromfile=_label(old),
            tofile=_label(new),
        )
    )
    if args.json:
        print_json(
            {
                "ok": True,
                "from": _side(old),
                "to": _side(new),
                "changed": bool(lines),
                "diff": "".join(lines),
            }
        )
    else:
        if not lines:
            print(f"no change in the main text: {_label(old)} and {_label(new)}")
        for line in lines:
            sys.stdout.write(line if line.endswith("\n") else line + "\n")
    return 1 if lines else 0


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
