"""`crovia feeds add URL` and `crovia feeds try VENDOR|URL`: a new source in a minute.

`add` fetches URL as the crawler fetches (crovia_spider/cli/feeds_probe.py: the fetch policy on
every hop, robots.txt, the size cap, the parser worker) and finds the sources there: URL read as a
feed, a JSON Feed or a sitemap; the feeds an HTML page names in `<link rel="alternate">`; the
sitemaps the site's robots.txt names (written as the robots.txt URL: each crawl then walks the
sitemaps the site names that day). Each is then read once by the crawl's own spider, and its
first items shown. The one written is the first that reads, in this order: an RSS or Atom feed
(the vendor's own), a JSON Feed, a sitemap. A listing page needs CSS selectors, which cannot be
guessed: `add` prints an entry to fill in. The entry is appended as one `[[feeds]]` table, in
the file's own line endings, every byte before it kept, under a lock beside the file (two `add`s at
once both land): the file is read again inside the lock, the entry checked against it, the whole
list validated, and the file (a symlink's target) replaced atomically.

`try` reads one source, configured (VENDOR) or not (URL), exactly as a crawl would and prints
the items it would issue, with the fetch's counts; it signs nothing and writes nothing under the
ledger directory.

Exit codes: 0 ok; 1 nothing found (`add`) or the source gave nothing to read (`try`: an error
with no items, or no items and entries it could not read); 2 usage or configuration error (a
vendor id or URL already configured, an entry that would not validate, a pattern given to `try`).
"""

from __future__ import annotations

import argparse
import logging
import re
import shlex
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crovia_spider.cli import EXIT_CHECK_FAILED, EXIT_OK
from crovia_spider.cli.feeds_write import add_entry, existing_feeds, refuse_taken, render_tables
from crovia_spider.cli.ledger_args import printable
from crovia_spider.options import path_default

PREVIEW = 5  # items shown per source found by `add`
KIND_ORDER = ("feed", "jsonfeed", "sitemap")  # what `add` writes, best first
KIND_NAMES = {"feed": "RSS/Atom feed", "jsonfeed": "JSON Feed", "sitemap": "sitemap"}
PAGE_EXAMPLE = {"item": "article", "link": "a", "title": "h2", "date": "time::attr(datetime)"}


def register(commands: argparse._SubParsersAction, feeds_file: Any) -> None:
    """Add `crovia feeds add` and `crovia feeds try`; `feeds_file(parser)` adds --feeds-file."""
    add = commands.add_parser(
        "add", help="find the feed or sitemap at an address and add it to the feed list",
        description="Fetch URL as a crawl would (fetch policy, robots.txt, size cap), find the"
        " sources there (URL as a feed, JSON Feed or sitemap; the feeds an HTML page names in"
        " <link rel=\"alternate\">; the sitemaps of the site's robots.txt), show each with its"
        " first items, and append the best (RSS/Atom, else JSON Feed, else sitemap) to the feed"
        " list, keeping the file's comments and order. Exit 1 when nothing is found (a listing"
        " page needs selectors: an entry to fill in is printed); exit 2 when the vendor id or"
        " the URL is configured already.",
    )  # fmt: skip
    add.add_argument("url", metavar="URL", help="a feed, a sitemap, or a page of the site")
    add.add_argument(
        "--vendor", metavar="ID",
        help="vendor id (lower-case letters, digits, _; default: made from the host)",
    )  # fmt: skip
    feeds_file(add)
    add.add_argument("--dry-run", action="store_true", help="show the entry, write nothing")
    add.add_argument(
        "--watch", action="store_true",
        help="watch URL itself (a policy, terms, a model card): a source of kind watch, its page"
        " captured at every crawl it is due; nothing is fetched now",
    )  # fmt: skip
    add.add_argument(
        "--every", metavar="INTERVAL",
        help="with --watch: how often it is captured (90s, 30m, 1h, 7d; default"
        " $CROVIA_WATCH_EVERY)",
    )  # fmt: skip
    add.set_defaults(handler=cmd_add, logs=False)
    trial = commands.add_parser(
        "try", help="read one source as a crawl would, and print its items; signs nothing",
        description="Fetch and read one source once, with the crawl's own spider (the sitemap"
        " walk included), and print the items a crawl would issue from it (title, link,"
        " published) and the fetch's counts. No validators are sent, nothing is signed and"
        " nothing is written under the ledger directory. VENDOR is a configured entry; URL a"
        " source not configured yet. Exit 1 when the source gave nothing to read.",
    )  # fmt: skip
    trial.add_argument("source", metavar="VENDOR|URL", help="a vendor id, or an http(s) URL")
    trial.add_argument("--kind", help="read it as this kind: feed, jsonfeed, sitemap, page")
    trial.add_argument(
        "--include", action="append", metavar="REGEX",
        help="(sitemap, page) keep only page URLs matching one of these (repeatable)",
    )  # fmt: skip
    trial.add_argument(
        "--exclude", action="append", metavar="REGEX",
        help="(sitemap, page) leave out page URLs matching any of these (repeatable)",
    )  # fmt: skip
    trial.add_argument(
        "--limit", type=int, default=20, metavar="N", help="items printed (default 20; 0: all)"
    )
    feeds_file(trial)
    trial.set_defaults(handler=cmd_try, logs=False)


