"""The keys of the sitemap and page kinds (`include`, `exclude`, `selectors`), checked before any
request: a bad one is named with its entry, and a good one reaches the reader as the source's
options (which its fetch records sign as `select`)."""

from __future__ import annotations

import pytest

from crovia_spider.config.feeds import load_feeds
from crovia_spider.exceptions import ConfigError

PAGE = 'selectors = { item = "article", link = "a", title = "h3", date = "time::attr(datetime)" }'


def _load(tmp_path, lines: str):
    path = tmp_path / "feeds.toml"
    path.write_text(f'[[feeds]]\nvendor = "lab"\nurl = "https://lab.example/news"\n{lines}\n')
    return load_feeds(path, spiders=["vendor_press"])


def test_a_sitemap_with_patterns_and_a_page_with_selectors_load(tmp_path):
    (sitemap,) = _load(tmp_path, 'kind = "sitemap"\ninclude = ["/news/"]\nexclude = ["/tag/"]')
    assert sitemap.options == {"include": ["/news/"], "exclude": ["/tag/"]}
    (page,) = _load(tmp_path, f'kind = "page"\n{PAGE}')
    assert page.options == {
        "selectors": {
            "item": "article",
            "link": "a",
            "title": "h3",
            "date": "time::attr(datetime)",
        }
    }
    (feed,) = _load(tmp_path, "")
    assert feed.options == {}


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ('include = ["/news/"]', "'include' picks URLs of a sitemap or a page, not of kind 'feed'"),
        ('kind = "sitemap"\ninclude = "/news/"', "'include' must be a list of regular expressions"),
        ('kind = "sitemap"\nexclude = []', "'exclude' must hold 1 to 100 patterns, not 0"),
        ('kind = "sitemap"\ninclude = ["(news"]', "'include': '(news' is not a regular expression"),
        ('kind = "sitemap"\ninclude = [""]', "a pattern is 1 to 500 characters"),
        ('kind = "page"', "kind \"page\" needs 'selectors'"),
        ('kind = "page"\nselectors = { item = "li", link = "a" }', "'selectors' needs title"),
        (
            'kind = "page"\nselectors = { item = "li", link = "a", title = "b", titel = "c" }',
            "unknown key(s) titel",
        ),
        (
            'kind = "page"\nselectors = { item = "li[", link = "a", title = "b" }',
            "selector 'item' = 'li[' is not CSS parsel reads",
        ),
        (
            'kind = "page"\nselectors = { item = "", link = "a", title = "b" }',
            "selector 'item' must be CSS of 1 to 500 characters",
        ),
        ('kind = "sitemap"\nselectors = { item = "li" }', "'selectors' read a listing page"),
        (
            'kind = "sitemap"\ninclude = [' + ", ".join(['"' + "n" * 500 + '"'] * 9) + "]",
            "'include' and 'exclude' hold 4,500 characters, more than 4,000",
        ),
    ],
)
def test_a_bad_key_of_a_kind_is_refused_with_its_entry(tmp_path, lines, says):
    with pytest.raises(ConfigError) as refused:
        _load(tmp_path, lines)
    assert "(vendor 'lab')" in str(refused.value)
    assert says in str(refused.value)
