"""Fuzz harness: what a browser capture reads of hostile bytes (issue 45).

- A main document through `wall_evidence` (crovia_spider/capture/walls.py): a status chosen by the
  input's length among those a wall answers with and others, headers from the input's first line
  (`name: value` pairs split on `;`), the rest the body. Any bytes give a list of short strings,
  never an exception; none for a status no wall answers with, unless `cf-mitigated: challenge`.
- An input starting with `{`: a browser capture's manifest of exchanges as `crovia export` reads it
  (crovia_spider/archive/browser.py `_exchanges` and `_main_index`): a list of exchanges, or
  ExportRefused, and every exchange it would write (`_answered`) has a URL, an int status and both
  digests as strings.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from crovia_spider.archive.browser import _answered, _exchanges, _main_index
    from crovia_spider.capture.walls import WALL_STATUSES, wall_evidence
    from crovia_spider.exceptions import ExportRefused

STATUSES = (200, 403, 429, 503, 404, 302)
DOCUMENTED = (ExportRefused,)
SLACK = 64 << 10


def headers_of(line: bytes) -> dict[str, str]:
    pairs = (part.partition(":") for part in line.decode("latin-1").split(";"))
    return {name.strip().lower(): value.strip() for name, _, value in pairs if name.strip()}


def target(data: bytes) -> None:
    if data[:1] == b"{":
        body = {"body_sha256": "a" * 64, "response_head_sha256": "b" * 64}
        exchanges = _exchanges(data, "fuzzed capture")  # ExportRefused is documented
        if not isinstance(exchanges, list):
            raise TypeError(f"_exchanges gave {type(exchanges).__name__}")
        index = _main_index(body, data, "fuzzed capture")
        if not -1 <= index < len(exchanges):
            raise ValueError(f"main document at {index} of {len(exchanges)}")
        for exchange in exchanges:
            if _answered(exchange) and not isinstance(exchange["status"], int):
                raise TypeError("an answered exchange without an int status")
        return
    status = STATUSES[len(data) % len(STATUSES)]
    line, _, page = data.partition(b"\n")
    headers = headers_of(line)
    found = wall_evidence(status, headers, page)
    if not isinstance(found, list) or not all(isinstance(e, str) and e for e in found):
        raise TypeError(f"wall_evidence gave {found!r}")
    if any(len(e) > 300 for e in found):
        raise ValueError("a piece of evidence longer than 300 characters")
    challenged = headers.get("cf-mitigated", "").strip().lower() == "challenge"
    if found and status not in WALL_STATUSES and not challenged:
        raise ValueError(f"a wall found on HTTP {status} without cf-mitigated: {found}")


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