def vendor_from_host(url: str) -> str:
    """A vendor id made from `url`'s host, IDNA-encoded: `www.` and the top-level domain dropped,
    the rest lower-case letters, digits and `_` ("https://www.example.org/x" -> "example").
    `arxiv` and `arxiv_*` name the arXiv family (FeedConfig.family): off arxiv.org such an id
    gets the prefix `site_`. ConfigError (exit 2: give --vendor) when no id can be made."""
    from crovia_spider.config.feeds import ARXIV_FAMILY
    from crovia_spider.exceptions import ConfigError
    from crovia_spider.fetching.fetchpolicy import is_ip_literal

    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    try:
        host = host.encode("idna").decode("ascii") if host else ""
    except UnicodeError:
        host = ""
    labels = host.removeprefix("www.").split(".")
    if len(labels) > 1 and not is_ip_literal(host):
        labels = labels[:-1]
    vendor = re.sub(r"[^a-z0-9]+", "_", "_".join(labels)).strip("_")
    if not vendor:
        why = f"cannot make a vendor id from the host of {printable(url)}"
        raise ConfigError(f"{why}: give one with --vendor ID")
    arxiv_host = host == "arxiv.org" or host.endswith(".arxiv.org")
    if not arxiv_host and (vendor == ARXIV_FAMILY or vendor.startswith(ARXIV_FAMILY + "_")):
        vendor = f"site_{vendor}"
    return vendor


def cmd_add(args: argparse.Namespace) -> int:
    from crovia_spider.cli.feeds_probe import (
        clean_title,
        discover,
        project_settings,
        run_crawls,
        try_feeds,
    )
    from crovia_spider.config.feeds import DEFAULT_SPIDER

    if args.watch:
        return add_watch(args)
    if args.every:
        from crovia_spider.exceptions import ConfigError

        raise ConfigError("--every is for a watched page (--watch)")
    quiet_robots(args.verbose)
    existing = existing_feeds(args.feeds_file)
    vendor = args.vendor or vendor_from_host(args.url)
    _checked_entry({"vendor": vendor, "url": args.url})
    refuse_taken(args.feeds_file, existing, vendor, args.url)
    with tempfile.TemporaryDirectory(prefix="crovia-feeds-add-") as tmp:
        candidates_file = Path(tmp) / "feeds.toml"

        async def plan(process: Any) -> tuple[Any, dict[str, Any]]:
            found = await discover(process, args.url)
            found.candidates = list({c.url: c for c in reversed(found.candidates)}.values())[::-1]
            if not found.candidates:
                return found, {}
            tables = [{"vendor": f"candidate_{n}", "kind": c.kind, "url": c.url}
                      for n, c in enumerate(found.candidates, start=1)]  # fmt: skip
            candidates_file.write_text(render_tables(tables), encoding="utf-8")
            vendors = [table["vendor"] for table in tables]
            return found, await try_feeds(process, DEFAULT_SPIDER, vendors)

        settings = project_settings(_overrides(tmp, args.verbose, candidates_file))
        found, trials = run_crawls(settings, plan)
    chosen, some_read_none = _chosen(found, trials)
    if found.html and (chosen is None or chosen.kind == "sitemap"):
        _print_page_example(vendor, args.url, args.feeds_file)
    if chosen is None:
        print(f"no feed, JSON Feed or sitemap found at {printable(args.url)}; tried:")
        _print_tried(found.tried)
        return EXIT_CHECK_FAILED
    if some_read_none and found.tried:
        print("refused or failed:")  # a source read no items: perhaps one of these is why
        _print_tried(found.tried)
    entry = {"vendor": vendor, "kind": chosen.kind, "url": chosen.url}
    title = clean_title(chosen.title)
    entry |= {"title": title} if title else {}
    _checked_entry(entry)
    what = f"{KIND_NAMES[chosen.kind]} {printable(chosen.url)}"
    if args.dry_run:
        refuse_taken(args.feeds_file, existing, vendor, chosen.url)
        print(f"would add {vendor}: {what} (--dry-run: {args.feeds_file} not written):")
        print(render_tables([entry]).rstrip("\n"))
        return EXIT_OK
    add_entry(args.feeds_file, entry)
    print(f"added {vendor}: {what} -> {args.feeds_file}")
    given = ""
    if args.feeds_file != path_default("CROVIA_FEEDS_FILE"):
        given = f" --feeds-file {shlex.quote(str(args.feeds_file))}"
    print(f"try it: crovia feeds try {vendor}{given}; crawl it: crovia crawl {vendor}{given}")
    return EXIT_OK


