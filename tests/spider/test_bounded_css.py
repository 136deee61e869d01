"""The bounded CSS evaluator (crovia_spider/feed/bounded_css.py) gives what parsel gives.

A listing page's selectors are read by `Query` instead of parsel's XPath, so that nested matches
cost one visit per element instead of the depth times the square of the matches (issue 47).
Generated pages (nested elements of a few tags and classes, text, tails, comments) and generated
selectors (compounds, the four combinators, groups, `::text`, `::attr()`) must give exactly
parsel's nodes in parsel's order: every match from the page's root, and the first match from
every element, as an item's link, title and date are read. The cost itself is checked by a real
crawl of the issue's page (tests/spider/test_parse_deadline.py).
"""

from __future__ import annotations

import time

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from parsel import Selector

from crovia_spider.feed.bounded_css import Query

TAGS = ("div", "p", "a", "span", "li", "h3")
CLASSES = ("", "post", "card", "post card", "x")


@st.composite
def trees(draw, depth: int = 0) -> str:
    """HTML of a few nested elements with text, tails and comments."""
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 4 else 0))):
        tag = draw(st.sampled_from(TAGS))
        cls = draw(st.sampled_from(CLASSES))
        attrs = f' class="{cls}"' if cls else ""
        if draw(st.booleans()):
            attrs += f' href="/{draw(st.integers(0, 9))}"'
        text = draw(st.sampled_from(("", "t", " ", "x y")))
        inner = draw(trees(depth + 1)) if tag != "a" else ""
        tail = draw(st.sampled_from(("", "tail", " ")))
        comment = "<!--c-->" if draw(st.integers(0, 5)) == 0 else ""
        parts.append(f"<{tag}{attrs}>{text}{comment}{inner}</{tag}>{tail}")
    return "".join(parts)


@st.composite
def compounds(draw) -> str:
    out = draw(st.sampled_from(("", "*", *TAGS)))
    if draw(st.booleans()):
        out += "." + draw(st.sampled_from(("post", "card", "x")))
    if draw(st.integers(0, 3)) == 0:
        out += "[href]"
    if draw(st.integers(0, 4)) == 0:
        out += draw(st.sampled_from((":not(.x)", ":first-child", ":nth-child(odd)", ":has(a)")))
    return out or "*"


@st.composite
def selectors(draw) -> str:
    group = []
    for _ in range(draw(st.integers(1, 2))):
        chain = draw(compounds())
        for _ in range(draw(st.integers(0, 3))):
            chain += draw(st.sampled_from((" ", " > ", " + ", " ~ "))) + draw(compounds())
        chain += draw(st.sampled_from(("", "", "::text", "::attr(href)", "::attr(class)")))
        group.append(chain)
    return ", ".join(group)


def same(ours: list, theirs: list) -> bool:
    return len(ours) == len(theirs) and all(
        a is b if not isinstance(a, str) else a == b for a, b in zip(ours, theirs, strict=True)
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=trees(), css=selectors())
# parsel's translation of a bare `*` after a descendant combinator with a pseudo-element: the
# elements before it count too (`div *::text` holds the div's own text)
@example(body='<div class="x">a<p class="post">b</p>c</div>', css="div *::text")
@example(body='<div class="x">a<p class="post">b</p>c</div>', css="div *::attr(class)")
@example(body="<li>a</li><h3>b</h3><li>c</li>", css="li + h3::text, li ~ li::text")
def test_every_match_and_each_first_match_is_parsels(body, css):
    root = Selector(text=f"<html><body>{body}</body></html>", type="html").root
    query = Query(css)
    assert same(query.all(root), query.xpath(root)), css
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        theirs = query.xpath(element)
        ours = query.first(element)
        assert (ours is None) if not theirs else same([ours], theirs[:1]), (css, element.tag)


def test_enclosing_counts_element_matches_around_each():
    root = Selector(
        text='<div class="post"><div class="post"><a>1</a></div><a>2</a></div>', type="html"
    ).root
    found = list(Query("div.post").walk(root))
    assert [depth for _, depth in found] == [0, 1]


def test_nested_matches_cost_one_visit_each():
    """The issue's shape, small: nested wrappers around many links. parsel's XPath compares every
    link with every one already found, once per wrapper; the walk visits each once."""
    depth, links = 400, 4000
    body = (
        '<div class="post">' * depth
        + "".join(f'<a href="/{n}">t</a>' for n in range(links))
        + "</div>" * depth
    )
    root = Selector(text=f"<html><body>{body}</body></html>", type="html").root
    query = Query("div.post a")
    started = time.process_time()
    theirs = query.xpath(root)
    parsel_cost = time.process_time() - started
    started = time.process_time()
    ours = query.all(root)
    our_cost = time.process_time() - started
    assert same(ours, theirs) and len(ours) == links
    # about 0.5 s against 0.03 s here; only the direction is asserted, never a time
    assert our_cost < parsel_cost
