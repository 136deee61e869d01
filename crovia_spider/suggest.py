""" "Did you mean ...?" for a misspelt name: a command, a vendor id, a spider (issue 17)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(given: str, known: Iterable[str]) -> str:
    """ "; did you mean 'X'?" naming the closest of `known` to `given`, or "" if none is close."""
    close = difflib.get_close_matches(given, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
