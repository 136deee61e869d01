"""Canonical JSON: the one byte encoding that ids, signatures and leaf hashes are computed over.

The rule of docs/format.md is the stdlib call in `canonical_json_stdlib`. `canonical_json` gives
the same bytes with orjson (much faster); the two agree on str, int (64-bit), bool, None, list and
dict, which is all a signed structure may hold, so both refuse floats and out-of-range ints
(tests/ledger/test_canonical.py holds them equal).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from ledger.exceptions import CanonicalizationError

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1  # orjson's range: i64 below zero, u64 above
_SCALARS = (str, bool, type(None))


def canonical_json(obj: Any) -> bytes:
    """Encode `obj` as canonical JSON bytes (sorted keys, no spaces, UTF-8, no NaN).

    Raises CanonicalizationError for a float, an int outside 64 bits, a non-str key or any other
    type.
    """
    check_signable(obj)
    return encode_checked(obj)


def encode_checked(obj: Any) -> bytes:
    """Encode an object already passed through `check_signable` (skips the walk on hot paths)."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise CanonicalizationError(f"cannot canonicalize: {exc}") from exc


def canonical_json_stdlib(obj: Any) -> bytes:
    """docs/format.md's reference rule, with the stdlib. Slow; the tests compare it with
    `canonical_json`.
    """
    check_signable(obj)
    text = json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: not representable in UTF-8
        raise CanonicalizationError(f"string is not valid UTF-8: {exc}") from exc


def check_signable(obj: Any) -> None:
    """Raise CanonicalizationError unless `obj` holds only str, 64-bit int, bool, None, list, dict.

    Exact types only: a subclass (an IntEnum, a str subclass) could encode differently elsewhere.
    """
    try:
        _check(obj)
    except RecursionError:
        raise CanonicalizationError("structure nested too deeply to sign") from None


def check_parsed(obj: Any) -> None:
    """`check_signable` for what `orjson.loads` returned (the audit's per-line hot path): its keys
    are strings and its integers fit 64 bits (orjson reads a longer one as a float), so only
    floats are looked for, in about 60% of the full walk's time."""
    try:
        if type(obj) is dict or type(obj) is list:
            _floats(obj)
        else:
            _check_scalar(obj)
    except RecursionError:
        raise CanonicalizationError("structure nested too deeply to sign") from None


def _floats(item: Any) -> None:
    for value in item.values() if type(item) is dict else item:
        kind = type(value)
        if kind is str or kind is int:
            continue
        if kind is dict or kind is list:
            _floats(value)
        elif kind is float:
            _check_scalar(value)


def _check(item: Any) -> None:
    # Recursion with a str-first test per value: the envelope walk is on the hot path of issue().
    kind = type(item)
    if kind is dict:
        for key in item:
            if type(key) is not str:
                raise CanonicalizationError(f"dict key {key!r} is not a string")
        values = item.values()
    elif kind is list or kind is tuple:
        values = item
    else:
        _check_scalar(item)
        return
    for value in values:
        kind = type(value)
        if kind is str:
            continue
        if kind is dict or kind is list or kind is tuple:
            _check(value)
        else:
            _check_scalar(value)


def _check_scalar(value: Any) -> None:
    kind = type(value)
    if kind is int:
        if not _INT_MIN <= value <= _INT_MAX:
            raise CanonicalizationError(f"integer {value} is beyond 64 bits")
    elif kind is float:
        raise CanonicalizationError(
            f"float {value!r} in a signed structure (encoders disagree on floats)"
        )
    elif kind not in _SCALARS:
        raise CanonicalizationError(f"value of type {kind.__name__} cannot be signed")
