"""The static log directory (`crovia publish`): C2SP checkpoint, tiles, entry bundles, receipts and
the verifier page's files, written so that a reader never sees a torn file.

`publish` runs it; `publish_dir` writes atomically under the directory's lock; `receipt_files`
writes the per-leaf receipts, `screenshot_files` the screenshots of browser captures. May import
every room below it (format root, tlog, keys, stamps, receipt, store); never audit or monitor.
Exports what the rest of the project uses.
"""

from __future__ import annotations

from ledger.publish.publish_dir import TEMP_PREFIX, PublishDir
from ledger.publish.publisher import ROTATIONS, WRITERS, PublishContext, publish, seal_path
from ledger.publish.receipt_files import write_receipts
from ledger.publish.screenshot_files import write_screenshots

__all__ = [
    "ROTATIONS",
    "TEMP_PREFIX",
    "WRITERS",
    "PublishContext",
    "PublishDir",
    "publish",
    "seal_path",
    "write_receipts",
    "write_screenshots",
]
