"""Differential-corpus cases of what follows a receipt's closing brace (issue 33, observation 5):
editors and `> file` save a receipt with one final newline, so exactly one "\\n" or "\\r\\n"
after the canonical bytes is read past in both verifiers (docs/format.md, check
`canonical_bytes`); a second newline, a space, a lone "\\r" or a newline before the value are
still refused there. Each case is a file's bytes, given to both verifiers as they are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ledger.canonical import canonical_json
from tests.vectors.make_vectors import TEST_KEY, build_ledger, seed_receipt
from tests.web import corpus as c
from tests.web.corpus import Expected

ACCEPTED = {"one final LF": b"\n", "one final CRLF": b"\r\n"}
REFUSED = {
    "two final LFs": b"\n\n",
    "a final CRLF after an LF": b"\n\r\n",
    "two final CRLFs": b"\r\n\r\n",
    "a final space": b" ",
    "a space, then LF": b" \n",
    "LF, then a space": b"\n ",
    "a lone final CR": b"\r",
    "a final tab and LF": b"\t\n",
    "a final NUL": b"\x00",
}


def hostile_cases(work: Path, pki: Any) -> list[Expected]:
    """Each ending after our receipt (pinned to its key: valid or invalid at canonical_bytes) and
    after the reference receipt (no pin: unpinned when accepted), and a newline before the
    value (`pki` is not needed)."""
    del pki  # no stamps here
    ours = canonical_json(build_ledger(work / "newline-ledger", 2)[1])
    seed = canonical_json(seed_receipt())
    site = c.trust_root(TEST_KEY)
    cases = []
    for name, tail in ACCEPTED.items():
        cases.append(Expected(f"ours + {name}", ours + tail, site, "valid", None))
        cases.append(Expected(f"seed + {name}", seed + tail, None, "unpinned", "pinned_key"))
    for name, tail in REFUSED.items():
        cases.append(Expected(f"ours + {name}", ours + tail, site, "invalid", "canonical_bytes"))
        cases.append(Expected(f"seed + {name}", seed + tail, None, "invalid", "canonical_bytes"))
    for name, head in ACCEPTED.items():
        cases.append(
            Expected(f"{name} before ours", head + ours, site, "invalid", "canonical_bytes")
        )
    return cases
