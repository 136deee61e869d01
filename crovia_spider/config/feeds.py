"""The feed list (`config/feeds.toml`): loading and validation, before any request is sent.

Each `[[feeds]]` table is one feed. Required: `vendor` (an id such as `arxiv_cs_ai`, unique in the
file) and `url` (http or https). Optional: `spider` (default `vendor_press`), `category` (default
`news`), `enabled` (default true), `delay` (seconds between requests to this feed's host, at least
the host's default), `title` and `notes` (free text for people), `new_spider` (true: `spider`
names a new spider, made from config), `relay` (who serves the bytes when it is not the vendor:
a short printable name such as "Olshansk/rss-feeds (GitHub)", signed in every fetch record and
item of the feed; docs/spider.md, "Relays"). Unknown keys are errors, so a typo cannot silently
switch an option off; an unknown spider name is one too, unless an entry declares it new. Data
flow: docs/design.md, step 1.

`kind` (default "feed") names the source's reader (crovia_spider/feed/kinds.py): "feed" for RSS,
Atom and RDF, "jsonfeed" for JSON Feed 1 and 1.1, "sitemap" for a sitemap, a sitemap index or a
robots.txt naming sitemaps, "page" for an HTML listing page read with CSS `selectors` (a table of
`item`, `link`, `title` and optional `date`; page only). `include` and `exclude` (sitemap and page
only) are lists of Python regular expressions searched in each page URL, as Scrapy's
SitemapSpider `sitemap_rules` and LinkExtractor `allow` / `deny` take them: a URL is the source's
when no `include` is given or one matches, and no `exclude` matches (docs/spider.md, "Source
kinds"). Kind "oaipmh" harvests arXiv's OAI-PMH interface (`url` its endpoint, no query): `set`
(required: an OAI-PMH setSpec such as "cs", or a list of 1 to MAX_OAI_SETS) and `metadata_prefix`
(only "arXivRaw", the default);
oaipmh only, and only for an arXiv source (docs/spider.md, "arXiv, complete"). `capture` (true or
false; default true for kinds sitemap and page, false for the others and for arXiv's) captures
each new or updated item's page (docs/spider.md, "Captures"); `capture_selector` (CSS, such as
"article" or "div.story") names where a captured page's main text is.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crovia_spider.config.tables import check_top_level, read_toml
from crovia_spider.exceptions import ConfigError
from crovia_spider.suggest import did_you_mean

DEFAULT_SPIDER = "vendor_press"
# arXiv's feeds (cs.AI, cs.LG, ...) list one paper in several categories: they are one source
# family, whose items share identities. Every other feed is a family of its own, named by its
# vendor id.
ARXIV_FAMILY = "arxiv"
DEFAULT_CATEGORY = "news"
DEFAULT_KIND = "feed"
# A reader each: crovia_spider/feed/kinds.py.
KINDS = ("feed", "jsonfeed", "sitemap", "page", "oaipmh", "watch")
OAIPMH_KIND = "oaipmh"
MAX_OAI_SETS = 10  # sets one "oaipmh" source harvests
OAI_PREFIXES = ("arXivRaw",)  # the metadata formats an "oaipmh" source is read in (feed/oaipmh.py)
# An OAI-PMH setSpec: colon-separated parts of unreserved URI characters (the protocol's grammar).
_SET_SPEC = re.compile(r"[A-Za-z0-9\-_.!~*'()]{1,50}(?::[A-Za-z0-9\-_.!~*'()]{1,50}){0,3}")
PATTERN_KINDS = ("sitemap", "page")  # the kinds whose URLs `include` / `exclude` pick
CAPTURE_KINDS = ("sitemap", "page")  # captured unless `capture = false` (FeedConfig.captures)
SELECTORS = ("item", "link", "title", "date")  # a page's selectors; `date` may be left out
MAX_PATTERNS = 100  # include or exclude patterns of one entry
PATTERN_CHARS = 500  # one pattern or selector
PATTERNS_CHARS = 4000  # all of an entry's include and exclude patterns together
MAX_FEEDS = 10_000  # a feed list, and an OPML import into it; a crawl of them all takes hours

# Ids end up in envelope fields (`<category>.<spider>.v1`) and in spider names: keep them plain.
_ID = re.compile(r"[a-z0-9][a-z0-9_]*")  # fullmatch, not ^...$ (which lets a final newline by)
_KEYS = {
    "vendor", "url", "spider", "new_spider", "category", "enabled", "delay", "title", "notes",
    "relay", "kind", "include", "exclude", "selectors", "capture", "set", "metadata_prefix",
    "capture_selector",
}  # fmt: skip
_KEYS |= {"urls", "every"}  # kind "watch"
# A relay's name is read in every verifier's output: one short line of printable text.
RELAY_CHARS = 80


@dataclass(frozen=True)
class FeedConfig:
    """One validated `[[feeds]]` entry."""

    vendor: str
    url: str
    kind: str = DEFAULT_KIND  # the source's reader (KINDS)
    spider: str = DEFAULT_SPIDER
    category: str = DEFAULT_CATEGORY
    enabled: bool = True
    delay: float | None = None
    title: str = ""
    notes: str = ""
    new_spider: bool = False
    relay: str = ""  # who serves the feed's bytes, when not the vendor ("" = the vendor itself)
    include: tuple[str, ...] = ()  # patterns a sitemap's or a page's URLs must match (one of)
    exclude: tuple[str, ...] = ()  # patterns they must not match
    selectors: tuple[tuple[str, str], ...] = ()  # a page's (name, CSS) pairs, in SELECTORS order
    urls: tuple[str, ...] = ()  # kind "watch": the pages watched (`url` is the first)
    every: str = ""  # kind "watch": how often they are captured ("": CROVIA_WATCH_EVERY)
    # Capture each new or updated item's page (docs/spider.md "Captures"); "browser": and also
    # as a browser renders it; None: the kind's default (CAPTURE_KINDS), read through `captures`.
    capture: bool | str | None = None
    # Where a captured page's main text is: a CSS selector ("" : the article trafilatura finds;
    # crovia_spider/capture/text.py).
    capture_selector: str = ""
    oai_set: str = ""  # kind "oaipmh": the setSpecs harvested, space-separated (TOML key `set`)
    metadata_prefix: str = ""  # kind "oaipmh": the metadata format asked for

    @property
    def oai_sets(self) -> tuple[str, ...]:
        """Kind "oaipmh": the sets harvested, in order (a setSpec holds no space)."""
        return tuple(self.oai_set.split())

    @property
    def captures(self) -> bool:
        """Whether this source's items' pages are captured: `capture` when set, else true for
        the kinds whose URLs are the vendor's own pages (a sitemap's, a listing page's), false
        for feeds (an entry may link anywhere) and for arXiv's (its own answer: docs/spider.md)."""
        if self.kind == WATCH_KIND:
            return True  # all a watched page is
        if self.capture is not None:
            return bool(self.capture)
        return self.kind in CAPTURE_KINDS and self.family != ARXIV_FAMILY

    @property
    def options(self) -> dict[str, Any]:
        """What the source's reader takes besides the body (crovia_spider/feed/kinds.py), and
        what its fetch records sign as `select` so anyone reads a kept body the same way: a
        page's `selectors`, a sitemap's or a page's `include` and `exclude` (each only when
        given); {} for a feed."""
        options: dict[str, Any] = {}
        if self.selectors:
            options["selectors"] = dict(self.selectors)
        if self.include:
            options["include"] = list(self.include)
        if self.exclude:
            options["exclude"] = list(self.exclude)
        return options

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def family(self) -> str:
        """The source family that scopes its items' identities: "arxiv" for arXiv's feeds (an
        arXiv host, or a vendor id `arxiv` or `arxiv_*`, reserved for them), else the vendor id."""
        host = self.host
        arxiv_host = host == "arxiv.org" or host.endswith(".arxiv.org")
        if arxiv_host or self.vendor == ARXIV_FAMILY or self.vendor.startswith("arxiv_"):
            return ARXIV_FAMILY
        return self.vendor


