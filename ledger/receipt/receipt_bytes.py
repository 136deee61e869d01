"""The exact-bytes rule: a receipt is read as bytes, and accepted only if those bytes are exactly
`canonical_json` of what they parse to (docs/format.md: the reference receipt is).

So one receipt has one byte form, and what a person reads in the file is what was verified: a
duplicate key (which a last-wins parser would resolve silently), a byte order mark, UTF-16 or any
encoding but UTF-8, invalid UTF-8, an escape or whitespace canonical JSON would not use, and any
byte after the closing brace but one final newline are all refused with check `canonical_bytes`,
naming what differs. One final "\n" or "\r\n" is what editors and `> file` add on saving: it is
outside the value, so it is read past, and nothing else is (a second newline, a space, a lone
"\r"). The web verifier mirrors this function; `crovia audit` holds each ledger line to the same
rule.
"""

from __future__ import annotations

import json
from typing import Any

from ledger.canonical import canonical_json
from ledger.exceptions import CanonicalizationError, ReceiptBytesInvalid

# The reference receipt is 8 KB; a body, rotations and timestamp tokens stay far below this. A
# larger file is refused before it is read, so no input can make the verifier hoard memory.
MAX_RECEIPT_BYTES = 16 * 1024 * 1024
_MAX_INT_DIGITS = 20  # 2**64 has 20 digits; canonical_json refuses anything beyond 64 bits anyway
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_SNIPPET = 24
_FINAL_NEWLINES = (b"\r\n", b"\n")  # "\r\n" first: it also ends with "\n"


class _Refused(Exception):
    """Raised from the parser's hooks; not a ValueError, so never confused with a syntax error."""


def parse_receipt_bytes(data: bytes) -> Any:
    """Parse `data` and return the value, if `data` is exactly canonical_json of it.

    Raises ReceiptBytesInvalid (check `canonical_bytes`) naming the first problem found: size,
    byte order mark, UTF-8, JSON syntax, a duplicate key, a number that is not a 64-bit integer,
    nesting too deep to encode, or the first byte that differs from the canonical form.
    """
    if len(data) > MAX_RECEIPT_BYTES:
        raise ReceiptBytesInvalid(f"larger than {MAX_RECEIPT_BYTES} bytes", computed=len(data))
    if data.startswith(_BOMS):
        raise ReceiptBytesInvalid(
            "starts with a byte order mark: a receipt is UTF-8 without one", computed=data[:4].hex()
        )
    data = _without_final_newline(data)
    try:
        text = data.decode("utf-8")  # strict: refuses invalid sequences and encoded surrogates
    except UnicodeDecodeError as exc:
        raise ReceiptBytesInvalid(f"not UTF-8: {exc}") from None
    value = _parse(text)
    try:
        canonical = canonical_json(value)
    except CanonicalizationError as exc:
        raise ReceiptBytesInvalid(f"not canonical-encodable: {exc}") from None
    if canonical != data:
        raise _difference(data, canonical)
    return value


def _without_final_newline(data: bytes) -> bytes:
    """`data` less one final "\r\n" or "\n", if it ends in one."""
    for newline in _FINAL_NEWLINES:
        if data.endswith(newline):
            return data[: -len(newline)]
    return data


def _parse(text: str) -> Any:
    duplicates: list[tuple[dict[str, Any], list[tuple[str, Any]]]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            duplicates.append((obj, items))
        return obj

    try:
        value = json.loads(
            text,
            object_pairs_hook=pairs,
            parse_float=_refuse_float,
            parse_int=_bounded_int,
            parse_constant=_refuse_constant,
        )
    except _Refused as exc:
        raise ReceiptBytesInvalid(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise ReceiptBytesInvalid(f"not JSON: {exc}") from None
    except RecursionError:
        raise ReceiptBytesInvalid("not JSON this verifier can read: nested too deeply") from None
    if duplicates:
        raise _duplicate(value, *duplicates[0])
    return value


def _refuse_float(text: str) -> Any:
    raise _Refused(f"number {text[:_SNIPPET]} is not an integer (a receipt holds no floats)")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise _Refused(f"integer of {len(text)} digits is beyond 64 bits")
    return int(text)


def _refuse_constant(text: str) -> Any:
    raise _Refused(f"{text} is not JSON")


def _duplicate(root: Any, obj: dict[str, Any], items: list[tuple[str, Any]]) -> ReceiptBytesInvalid:
    seen: dict[str, list[Any]] = {}
    for key, value in items:
        seen.setdefault(key, []).append(value)
    key = next(k for k, values in seen.items() if len(values) > 1)
    try:
        where = _path_to(root, obj) or "the top level"
    except RecursionError:
        where = "a deeply nested object"
    return ReceiptBytesInvalid(
        f"duplicate key {key!r} in {where}: the bytes hold {len(seen[key])} values, of which a"
        " last-wins parser would show one and verify another",
        expected="each key once",
        computed=seen[key],
    )


def _path_to(node: Any, target: object, path: str = "") -> str | None:
    """The dotted path of the object `target` inside `node` (compared by identity)."""
    if node is target:
        return path
    if isinstance(node, dict):
        children: Any = node.items()
    else:
        children = enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        if isinstance(child, dict | list):
            step = f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]"
            found = _path_to(child, target, step.lstrip("."))
            if found is not None:
                return found
    return None


def _difference(data: bytes, canonical: bytes) -> ReceiptBytesInvalid:
    if data.startswith(canonical):
        extra = data[len(canonical) :]
        return ReceiptBytesInvalid(
            f"not canonical: {len(extra)} trailing byte(s) after the JSON value (a receipt ends"
            " at its closing brace, or one newline after it)",
            expected="",
            computed=_text(extra[:_SNIPPET]),
        )
    at = next(
        (i for i, (a, b) in enumerate(zip(data, canonical, strict=False)) if a != b),
        min(len(data), len(canonical)),
    )
    start = max(0, at - 8)
    return ReceiptBytesInvalid(
        f"not canonical: byte {at} differs from canonical_json of the parsed value (whitespace,"
        " key order or an escape canonical JSON would not use)",
        expected=_text(canonical[start : at + _SNIPPET]),
        computed=_text(data[start : at + _SNIPPET]),
    )


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")
