"""An HTML listing page (a vendor's news index) read with CSS selectors as entries of feedparser's
shape: the "page" source kind, for a vendor that publishes no feed.

The body is read as Scrapy reads a response: decoded by `w3lib.encoding.html_to_unicode` (a
byte-order mark, then the HTTP charset, then a `<meta>` charset, then UTF-8), parsed by lxml's HTML
parser through `parsel.Selector`, and queried with the source's `selectors` (parsel's CSS dialect,
`::text` and `::attr(name)` included; crovia_spider/config/feeds.py checks their names):

- `item` selects the items, in document order; `link`, `title` and the optional `date` are asked
  of each item, relative to it (an item element matches its own selector too, as in parsel). The
  first match counts: a string (`::text`, `::attr(...)`) as it is, an element by its `href`
  attribute for `link` and by its whole text (XPath `string()`) for `title` and `date`. Text has
  its whitespace collapsed and stripped;
- a link is made absolute against the final URL the body came from (the `content-location`
  header) with `urllib.parse.urljoin`: the final URL, not a `<base href>` the page names (a page
  may not send its links elsewhere than where it was served from); only an http(s) URL that
  crovia_spider/feed/urls.py's `web_url` can make safe is kept;
- an item without such a link or without a title, or holding a string that cannot be UTF-8 (a
  lone surrogate cannot be signed; lxml cannot take one either, so the decoded text has each
  replaced by the noncharacter U+FDD0, and an item holding U+FDD0 is malformed too), is left out
  alone and counted (`malformed_entries`);
- a link already taken from an earlier item of the page (as `web_url` writes it) is left out and
  counted nowhere: a listing often links one article twice (its picture and its headline), and
  the first occurrence is the one kept;
- the source's `include` and `exclude` patterns (Python regular expressions, `re.search` on the
  absolute link) leave out an item unless one `include` matches (or there are none) and no
  `exclude` does; each left out counts in `excluded`, never as an entry;
- a selector that matches nothing is an unreadable page, never a silent zero: `item` finding
  nothing, or `link` or `title` finding nothing in any of the items, makes the body `failed`
  (the items found then count as `lost_entries`); `date` finding nothing is told in `error` only;
- an invalid selector, an `item` selector selecting text (`::text`, `::attr`), missing
  selectors, an invalid pattern, or a body over MAX_BYTES make the body `failed`, saying which.

An item becomes `{"id": "", "link", "title", "published"}` (`published` "" when the page gives no
date), so crovia_spider/feed/entries.py makes it an item as it makes one of RSS or Atom. Never
raises.

What one page can cost is bounded (issue 47). The selectors are evaluated by
crovia_spider/feed/bounded_css.py, which gives parsel's matches in parsel's order but visits each
element once per compound selector (the parts between combinators) and once in a walk that
resolves the combinators, however deeply the matches nest (parsel's XPath costs the depth times
the square of the matches: a 982 KB page of 2,000 nested `div.post` around 35,000 links takes
about 11 minutes of CPU in one lxml call, and is read in 1.0 s). `item` is evaluated once over
the page; `link`, `title` and `date` once over each item, so an item nested in others is read
again by each of them: items may be nested in at most MAX_NESTED other items, and a page whose
items nest deeper is `failed`, saying so. Every element is thus visited once per compound of
`item` and at most MAX_NESTED + 1 times per compound of `link`, `title` and `date`, and as often
by the walks. The pseudo-classes bounded_css.py names (`:nth-child()`, `:first-child`,
`:contains()`, `:has()`, ...) can cost more, as can a link, title or date selector leaving its
item through `+` or `~`: the parser worker's deadline (crovia_spider/feed/ceilings.py) bounds
those, as it bounds everything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin

from cssselect import SelectorError
from lxml import etree
from parsel import Selector
from w3lib.encoding import html_to_unicode

from crovia_spider.feed.body import ParsedFeed
from crovia_spider.feed.bounded_css import Query
from crovia_spider.feed.selection import BadPatterns, signable, url_selector
from crovia_spider.feed.urls import web_url

VERSION = "html"
MAX_BYTES = 16 << 20  # the download cap: a kept body is never larger
MAX_SHOWN = 200  # characters of a selector or pattern an error message repeats
REQUIRED = ("item", "link", "title")
MAX_NESTED = 8  # other items an item may be inside (each reads it again)
# A lone surrogate in the decoded text (lxml takes UTF-8 only) is replaced by this noncharacter,
# and an item holding it is malformed.
_UNENCODABLE_MARK = "\ufdd0"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_STRING = etree.XPath("string()", smart_strings=False)


class Unreadable(ValueError):
    """The page cannot be read with these options (the message says why; args[1]: items lost)."""


def parse_listing(body: bytes, headers: dict[str, str], options: Mapping[str, Any]) -> ParsedFeed:
    """The entries of the listing page `body`, fetched from `headers["content-location"]` (the
    final URL) with `headers["content-type"]` if any, read with `options["selectors"]` and the
    optional `options["include"]` / `options["exclude"]` (see the module docstring). Never
    raises: a page that cannot be read is a `failed` ParsedFeed saying why."""
    try:
        return _read(body, headers, options)
    except Unreadable as exc:
        lost = exc.args[1] if len(exc.args) > 1 else 0
        return ParsedFeed(version=VERSION, error=exc.args[0], failed=True, lost_entries=lost)
    except Exception as exc:  # a reader bug must cost this page only, and be told
        return ParsedFeed(
            version=VERSION,
            error=f"unreadable page: {type(exc).__name__}: {_shown(str(exc))}",
            failed=True,
        )


def _read(body: bytes, headers: dict[str, str], options: Mapping[str, Any]) -> ParsedFeed:
    selectors = _selectors(options)
    try:
        selected = url_selector(options)
    except BadPatterns as exc:
        raise Unreadable(str(exc)) from None
    if len(body) > MAX_BYTES:
        raise Unreadable(f"{len(body):,} bytes, more than the {MAX_BYTES:,} a body may have")
    final_url = _header(headers, "content-location")
    page = Selector(text=_text(body, _header(headers, "content-type")), type="html")
    queries = {name: Query(css) for name, css in selectors.items()}
    found_items = list(queries.pop("item").walk(page.root))
    items = [item for item, _ in found_items]
    if not items:
        raise Unreadable(f"selector item {_quoted(selectors['item'])} found nothing")
    if any(isinstance(item, str) for item in items):
        raise Unreadable(f"selector item {_quoted(selectors['item'])} selects text, not elements")
    nested = max(enclosing for _, enclosing in found_items)
    if nested > MAX_NESTED:
        raise Unreadable(
            f"selector item {_quoted(selectors['item'])} finds items inside {nested} other items"
            f" (at most {MAX_NESTED}: each item's selectors read the items inside it again)",
            len(items),
        )
    parsed = ParsedFeed(version=VERSION)
    found = dict.fromkeys(queries, False)
    seen: set[str] = set()
    for item in items:
        row = {name: _first(item, query, name == "link") for name, query in queries.items()}
        found.update({name: True for name, value in row.items() if value is not None})
        _take(parsed, row, final_url, seen, selected)
    for name in ("link", "title"):
        if not found[name]:
            raise Unreadable(_nothing_in_any(name, selectors[name], len(items)), len(items))
    parsed.error = _problems(parsed, found, selectors, len(items))
    return parsed


def _selectors(options: Mapping[str, Any]) -> dict[str, str]:
    """The options' selectors, each checked to be valid CSS of parsel's dialect."""
    given = options.get("selectors")
    if not isinstance(given, Mapping):
        raise Unreadable("no selectors given (item, link and title are needed)")
    missing = [name for name in REQUIRED if not isinstance(given.get(name), str)]
    if missing:
        raise Unreadable(f"selector(s) {', '.join(missing)} missing or not text")
    chosen = {name: given[name] for name in (*REQUIRED, "date") if isinstance(given.get(name), str)}
    for name, css in chosen.items():
        try:
            Query(css)
        except (SelectorError, ValueError, etree.XPathError) as exc:
            raise Unreadable(
                f"invalid selector {name} {_quoted(css)}: {_shown(str(exc))}"
            ) from None
    return chosen


def _header(headers: dict[str, str], name: str) -> str:
    return next((value for key, value in headers.items() if key.lower() == name), "")


def _text(body: bytes, content_type: str) -> str:
    """The body decoded as Scrapy decodes it, a lone surrogate (which lxml cannot take) marked."""
    text = html_to_unicode(content_type or None, body)[1]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(_UNENCODABLE_MARK, text)
    return text


def _first(item: Any, query: Query, is_link: bool) -> str | None:
    """The first match of `query` in `item` as text (None: it found nothing)."""
    match = query.first(item)
    if match is None:
        return None
    if isinstance(match, str):
        text = match
    elif is_link:
        return str(match.get("href") or "").strip() if hasattr(match, "get") else ""
    else:
        text = _STRING(match)
    return text.strip() if is_link else " ".join(str(text).split())


def _take(
    parsed: ParsedFeed,
    row: dict[str, str | None],
    final_url: str,
    seen: set[str],
    selected: Callable[[str], bool],
) -> None:
    """Add the entry of one item to `parsed`, or count why it is left out (the module docstring)."""
    (link, safe), title, date = (
        _absolute(row["link"] or "", final_url),
        row["title"],
        row.get("date"),
    )
    entry = {"id": "", "link": link, "title": title or "", "published": date or ""}
    if (
        not link
        or not title
        or not all(signable(value, _UNENCODABLE_MARK) for value in entry.values())
    ):
        parsed.malformed_entries += 1
        return
    if safe in seen:
        return
    seen.add(safe)
    if not selected(link):
        parsed.excluded += 1
        return
    parsed.entries.append(entry)


def _absolute(link: str, final_url: str) -> tuple[str, str]:
    """`link` made absolute against the final URL, and as `web_url` writes it (what tells one
    link from another); ("", "") when it is no usable http(s) URL."""
    if not link:
        return "", ""
    try:
        absolute = urljoin(final_url, link)
    except ValueError:
        return "", ""
    safe = web_url(absolute)
    return (absolute, safe) if safe else ("", "")


def _problems(
    parsed: ParsedFeed, found: dict[str, bool], selectors: dict[str, str], items: int
) -> str:
    problems = []
    if parsed.malformed_entries:
        problems.append(
            f"{parsed.malformed_entries} item(s) left out: no usable link or title,"
            " or text that cannot be UTF-8"
        )
    if "date" in found and not found["date"]:
        problems.append(_nothing_in_any("date", selectors["date"], items))
    return "; ".join(problems)


def _nothing_in_any(name: str, css: str, items: int) -> str:
    return f"selector {name} {_quoted(css)} found nothing in any of the {items} items"


def _quoted(text: str) -> str:
    return f"'{_shown(text)}'"


def _shown(text: str) -> str:
    """`text` cut to MAX_SHOWN characters (an ellipsis the last when cut)."""
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "\u2026"
