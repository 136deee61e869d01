"""canonical_json (orjson) equals docs/format.md's stdlib rule byte for byte on all we sign."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger.canonical import canonical_json, canonical_json_stdlib
from ledger.exceptions import CanonicalizationError
from tests.vectors.make_vectors import sample_envelope, sample_record

SEED = Path(__file__).parents[1] / "vectors" / "seed_axiom_proof.json"

json_text = st.text(st.characters(exclude_categories=("Cs",)))  # any code point but surrogates
json_ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)
json_values = st.recursive(
    st.none() | st.booleans() | json_ints | json_text,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(json_text, children, max_size=5)
    ),
    max_leaves=40,
)


def test_the_seed_file_is_its_own_canonical_form() -> None:
    raw = SEED.read_bytes()
    assert canonical_json(json.loads(raw)) == raw
    assert canonical_json_stdlib(json.loads(raw)) == raw


@given(json_values)
def test_orjson_equals_the_stdlib_rule(value: object) -> None:
    assert canonical_json(value) == canonical_json_stdlib(value)


@pytest.mark.parametrize(
    "value",
    [
        sample_record(7),
        sample_envelope(3),
        {"controls": "\x00\x01\x1f\x7f\b\f\n\r\t", "quote": '"\\/', "bmp": "\u2028\u2029\ufeff"},
        {"astral": "😀𝄞", "combining": "e\u0301", "rtl": "שלום", "cjk": "漢字"},
        {"big": 2**64 - 1, "small": -(2**63), "nested": [[[{"z": 1, "a": [True, None]}]]]},
        {"é": 1, "e": 2, "E": 3, "\U0001f600": 4, "\uffff": 5},  # key order by code point
    ],
)
def test_orjson_equals_the_stdlib_rule_on_records(value: object) -> None:
    assert canonical_json(value) == canonical_json_stdlib(value)


@pytest.mark.parametrize(
    "value",
    [
        1.0,
        {"score": 0.5},
        [1, [2, [float("nan")]]],
        2**64,
        -(2**63) - 1,
        {1: "int key"},
        {"set": {1, 2}},
        "lone \ud800 surrogate",
        b"bytes",
    ],
)
def test_unsignable_values_are_refused_by_both_encoders(value: object) -> None:
    with pytest.raises(CanonicalizationError):
        canonical_json(value)
    with pytest.raises(CanonicalizationError):
        canonical_json_stdlib(value)


def test_absurd_nesting_is_refused_not_a_crash() -> None:
    value: list = []
    for _ in range(5000):
        value = [value]
    with pytest.raises(CanonicalizationError, match="nested too deeply"):
        canonical_json(value)


json_numbers = st.integers(min_value=-(2**80), max_value=2**80) | st.floats(allow_nan=False)
parsed_values = st.recursive(
    st.none() | st.booleans() | json_numbers | json_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(json_text, children, max_size=4)
    ),
    max_leaves=30,
)


@given(parsed_values)
def test_the_walk_of_a_parsed_line_refuses_what_the_full_walk_refuses(value: object) -> None:
    """`check_parsed`, the audit's walk of what orjson.loads returned, looks only for floats:
    orjson gives string keys, and reads an integer past 64 bits as a float. It must refuse
    exactly what `check_signable` refuses, in any position."""
    import orjson

    from ledger.canonical import check_parsed, check_signable

    try:
        parsed = orjson.loads(orjson.dumps(value))
    except orjson.JSONEncodeError:  # an integer orjson cannot write, an infinity
        return
    try:
        check_signable(parsed)
    except CanonicalizationError:
        with pytest.raises(CanonicalizationError):
            check_parsed(parsed)
        return
    check_parsed(parsed)


@pytest.mark.parametrize(
    ("line", "refused"),
    [
        (b"18446744073709551615", False),  # the largest unsigned 64-bit integer
        (b"18446744073709551616", True),  # one more: orjson reads a float
        (b"-9223372036854775808", False),
        (b"-9223372036854775809", True),
        (b'{"a":[{"b":[1.0]}]}', True),
        (b'{"a":[{"b":[1]}],"c":"1.5"}', False),
        (b"2e0", True),
    ],
)
def test_the_parsed_walk_at_the_edges(line: bytes, refused: bool) -> None:
    import orjson

    from ledger.canonical import check_parsed

    if refused:
        with pytest.raises(CanonicalizationError):
            check_parsed(orjson.loads(line))
    else:
        check_parsed(orjson.loads(line))
