"""Key material typed on a command line never comes back out (issue 43, observation 8).

A private key typed where a public key, a pin or a file was expected (`--pubkey "$(cat KEY)"`) was
echoed whole by the message refusing it, into CI logs and scrollback. Whatever was typed where:

- a word holding a PEM block or a note signing key (`PRIVATE+KEY+...`) is refused before the
  command line is parsed, without being shown (no option takes one: a key goes by its file);
- any other word that could be key material (crovia_spider/options.py, `key_material`: 32 or
  more hex digits, which a private seed and a public key share, or a long mixed-case base64
  string) is hidden from everything the command writes to stderr, and from the JSON object of a
  failure on stdout (`crovia_spider.cli.failure`), in any case and in part (every run of 24 of
  its characters).

What a command prints as its result on stdout is left alone: a public key there is derived from a
key file, never echoed from the command line.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from crovia_spider.options import PRIVATE_KEY_TEXT, key_material

_RUN = 24  # characters of a typed key in a row that are hidden wherever they appear
_active: list[re.Pattern[str]] = []


def private_key_typed(argv: list[str]) -> str:
    """The refusal when a word of `argv` holds a PEM block or a note signing key, else ""."""
    for number, word in enumerate(argv, 1):
        if PRIVATE_KEY_TEXT.search(word):
            return (
                f"a private key was typed on the command line (word {number}); it is not shown"
                " and nothing ran: give a key by its file (--key FILE), a public key as its 64"
                " hex digits. If the command line was kept (shell history, CI logs), the key"
                " is exposed: rotate it (crovia rotate-key)"
            )
    return ""


def typed_key_material(argv: list[str]) -> re.Pattern[str] | None:
    """A pattern matching, case-insensitively, every run of _RUN characters of each word (or
    `--option=` value) of `argv` that could be key material; None when there is none."""
    runs: set[str] = set()
    for word in argv:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        if key_material(value):
            value = value.strip()
            runs |= {value[i : i + _RUN] for i in range(max(1, len(value) - _RUN + 1))}
    if not runs:
        return None
    return re.compile("|".join(re.escape(run) for run in sorted(runs)), re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with what the running command had typed as key material hidden."""
    for pattern in _active:
        text = _hide(pattern, text)
    return text


def _hide(pattern: re.Pattern[str], text: str) -> str:
    # Overlapping runs of one key are one span: hide from the first match to the last overlap.
    spans: list[list[int]] = []
    position = 0
    while (found := pattern.search(text, position)) is not None:
        start, end = found.span()
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
        position = start + 1
    for start, end in reversed(spans):
        text = f"{text[:start]}<typed key material, not shown>{text[end:]}"
    return text


class _Redacting:
    """A text stream writing through `stream` with the typed key material hidden."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def hidden_key_material(argv: list[str]) -> Iterator[None]:
    """While running the command of `argv`: stderr hides what it typed as key material, and so
    does `redact`. A bug's traceback is printed here, hidden too, and exits 1 as it would have."""
    pattern = typed_key_material(argv)
    if pattern is None:
        yield
        return
    stream = sys.stderr
    sys.stderr = _Redacting(stream)  # type: ignore[assignment]
    _active.append(pattern)
    try:
        yield
    except (SystemExit, KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException:
        import traceback

        sys.stderr.write("".join(traceback.format_exc()))
        raise SystemExit(1) from None
    finally:
        _active.remove(pattern)
        sys.stderr = stream
