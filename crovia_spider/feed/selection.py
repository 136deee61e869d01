"""What the readers share: a source's URLs picked by its `include` / `exclude` patterns, and text
that can be signed.

`url_selector(options)` is the rule of docs/spider.md ("Source kinds") for a sitemap's URLs and a
listing page's links: Python regular expressions searched in each URL (as Scrapy's SitemapSpider
`sitemap_rules` and LinkExtractor `allow` / `deny` take them); a URL is the source's when no
`include` is given or one matches, and no `exclude` matches. The options come from the config,
checked there, or from a signed fetch record read again, which is untrusted: anything that is not
a list of regular expressions is BadPatterns, for the reader to make an unreadable body of.

`signable(value, *marks)` is False for a string that cannot be signed as UTF-8 (a lone surrogate)
or that holds one of `marks` (a reader's mark of such a character, put in before a parser that
cannot take it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any


class BadPatterns(ValueError):
    """The options' include or exclude is not a list of regular expressions (says which)."""


def url_selector(options: Mapping[str, Any]) -> Callable[[str], bool]:
    """The predicate "this URL is the source's" of `options` (see the module docstring)."""
    include, exclude = _compiled(options, "include"), _compiled(options, "exclude")
    if not include and not exclude:
        return lambda url: True

    def selected(url: str) -> bool:
        wanted = not include or any(pattern.search(url) for pattern in include)
        return wanted and not any(pattern.search(url) for pattern in exclude)

    return selected


def _compiled(options: Mapping[str, Any], name: str) -> list[re.Pattern[str]]:
    given = options.get(name) or []
    if not isinstance(given, list | tuple) or not all(isinstance(p, str) for p in given):
        raise BadPatterns(f"{name} is no list of regular expressions")
    compiled = []
    for pattern in given:
        try:
            compiled.append(re.compile(pattern))
        except (re.error, RecursionError, OverflowError) as exc:
            raise BadPatterns(f"invalid {name} pattern {pattern[:200]!r}: {exc}") from None
    return compiled


def signable(value: Any, *marks: str) -> bool:
    """False for a string holding a lone surrogate or one of `marks`; True for anything else."""
    if not isinstance(value, str):
        return True
    if any(mark in value for mark in marks):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