def load_feeds(path: Path | str, spiders: Iterable[str] | None = None) -> list[FeedConfig]:
    """Every entry of the feed file at `path`, validated, in file order (disabled ones included).

    `spiders` are the names the spider modules define (default: those of the project's
    SPIDER_MODULES, read from their source: crovia_spider/config/spider_modules.py). Raises
    ConfigError
    naming the file, the entry and the reason: unreadable or invalid TOML, over a bound (size,
    nesting: crovia_spider/config/tables.py; more than MAX_FEEDS entries), a top-level table
    other than `[[feeds]]` (a typo such as `[[feed]]`), no `[[feeds]]`, an unknown key, a missing
    or malformed field, a duplicate vendor id or URL, a spider name that is neither in `spiders`
    nor declared new (`new_spider = true`) by an entry.
    """
    path = Path(path)
    try:
        document = read_toml(path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the feed list: {exc}") from exc
    check_top_level(path, document, {"feeds": "[[feeds]]"})
    entries = document.get("feeds")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: no [[feeds]] entries")
    if len(entries) > MAX_FEEDS:
        raise ConfigError(
            f"{path}: {len(entries):,} [[feeds]] entries, more than the {MAX_FEEDS:,} a feed list"
            " may have"
        )
    feeds = [_entry(path, index, entry) for index, entry in enumerate(entries, start=1)]
    _check_unique(path, feeds)
    if spiders is None:
        from crovia_spider.config.spider_modules import spider_names

        spiders = spider_names()
    _check_spiders(path, feeds, frozenset(spiders))
    return feeds


def _check_spiders(path: Path, feeds: list[FeedConfig], code: frozenset[str]) -> None:
    """A spider name must be a spider module's or declared new: `htmlist` for `htmllist` would
    otherwise be a new spider reading every page as a feed, and nothing would say so."""
    declared = {feed.spider for feed in feeds if feed.new_spider}
    known = sorted(code | declared)
    for index, feed in enumerate(feeds, start=1):
        if feed.spider not in known:
            raise ConfigError(
                f"{path}: [[feeds]] entry {index} (vendor {feed.vendor!r}): unknown spider"
                f" {feed.spider!r}; spiders: {', '.join(known)}{did_you_mean(feed.spider, known)}"
                " (a new spider made from this config is declared with new_spider = true)"
            )


def feeds_for_spider(
    feeds: list[FeedConfig], spider: str, vendor: str | None = None, skip: str | None = None
) -> list[FeedConfig]:
    """The feeds that `spider` crawls: the enabled ones, narrowed by `vendor` and `skip`.

    Both take comma-separated vendor ids or shell patterns (`arxiv_*`), so one schedule job can
    take arXiv and another everything else. A vendor named exactly is crawled even when disabled
    (a deliberate one-off); a pattern matches enabled feeds only. ConfigError if nothing is left.
    """
    own = [f for f in feeds if f.spider == spider]
    chosen = [f for f in own if f.enabled]
    if vendor is not None:
        wanted = _patterns(vendor)
        check_vendor_ids(feeds, wanted, spider)
        chosen = [f for f in own if f.vendor in wanted or (f.enabled and matches(f, wanted))]
    if skip is not None:
        chosen = [f for f in chosen if not matches(f, _patterns(skip))]
    if not chosen:
        once = f" once {skip!r} is skipped" if skip else ""
        if vendor is None:
            raise ConfigError(f"spider {spider!r} has no enabled feed{once}")
        raise ConfigError(f"no feed with vendor {vendor!r} for spider {spider!r}{once}")
    return chosen


def check_vendor_ids(feeds: list[FeedConfig], wanted: list[str], spider: str | None) -> None:
    """Raise ConfigError for a plain vendor id of `wanted` (not a pattern) that names no feed (of
    `spider`, if given), suggesting the closest id: `-a vendor=openai,anthropc` must not quietly
    crawl openai alone."""
    ids = [f.vendor for f in feeds if spider is None or f.spider == spider]
    for name in wanted:
        if is_pattern(name) or name in ids:
            continue
        other = next((f.spider for f in feeds if f.vendor == name), None)
        where = f" for spider {spider!r}" if spider else ""
        if other is not None:
            raise ConfigError(f"no feed with vendor {name!r}{where}: it is spider {other!r}'s")
        raise ConfigError(f"no feed with vendor {name!r}{where}{did_you_mean(name, ids)}")


def is_pattern(text: str) -> bool:
    """True when `text` is a shell pattern (`arxiv_*`), not a plain vendor id."""
    return any(ch in text for ch in "*?[")


def _patterns(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def matches(feed: FeedConfig, patterns: list[str]) -> bool:
    """True when the feed's vendor id matches one of the shell `patterns`."""
    return any(fnmatch.fnmatchcase(feed.vendor, pattern) for pattern in patterns)


def _entry(path: Path, index: int, raw: Any) -> FeedConfig:
    where = f"{path}: [[feeds]] entry {index}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: not a table")
    if isinstance(raw.get("vendor"), str):
        where += f" (vendor {raw['vendor']!r})"
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {sorted(_KEYS)}")
    try:
        return feed_from_table(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def feed_from_table(raw: dict[str, Any]) -> FeedConfig:
    """The FeedConfig of one `[[feeds]]` table whose keys are known. Raises ValueError or
    TypeError saying which field is wrong (the caller adds the file and entry)."""
    raw = watch_table(raw)
    for key in ("vendor", "url"):
        if key not in raw:
            raise ValueError(f"missing required key {key!r}")
    for key in ("vendor", "url", "spider", "category", "title", "notes", "relay"):
        if key in raw and not isinstance(raw[key], str):
            raise TypeError(f"{key!r} must be a string")
    for key in ("vendor", "spider", "category"):
        if key in raw and not _ID.fullmatch(raw[key]):
            raise ValueError(f"{key!r} = {raw[key]!r}: use lower-case letters, digits and _")
    kind = raw.get("kind", DEFAULT_KIND)
    check_kind(kind)
    _check_url(raw["url"])
    patterns = {key: check_patterns(key, raw[key], kind) for key in ("include", "exclude")
                if key in raw}  # fmt: skip
    signed = sum(len(p) for key in patterns for p in patterns[key])
    if signed > PATTERNS_CHARS:  # every fetch record signs them, in a line of 65,535 bytes
        raise ValueError(
            f"'include' and 'exclude' hold {signed:,} characters, more than {PATTERNS_CHARS:,}"
        )
    selectors = check_selectors(raw.get("selectors"), kind)
    oai = check_oaipmh(raw, kind)
    if "relay" in raw:
        check_relay(raw["relay"])
    for key in ("enabled", "new_spider", "capture"):
        if not isinstance(raw.get(key, False), bool) and (key, raw[key]) != ("capture", "browser"):
            extra = ' or "browser"' if key == "capture" else ""
            raise TypeError(f"{key!r} must be true or false{extra}")
    delay = raw.get("delay")
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int | float)):
        raise TypeError("'delay' must be a number of seconds")
    if delay is not None and not 0 <= delay <= 3600:
        raise ValueError("'delay' must be between 0 and 3600 seconds")
    delay = None if delay is None else float(delay)
    fields = {k: v for k, v in raw.items() if k not in ("set", "metadata_prefix")}
    feed = FeedConfig(**{**fields, **patterns, **oai, "selectors": selectors, "delay": delay})
    if "capture_selector" in raw:
        check_capture_selector(feed)
    return feed


