"""One canonicaliser, two languages: the page's canonical JSON gives ledger/'s bytes exactly.

JavaScript sorts keys by UTF-16 units and has no big integers; the page compares code points and
keeps integers as BigInt. What the page cannot represent the same way it refuses, like ledger/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.canonical import canonical_json
from tests.crawl import PROJECT_ROOT

PAGE = PROJECT_ROOT / "crovia_spider" / "web" / "verifier" / "index.html"
# Strings that stress the rules: astral characters against U+E000-U+FFFF (the UTF-16 sort trap),
# every control character, quotes, backslashes, DEL, U+2028.
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(['"', "\\", "\x7f", "\u2028", "\ue000", "\uffff", "😀", "\U0010ffff"]),
        st.characters(max_codepoint=0x1F),
    ),
    max_size=12,
)
INTS = st.integers(min_value=-(2**63), max_value=2**64 - 1)
VALUES = st.recursive(
    st.none() | st.booleans() | INTS | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


@pytest.fixture(scope="module")
def core(browser: object) -> Iterator[object]:
    context = browser.new_context()
    page = context.new_page()
    page.goto(PAGE.as_uri())
    page.wait_for_function("() => globalThis.CroviaVerify !== undefined")
    yield page
    context.close()


def js_canonical(core: object, text: str) -> dict[str, str]:
    """Parse `text` strictly in the page and encode it: {"ok": canonical} or {"error": check}."""
    return core.evaluate(
        """(text) => {
            try { return {ok: CroviaVerify.canonical(CroviaVerify.parseJson(text))}; }
            catch (e) { return {error: e.check || String(e)}; }
        }""",
        text,
    )


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=VALUES)
def test_canonical_bytes_are_the_same_in_both_languages(core: object, value: object) -> None:
    expected = canonical_json(value).decode("utf-8")
    assert js_canonical(core, expected) == {"ok": expected}
    # Any other spelling of the same value canonicalises to the same bytes.
    for spelling in (json.dumps(value, indent=1), json.dumps(value, ensure_ascii=True)):
        assert js_canonical(core, spelling) == {"ok": expected}


@pytest.mark.parametrize(
    "text",
    [
        '{"a":1,"a":2}',  # duplicate keys: JSON.parse would keep the last
        '{"a":1.5}',  # floats are never signed
        '{"a":1e3}',
        f'{{"a":{2**64}}}',  # beyond 64 bits, like ledger/
        f'{{"a":{-(2**63) - 1}}}',
        '{"a":"\\ud800"}',  # a lone surrogate is not UTF-8
        "[" * 600 + "]" * 600,  # deeper than the page parses
        '{"a":1} x',
        "\ufeff{}",
        "",
    ],
)
def test_what_cannot_be_canonical_is_refused(core: object, text: str) -> None:
    assert js_canonical(core, text) == {"error": "canonical_bytes"}


def test_integers_beyond_2_53_keep_every_digit(core: object) -> None:
    text = canonical_json({"n": 2**64 - 1, "m": -(2**63), "k": 2**53 + 1}).decode()
    assert js_canonical(core, text) == {"ok": text}