def add_watch(args: argparse.Namespace) -> int:
    """`feeds add URL --watch`: a source of kind watch for URL (docs/spider.md, "Watching
    pages"), vendor `<host>_watch` unless --vendor; validated and appended as any entry. Nothing
    is fetched now: the next crawl observes the page and captures it."""
    existing = existing_feeds(args.feeds_file)
    vendor = args.vendor or vendor_from_host(args.url) + "_watch"
    entry: dict[str, Any] = {"vendor": vendor, "kind": "watch", "urls": [args.url]}
    entry |= {"every": args.every} if args.every else {}
    _checked_entry(entry)
    refuse_taken(args.feeds_file, existing, vendor, args.url)
    if args.dry_run:
        print(f"would add {vendor}: watched page {printable(args.url)} (--dry-run: not written):")
        print(render_tables([entry]).rstrip("\n"))
        return EXIT_OK
    add_entry(args.feeds_file, entry)
    print(f"added {vendor}: watched page {printable(args.url)} -> {args.feeds_file}")
    print(f"capture it now: crovia capture {vendor}; its changes: crovia changes --vendor {vendor}")
    return EXIT_OK


def _chosen(found: Any, trials: dict[str, Any]) -> tuple[Any, bool]:
    """The candidate to write, each shown with its first items: of those read without an error
    (and, when they read no items, with no entry left unread), one with items before one
    without, then by KIND_ORDER; None when none was read. And whether any read no items."""
    readable, read_none = [], False
    for n, candidate in enumerate(found.candidates, start=1):
        trial = trials.get(f"candidate_{n}")
        _print_candidate(candidate, trial)
        read_none |= trial is None or not trial.items
        if trial is not None and not trial.error and not trial.read_nothing:
            readable.append((not trial.items, KIND_ORDER.index(candidate.kind), n, candidate))
    return min(readable, default=(None,))[-1], read_none


def _print_tried(tried: list[str]) -> None:
    for line in tried:
        print(f"  {printable(line)}")


def quiet_robots(verbose: bool) -> None:
    """Unless -v, the robots.txt middleware logs a host it cannot reach in one line of the
    fetch's own record, not a traceback (a host that does not resolve is an answer here)."""
    if not verbose:
        logging.getLogger("scrapy.downloadermiddlewares.robotstxt").setLevel(logging.CRITICAL)


def _overrides(tmp: str, verbose: bool, feeds_file: Path) -> dict[str, Any]:
    """The settings of a probe: the feed list it reads, and a ledger directory with no feed
    state in it (nothing is written there: no pipeline runs)."""
    overrides: dict[str, Any] = {
        "CROVIA_FEEDS_FILE": str(feeds_file),
        "CROVIA_LEDGER_DIR": str(Path(tmp) / "no-ledger"),
    }
    return overrides | ({"LOG_LEVEL": "INFO"} if verbose else {})


def _checked_entry(entry: dict[str, Any]) -> Any:
    """The FeedConfig of `entry`; ConfigError (exit 2) saying what is wrong with it."""
    from crovia_spider.config.feeds import feed_from_table
    from crovia_spider.exceptions import ConfigError

    try:
        return feed_from_table(entry)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"not a valid [[feeds]] entry: {exc}") from None