def check_capture_selector(feed: FeedConfig) -> None:
    """A `capture_selector`, checked: CSS of 1 to PATTERN_CHARS characters that lxml reads (no
    pseudo-element: it names elements, whose text is the page's main text), on a source whose
    pages are captured. Raises TypeError or ValueError naming it."""
    css = feed.capture_selector
    if not isinstance(css, str) or not 0 < len(css.strip()) <= PATTERN_CHARS:
        raise TypeError(f"'capture_selector' must be CSS of 1 to {PATTERN_CHARS} characters")
    if not feed.captures:
        raise ValueError(
            "'capture_selector' names where a captured page's article is: this source captures"
            " no page (capture = true captures them)"
        )
    from lxml.cssselect import CSSSelector

    try:
        CSSSelector(css, translator="html")
    except Exception as exc:  # cssselect's SelectorError and its kin: a selector to fix
        raise ValueError(
            f"'capture_selector' = {css!r} is not CSS naming elements ({exc})"
        ) from None


def _check_url(url: str) -> None:
    if any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in url):
        raise ValueError(f"'url' = {url!r}: spaces and control characters are not allowed")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"'url' = {url!r}: an absolute http(s) URL is required")


def check_relay(relay: str) -> None:
    """Raise ValueError unless `relay` names a party in one short line: 1 to RELAY_CHARS
    printable characters (no control, format or separator character but the space), without
    spaces at either end."""
    if not 0 < len(relay) <= RELAY_CHARS:
        raise ValueError(f"'relay' must be 1 to {RELAY_CHARS} characters, not {len(relay)}")
    if not relay.isprintable() or relay.strip() != relay:
        raise ValueError(
            f"'relay' = {relay!r}: printable text without control characters or outer spaces"
        )


