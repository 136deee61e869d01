"""Fuzz harness: an evidence bundle (a zip from anyone), through `verify_bundle`.

`crovia verify --bundle` reads a zip somebody sent: `verify_bundle` documents that whatever the
bytes, the answer is the bundle's verdict or BundleInvalid naming a file, read within bounds.
The bounds are lowered here (1 MiB a file and in all) so that the memory a zip may legitimately
inflate to stays measurable; seeds: a real bundle of an edit (tests/changes), a traversal name,
an inflating member, an empty zip.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from crovia_spider.cli import bundle_cmds

bundle_cmds.MAX_FILE = bundle_cmds.MAX_TOTAL = 1 << 20
DOCUMENTED = (bundle_cmds.BundleInvalid,)
SLACK = 256 << 10


def AMPLIFICATION(data: bytes) -> int:
    """What a zip may inflate to, within the lowered bounds, over its size: a deflated member
    is up to about 1,000 times its size, so the bound (2 MiB) is what holds, not a ratio."""
    return 20 + (2 << 20) // max(1, len(data))


def target(data: bytes) -> None:
    bundle_cmds.verify_bundle(data, None, None)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
