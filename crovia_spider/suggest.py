""" "Did you mean ...?" for a misspelt name: a command, an option, a vendor id, a spider."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(given: str, known: Iterable[str]) -> str | None:
    """The name of `known` closest to `given` (difflib, ratio 0.6 or more), or None."""
    close = difflib.get_close_matches(given, list(known), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(given: str, known: Iterable[str]) -> str:
    """ "; did you mean 'X'?" naming the closest of `known` to `given`, or "" if none is close."""
    name = closest(given, known)
    return f"; did you mean {name!r}?" if name else ""