def check_kind(kind: Any) -> None:
    """Raise TypeError or ValueError unless `kind` is one of KINDS."""
    if not isinstance(kind, str):
        raise TypeError("'kind' must be a string")
    if kind not in KINDS:
        raise ValueError(
            f"'kind' = {kind!r} is not a source kind; kinds: {', '.join(KINDS)}"
            + did_you_mean(kind, list(KINDS))
        )


def check_oaipmh(raw: dict[str, Any], kind: str) -> dict[str, str]:
    """The `set` and `metadata_prefix` of an entry, checked, as FeedConfig fields: required (set)
    and defaulted (metadata_prefix, "arXivRaw") for kind "oaipmh", whose `url` is an arXiv
    source's endpoint without a query; refused for any other kind. Raises TypeError or ValueError
    naming the key."""
    given = [key for key in ("set", "metadata_prefix") if key in raw]
    if kind != OAIPMH_KIND:
        if given:
            raise ValueError(f'{given[0]!r} is an option of kind "oaipmh", not of kind {kind!r}')
        return {}
    sets, prefix = raw.get("set"), raw.get("metadata_prefix", OAI_PREFIXES[0])
    sets = [sets] if isinstance(sets, str) else sets
    if not isinstance(sets, list) or not all(isinstance(s, str) for s in sets):
        raise TypeError("kind 'oaipmh' needs 'set': a setSpec such as 'cs', or a list of them")
    if not isinstance(prefix, str):
        raise TypeError("'metadata_prefix' must be a string")
    if not 0 < len(sets) <= MAX_OAI_SETS or len(set(sets)) < len(sets):
        raise ValueError(f"'set' must name 1 to {MAX_OAI_SETS} sets, each once")
    for oai_set in sets:
        if not _SET_SPEC.fullmatch(oai_set):
            raise ValueError(f"'set' = {oai_set!r} is not an OAI-PMH setSpec (such as \"cs\")")
    if prefix not in OAI_PREFIXES:
        raise ValueError(
            f"'metadata_prefix' = {prefix!r}: kind \"oaipmh\" reads {', '.join(OAI_PREFIXES)}"
        )
    parts = urlsplit(raw["url"])
    if parts.query or parts.fragment:
        raise ValueError('kind "oaipmh" takes the endpoint\'s URL without a query or fragment')
    probe = FeedConfig(vendor=raw["vendor"], url=raw["url"])
    if probe.family != ARXIV_FAMILY:
        raise ValueError(
            'kind "oaipmh" reads arXiv\'s OAI-PMH interface: an arXiv host, or a vendor id arxiv_*'
        )
    return {"oai_set": " ".join(sets), "metadata_prefix": prefix}


