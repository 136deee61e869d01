"""Published screenshots: `<DIR>/screenshots/<sha256>.png` for every browser capture's screenshot.

A writer of `crovia publish` (ledger/publish/publisher.py, `WRITERS`): each browser capture
(`body.mode` "browser", docs/format.md) among the leaves newly published has its full-page
screenshot copied from `bodies/` under the digest its record signs, so the verifier page can show
the image of a capture it verifies after checking the bytes against that digest (docs/verifier.md).
The blob is read through BodyStore, which refuses bytes that are not the signed ones: a screenshot
missing from `bodies/` or not whole is not published (`crovia audit --bodies` names it), and the
page says it could not be shown. Named by content, a file is written once.
"""

from __future__ import annotations

import orjson

from ledger.exceptions import BodyMismatch
from ledger.publish.publisher import PublishContext, _lines
from ledger.records.capture import BROWSER_MODE, CAPTURE_TYPE
from ledger.store import BodyStore

SCREENSHOTS_PREFIX = "screenshots/"
_CAPTURE_MARK = b'"axiom_type":"' + CAPTURE_TYPE.encode() + b'"'
_BROWSER_MARK = b'"mode":"' + BROWSER_MODE.encode() + b'"'


def write_screenshots(context: PublishContext) -> None:
    """Write the screenshot of every browser capture in [old_size, new_size) that is kept whole.
    Raises OSError on I/O failure."""
    count = context.new_size - context.old_size
    if count <= 0:
        return
    store = BodyStore(context.ledger_dir)
    for line in _lines(context, context.old_size, count):
        if _CAPTURE_MARK not in line or _BROWSER_MARK not in line:
            continue  # most leaves: not parsed
        body = orjson.loads(line).get("body") or {}
        shot = (body.get("browser") or {}).get("screenshot") if body.get("mode") else None
        digest = shot.get("sha256") if isinstance(shot, dict) else None
        if isinstance(digest, str) and len(digest) == 64:
            path = screenshot_path(digest)
            if (context.out.root / path).exists():
                continue
            try:
                context.out.write(path, store.get(digest))
            except BodyMismatch:  # not kept whole: nothing is published in its place
                continue


def screenshot_path(digest: str) -> str:
    """Where the screenshot of sha256 `digest` is published."""
    return f"{SCREENSHOTS_PREFIX}{digest}.png"
