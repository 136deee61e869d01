"""`crovia history` and `crovia absent`: an item's timeline from the signed fetch records.

`history (AXIOM_ID | --url URL | --vendor V --title WORDS)` prints every fetch of the item's feed
and the brackets around it: the last fetch whose body did not hold it (the lower bound of "first
seen"), the first that did, each version (AX.OBS), the last that still held it, the first that did
not. `absent --url URL --at TIME` says whether the item was in its feed at the last fetch at or
before TIME that got a body or a 304 (a failed fetch proves nothing), reading the kept body again:
exit 0 absent, 1 present, 3 no such fetch, 4 cannot tell (the body held entries that were not read,
or cannot be read again, or an observation of the item contradicts the fetch), 2 usage or I/O
error. The logic is ledger/store/timeline.py; a body is read with the crawl's own reader, in its
worker under its ceilings, once per body (crovia_spider/spiders/reread.py).
"""

from __future__ import annotations

import argparse
from typing import Any

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import (
    json_flag,
    ledger_dir,
    print_json,
    printable,
    require_ledger,
)

EXIT_ABSENT = 0
EXIT_PRESENT = 1
EXIT_NO_FETCH = 3
EXIT_CANNOT_TELL = 4


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `history` and `absent`."""
    parser = subparsers.add_parser(
        "history",
        help="an item's timeline: when it appeared, changed and left its feed",
        description="For one item (AXIOM_ID, --url, or --vendor with --title), every fetch of its"
        " feed from the signed fetch records: the last fetch without it, the first with it, each"
        " version, the last with it and the first without it after, each with time and axiom id.",
    )
    parser.add_argument("axiom_id", metavar="AXIOM_ID", nargs="?", help="any version of the item")
    parser.add_argument("--url", metavar="URL", help="the item's link (or its target id)")
    parser.add_argument(
        "--vendor", metavar="V", help="with --title, or to narrow --url: the item's feed"
    )
    parser.add_argument("--title", metavar="WORDS", help="with --vendor: every word in the title")
    ledger_dir(parser)
    json_flag(parser)
    parser.set_defaults(handler=cmd_history)

    parser = subparsers.add_parser(
        "absent",
        help="was an item absent from its feed at a time? (exit 0 absent, 1 present)",
        description="Whether the item URL was in its feed at the last fetch at or before TIME"
        " that got a body or a 304, re-reading the kept body; names the fetch record and body."
        " Exit 0 absent, 1 present, 3 no such fetch before TIME, 4 cannot tell (the body held"
        " entries that were not read: past the entry limit or unreadable; or it cannot be read"
        " again; or an AX.OBS of the item from that feed, observed after the fetch or signed"
        " after its record with no later fetch record holding it, contradicts it), 2 usage or"
        " I/O error.",
    )
    parser.add_argument("--url", metavar="URL", required=True, help="the item's link")
    parser.add_argument(
        "--at", metavar="TIME", required=True, help="a date or ISO 8601 time (UTC if no zone)"
    )
    parser.add_argument(
        "--vendor", metavar="V", help="the feed to look in (default: the feeds the item came from)"
    )
    ledger_dir(parser)
    json_flag(parser)
    parser.set_defaults(handler=cmd_absent)


def _timeline(ledger: Any, identity: dict[str, Any], **how: Any) -> Any:
    from crovia_spider.spiders.reread import kept_body_reader
    from ledger.store import item_timeline

    reader = kept_body_reader(ledger)
    try:
        return item_timeline(ledger, identity, reader, **how)
    finally:
        reader.close()


def _items(args: argparse.Namespace) -> list[dict[str, Any]]:
    from crovia_spider.exceptions import CroviaError
    from ledger.store import item_envelopes

    if args.axiom_id is not None:
        if args.url or args.vendor or args.title:
            raise CroviaError("give AXIOM_ID, or --url, or --vendor with --title: one of them")
        return item_envelopes(args.ledger_dir, lambda env: env.get("axiom_id") == args.axiom_id)
    if args.url:  # one page a sitemap and a listing of one vendor both name: --vendor picks
        return item_envelopes(
            args.ledger_dir,
            lambda env: (
                _has_url(env, args.url)
                and (not args.vendor or env["body"].get("vendor") == args.vendor)
            ),
        )
    if args.vendor and args.title:
        words = args.title.casefold().split()
        return item_envelopes(
            args.ledger_dir,
            lambda env: (
                env["body"].get("vendor") == args.vendor
                and all(w in str(env["body"].get("title", "")).casefold() for w in words)
            ),
        )
    raise CroviaError("name the item: AXIOM_ID, --url URL, or --vendor V --title WORDS")


def _has_url(envelope: dict[str, Any], url: str) -> bool:
    record = envelope["body"].get("spider_record") or {}
    return url in (record.get("url"), (envelope.get("subject") or {}).get("target_id"))


def _identities(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for envelope in found:
        identity = (envelope.get("object") or {}).get("identity")
        if isinstance(identity, dict) and identity not in out:
            out.append(identity)
    return out


def cmd_history(args: argparse.Namespace) -> int:
    from crovia_spider.exceptions import CroviaError

    require_ledger(args.ledger_dir)
    identities = _identities(_items(args))
    if not identities:
        raise CroviaError("no item of the ledger matches (crovia find lists them)")
    if len(identities) > 1:
        shown = "; ".join(str(i) for i in identities[:5])
        raise CroviaError(
            f"{len(identities)} items match, name one by AXIOM_ID (or --vendor V): {shown}"
        )
    line = _timeline(args.ledger_dir, identities[0])
    page = page_history(args.ledger_dir, line.identity)
    if args.json:
        print_json({"ok": True, **line.as_dict(), "page": page.as_dict()})
        return EXIT_OK
    print(f"item {_identity_text(line.identity)}")
    print("versions (AX.OBS):")
    for version in line.versions:
        how = f"updates {', '.join(version.predecessors)}" if version.predecessors else "first"
        print(f"  {version.observed_at}  {version.axiom_id}  {how}")
        print(f"      {version.title!r}")
    for feed in line.feeds:
        if not feed.fetches and feed.feed_url == line.identity.get("link"):
            # a source of kind watch: the page is its own source, and its captures its record
            print(f"watched page {printable(feed.feed_url)}: no feed is fetched")
            continue
        print(f"feed {feed.vendor} ({feed.feed_url}):")
        labels = {
            "last_without": "last fetch without it (first seen after)",
            "first_with": "first fetch with it",
            "last_with": "last fetch with it",
            "first_without_after": "first fetch without it after (gone by)",
        }
        for key, seen in feed.brackets().items():
            where = f"{seen.fetched_at}  {seen.axiom_id}" if seen else "none"
            print(f"  {labels[key] + ':':<44} {where}")
        print("  every fetch:")
        for seen in feed.fetches:
            print(f"    {seen.fetched_at}  {_fetch_text(seen):<44} {seen.axiom_id}")
    _print_page(page)
    return EXIT_OK


def page_history(directory: Any, identity: dict[str, Any]) -> Any:
    from ledger.store import page_history as read

    return read(directory, identity)


def _print_page(page: Any) -> None:
    """The item's page, capture by capture (AX.CAPTURE): versions, removals and moves. A
    browser capture is named so, with its verdict; its chain numbers its own versions."""
    if not page.captures:
        return
    print(f"page {printable(page.captures[0].url)} (captures, AX.CAPTURE):")
    numbers: dict[str, int] = {}  # mode -> versions of its chain so far
    for capture in page.captures:
        facts = [f"HTTP {capture.status}" if capture.status is not None else "no answer"]
        if capture.verdict and not capture.error.startswith(f"{capture.verdict}:"):
            facts.insert(0, capture.verdict)
        if capture.outcome in ("first", "edited", "moved"):
            numbers[capture.mode] = numbers.get(capture.mode, 0) + 1
            facts.insert(0, f"version {numbers[capture.mode]}")
        if capture.outcome == "moved" or (capture.final_url and capture.final_url != capture.url):
            facts.append(f"at {printable(capture.final_url)}")
        if capture.text_sha256:
            facts.append(f"text {capture.text_sha256[:16]} ({capture.text_length} characters)")
        if capture.error:
            facts.append(printable(capture.error))
        # A page kept without its main text is signed "failed": it starts no version.
        label = "failed (no main text)" if capture.no_main_text else capture.outcome
        if capture.mode:
            label = f"{capture.mode} capture {label}"
        what = f"{label}: " + ", ".join(facts)
        print(f"  {capture.captured_at}  {what:<60} {capture.axiom_id}")


def cmd_absent(args: argparse.Namespace) -> int:
    from crovia_spider.exceptions import CroviaError
    from ledger.exceptions import VerificationError

    try:
        return _absent(args)
    except VerificationError as exc:  # exit 1 means "present" here: a failed check is no answer
        raise CroviaError(f"no answer: {exc}") from None


def _absent(args: argparse.Namespace) -> int:
    from crovia_spider.exceptions import CroviaError
    from ledger.store import fetched_feeds, item_envelopes, parse_since

    require_ledger(args.ledger_dir)
    try:
        at = parse_since(args.at)
    except ValueError:
        raise CroviaError(f"--at {args.at!r} is not a date or ISO 8601 time") from None
    found = item_envelopes(args.ledger_dir, lambda env: _has_url(env, args.url))
    identities = _identities(found)
    if args.vendor:
        feeds = fetched_feeds(args.ledger_dir, args.vendor)
        if not feeds:
            raise CroviaError(f"no fetch record of a feed of vendor {args.vendor!r}")
    elif found:
        feeds = None  # the feeds the item came from
    else:
        raise CroviaError(
            f"no item with url {args.url} in the ledger: name the feed to look in with --vendor"
        )

    def match(identity: dict[str, Any]) -> bool:
        if identities:
            return identity in identities
        return args.url in (identity.get("link"), identity.get("guid"))

    start = identities[0] if identities else {"link": args.url}
    needles = [args.url, *(i.get(k) for i in identities for k in ("link", "guid"))]
    line = _timeline(args.ledger_dir, start, feeds=feeds, match=match, mentions=needles)
    answers = [(feed, feed.nearest_before(at)) for feed in line.feeds]
    contradicted = [_contradiction(feed, seen, found, at) for feed, seen in answers]
    for (_, seen), observation in zip(answers, contradicted, strict=True):
        if observation is not None:
            seen.held, seen.undecided = None, observation["why"]
    proved = [(feed, seen) for feed, seen in answers if seen is not None]
    if not proved:
        code, verdict = EXIT_NO_FETCH, "no fetch"
    elif any(seen.held for _, seen in proved):
        code, verdict = EXIT_PRESENT, "present"
    elif any(seen.undecided for _, seen in proved):
        code, verdict = EXIT_CANNOT_TELL, "cannot tell"
    else:
        code, verdict = EXIT_ABSENT, "absent"
    if args.json:
        print_json(
            {
                "ok": True,
                "verdict": verdict,
                "exit_code": code,
                "url": args.url,
                "at": at,
                "feeds": [
                    {
                        "vendor": feed.vendor,
                        "feed_url": feed.feed_url,
                        "fetch": seen and seen.__dict__,
                        "contradicted_by": observation,
                    }
                    for (feed, seen), observation in zip(answers, contradicted, strict=True)
                ],
            }
        )
        return code
    for feed, seen in answers:
        if seen is None:
            print(
                f"no fetch: no fetch of feed {feed.vendor} ({feed.feed_url}) at or before {at}"
                " got a body or a 304"
            )
            continue
        where = (
            f"feed {feed.vendor} ({feed.feed_url}) at its fetch of {seen.fetched_at}, the last at"
            f" or before {at} that got a body or a 304"
        )
        if seen.undecided:
            print(f"cannot tell whether {args.url} was in {where}: {seen.undecided}")
            if seen.mentions is not None:
                said = "mentions" if seen.mentions else "does not mention"
                print(f"  the body {said} it (a byte search of the kept body)")
        else:
            print(f"{args.url} was {'present in' if seen.held else 'absent from'} {where}")
        print(
            f"  fetch record {seen.axiom_id} (leaf {seen.leaf_index}), {_fetch_text(seen)},"
            f" body {seen.body_sha256} read again: {_entries_text(seen)}"
        )
    print(f"{verdict} (exit {code})")
    return code


def _contradiction(
    feed: Any, seen: Any, observed: list[dict[str, Any]], at: str
) -> dict[str, Any] | None:
    """The first AX.OBS of the item (`observed`, with `leaf_index`) from `feed` that the absence
    `seen` answers (the fetch record it relies on) cannot account for, or None. An observation
    signs the item was in the feed: one observed after the fetch and at or before `at`, or one
    issued after the fetch record in the ledger with no later fetch record of the feed holding the
    item (its time may be backdated), says the ledger disagrees with itself, and absence is then
    no answer (a sequencer made to sign an item without its fetch record: issue 42)."""
    if seen is None or seen.held is not False:
        return None
    held_later = any(f.held and f.leaf_index > seen.leaf_index for f in feed.fetches)
    for envelope in observed:
        record = envelope["body"].get("spider_record") or {}
        if record.get("source_url") != feed.feed_url:
            continue
        when, leaf = str(record.get("observed_at", "")), envelope["leaf_index"]
        name = f"AX.OBS {envelope.get('axiom_id')} (leaf {leaf}) of this feed"
        if seen.fetched_at < when <= at:
            why = f"{name} signs it observed at {when}, after this fetch and at or before {at}"
        elif leaf > seen.leaf_index and not held_later:
            why = (
                f"{name}, issued after this fetch record, signs it observed (at {when}) and no"
                " later fetch record of the feed holds it"
            )
        else:
            continue
        found = {"axiom_id": envelope.get("axiom_id"), "leaf_index": leaf, "observed_at": when}
        return {**found, "why": f"the ledger contradicts this fetch: {why}"}
    return None


def _fetch_text(seen: Any) -> str:
    status = f"HTTP {seen.status}" if seen.status is not None else "no response"
    if seen.undecided:
        held = "cannot tell" + (" (the body mentions it)" if seen.mentions else "")
    else:
        held = {True: "held it", False: "did not hold it", None: "proves nothing"}[seen.held]
    return f"{status} {seen.outcome}, {held}"


def _entries_text(seen: Any) -> str:
    if seen.in_body is None:
        return "not readable"
    return (
        f"{seen.entries} entries read of {seen.in_body} ({seen.over_limit} past the entry limit,"
        f" {seen.unread} unreadable)"
    )


def _identity_text(identity: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in identity.items())