def _print_candidate(candidate: Any, trial: Any) -> None:
    title = f' "{printable(candidate.title)}"' if candidate.title else ""
    print(f"{candidate.kind}: {printable(candidate.url)}{title} ({candidate.named_by})")
    if trial is None or trial.error:
        print(f"  not read: {printable(trial.error if trial else 'not fetched')}")
        return
    for item in trial.items[:PREVIEW]:
        print(f"  {printable(item.title or '(no title)')}  {printable(item.link)}")
    if not trial.items:
        for reason in trial.reasons:
            print(f"  read no items: {printable(reason)}")
    more = len(trial.items) - PREVIEW
    count = len(trial.items)
    print(f"  ... and {more} more" if more > 0 else f"  ({count} item{'s' * (count != 1)})")


def _print_page_example(vendor: str, url: str, feeds_file: Path) -> None:
    import tomlkit

    selectors = tomlkit.inline_table()
    selectors.update(PAGE_EXAMPLE)
    example = {"vendor": vendor, "kind": "page", "url": url, "selectors": selectors}
    print(f'{printable(url)} is an HTML page. Read as a listing page (kind "page"), it needs')
    print("CSS selectors, which `crovia feeds add` cannot guess. Paste this into")
    print(f"{feeds_file}, fit the selectors to the page, and check: crovia feeds try {vendor}")
    print(render_tables([example]).rstrip("\n"))


def cmd_try(args: argparse.Namespace) -> int:
    from crovia_spider.cli.feeds_probe import project_settings, run_crawls, try_feeds

    quiet_robots(args.verbose)
    table = _source_table(args)
    feed = _checked_entry(table)
    with tempfile.TemporaryDirectory(prefix="crovia-feeds-try-") as tmp:
        source_file = Path(tmp) / "feeds.toml"
        source_file.write_text(render_tables([table]), encoding="utf-8")
        settings = project_settings(_overrides(tmp, args.verbose, source_file))
        spider = feed.spider

        async def plan(process: Any) -> dict[str, Any]:
            return await try_feeds(process, spider, [feed.vendor])

        trial = run_crawls(settings, plan).get(feed.vendor)
    return _print_trial(feed, trial, args.limit)


def _source_table(args: argparse.Namespace) -> dict[str, Any]:
    """The one `[[feeds]]` table to try: the configured VENDOR's, or one made for URL; --kind,
    --include and --exclude replace its own."""
    from crovia_spider.config.feeds import DEFAULT_SPIDER, check_vendor_ids, is_pattern, load_feeds
    from crovia_spider.config.spider_modules import spider_names
    from crovia_spider.config.tables import read_toml
    from crovia_spider.exceptions import ConfigError

    if "://" in args.source:
        table: dict[str, Any] = {"vendor": vendor_from_host(args.source), "url": args.source}
    elif is_pattern(args.source) or "," in args.source:
        raise ConfigError(f"feeds try takes one vendor id, not a pattern: {printable(args.source)}")
    else:
        feeds = load_feeds(args.feeds_file)  # ConfigError: exit 2, naming file and entry
        check_vendor_ids(feeds, [args.source], None)
        tables = read_toml(args.feeds_file)["feeds"]
        table = dict(next(t for t in tables if t.get("vendor") == args.source))
        if table.get("spider", DEFAULT_SPIDER) not in spider_names():
            table["new_spider"] = True  # declared by another entry of the file, maybe
    for key in ("kind", "include", "exclude"):
        if getattr(args, key):
            table[key] = getattr(args, key)
    return table


def _print_trial(feed: Any, trial: Any, limit: int) -> int:
    print(f"{feed.vendor} ({feed.kind}): {printable(feed.url)}")
    if trial is None:
        print("  not fetched (see the log above)")
        return EXIT_CHECK_FAILED
    if trial.final_url and trial.final_url != feed.url:
        print(f"  final URL {printable(trial.final_url)}")
    shown = trial.items if limit <= 0 else trial.items[:limit]
    for item in shown:
        date = item.published or "-"
        print(
            f"  {printable(date)}  {printable(item.title or '(no title)')}  {printable(item.link)}"
        )
    if len(trial.items) > len(shown):
        print(f"  ... and {len(trial.items) - len(shown)} more (--limit 0 shows all)")
    entries, count = trial.entries, len(trial.items)
    print(
        f"{count} item{'s' * (count != 1)}; entries {entries.get('in_body', 0)}, unread"
        f" {entries.get('unread', 0)}, excluded {trial.excluded}, over the limit"
        f" {entries.get('over_limit', 0)}"
    )
    for reason in trial.reasons:
        print(f"error: {printable(reason)}")
    return EXIT_CHECK_FAILED if trial.read_nothing else EXIT_OK