def check_patterns(key: str, patterns: Any, kind: str) -> tuple[str, ...]:
    """The `include` or `exclude` (`key`) patterns of an entry of `kind`, checked: a list of 1 to
    MAX_PATTERNS Python regular expressions of 1 to PATTERN_CHARS characters that compile, for a
    sitemap or a page. Raises TypeError or ValueError naming the key and the pattern."""
    if kind not in PATTERN_KINDS:
        raise ValueError(f"{key!r} picks URLs of a sitemap or a page, not of kind {kind!r}")
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise TypeError(f"{key!r} must be a list of regular expressions (strings)")
    if not 0 < len(patterns) <= MAX_PATTERNS:
        raise ValueError(f"{key!r} must hold 1 to {MAX_PATTERNS} patterns, not {len(patterns)}")
    for pattern in patterns:
        if not 0 < len(pattern) <= PATTERN_CHARS:
            raise ValueError(f"{key!r}: a pattern is 1 to {PATTERN_CHARS} characters")
        try:
            re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            raise ValueError(f"{key!r}: {pattern!r} is not a regular expression ({exc})") from None
    return tuple(patterns)


def check_selectors(selectors: Any, kind: str) -> tuple[tuple[str, str], ...]:
    """A page's `selectors`, checked: a table of CSS selectors (parsel's dialect, `::text` and
    `::attr(name)` included) `item`, `link` and `title`, and `date` if wanted; required for
    kind "page", refused for any other. Raises TypeError or ValueError naming the selector."""
    if kind != "page":
        if selectors is not None:
            raise ValueError(f"'selectors' read a listing page (kind \"page\"), not kind {kind!r}")
        return ()
    if not isinstance(selectors, dict):
        raise ValueError(
            'kind "page" needs \'selectors\' = { item = "CSS", link = "CSS", title = "CSS" }'
            ' (and date = "CSS" if wanted)'
        )
    unknown = sorted(set(selectors) - set(SELECTORS))
    if unknown:
        raise ValueError(
            f"'selectors' has unknown key(s) {', '.join(unknown)};"
            f" selectors: {', '.join(SELECTORS)}" + did_you_mean(unknown[0], list(SELECTORS))
        )
    missing = [name for name in SELECTORS[:3] if name not in selectors]
    if missing:
        raise ValueError(f"'selectors' needs {', '.join(missing)}")
    from parsel.csstranslator import HTMLTranslator  # parsel comes with Scrapy

    translator = HTMLTranslator()
    for name, css in selectors.items():
        if not isinstance(css, str) or not 0 < len(css.strip()) <= PATTERN_CHARS:
            raise ValueError(f"selector {name!r} must be CSS of 1 to {PATTERN_CHARS} characters")
        try:
            translator.css_to_xpath(css)
        except Exception as exc:  # cssselect's SelectorError and its kin: a selector to fix
            raise ValueError(
                f"selector {name!r} = {css!r} is not CSS parsel reads ({exc})"
            ) from None
    return tuple((name, selectors[name]) for name in SELECTORS if name in selectors)


def _check_unique(path: Path, feeds: list[FeedConfig]) -> None:
    for field in ("vendor", "url"):
        seen: set[str] = set()
        for index, feed in enumerate(feeds, start=1):
            value = getattr(feed, field)
            if value in seen:
                raise ConfigError(f"{path}: [[feeds]] entry {index}: duplicate {field} {value!r}")
            seen.add(value)


# -- kind "watch": pages followed for themselves (docs/spider.md, "Watching pages") ----------------

WATCH_KIND = "watch"
MAX_WATCH_URLS = 50  # the pages one watch source lists
_EVERY = re.compile(r"([0-9]{1,6})([smhd])")  # as CROVIA_WATCH_EVERY and the capture book read them
_EVERY_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def watch_table(raw: dict[str, Any]) -> dict[str, Any]:
    """A `[[feeds]]` table with its kind "watch" options checked: `urls` (1 to MAX_WATCH_URLS
    distinct http(s) URLs, each page an item of its own; `url` is then the first of them and is
    not given), `every` (an interval such as "1h"; "" takes CROVIA_WATCH_EVERY), and no `capture
    = false` (a watched page is captured, that is all it is). `urls` and `every` are refused for
    any other kind. Raises TypeError or ValueError naming the key."""
    kind = raw.get("kind", DEFAULT_KIND)
    given = [key for key in ("urls", "every") if key in raw]
    if kind != WATCH_KIND:
        if given:
            raise ValueError(f'{given[0]!r} is an option of kind "watch", not of kind {kind!r}')
        return raw
    if "url" in raw:
        raise ValueError("kind \"watch\" lists its pages in 'urls', not 'url'")
    urls = raw.get("urls")
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise TypeError("kind \"watch\" needs 'urls', a list of page URLs")
    if not 0 < len(urls) <= MAX_WATCH_URLS:
        raise ValueError(f"'urls' must hold 1 to {MAX_WATCH_URLS} URLs, not {len(urls)}")
    for url in urls:
        _check_url(url)
    if len(set(urls)) != len(urls):
        raise ValueError("'urls' lists a URL twice")
    every = raw.get("every", "")
    if not isinstance(every, str):
        raise TypeError("'every' must be an interval such as \"1h\"")
    if every:
        every_seconds(every)
    if raw.get("capture") is False:
        raise ValueError('a source of kind "watch" is captured: capture = false is refused')
    return {**raw, "url": urls[0], "urls": tuple(urls), "every": every}


def every_seconds(every: str) -> int:
    """An interval ("90s", "30m", "1h", "7d") in seconds; ValueError unless it is one above 0."""
    match = _EVERY.fullmatch(every.strip())
    if match is None or int(match[1]) <= 0:
        raise ValueError(f"'every' = {every!r} is not an interval such as 90s, 30m, 1h or 7d")
    return int(match[1]) * _EVERY_UNITS[match[2]]
