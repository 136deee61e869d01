"""What `crovia publish` adds for people: the verifier page under `v/` and `trust_root.json`.

A writer of `crovia publish` (ledger/publish/publisher.py, `WRITERS`; the receipts are
ledger/publish/receipt_files.py). The page pins the site's key: the trust root is written into the
page itself (a JSON data block, not a script), so a copy of the page opened from disk still compares
receipts with this site's key, not with the key a receipt carries. Files are rewritten only when
their bytes change.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import orjson

from crovia_spider.config.trust_roots import trust_root, trust_root_text
from ledger import jsonl
from ledger.publish import PublishContext
from ledger.store import ROTATIONS_FILE, SEALS_FILE

PAGE_DIR = "v/"
PAGE_ASSETS = (
    "index.html",
    "verify-core.js",
    "verify-stamps.js",
    "page.js",
    "verifier.css",
    # PKI.js and asn1js, pinned and bundled (vendor/recipe/), served from the site's own origin
    "vendor/pkijs.bundle.js",
    "vendor/LICENSES/asn1js.LICENSE",
    "vendor/LICENSES/bytestreamjs.LICENSE",
    "vendor/LICENSES/noble-hashes.LICENSE",
    "vendor/LICENSES/peculiar-utils.LICENSE",
    "vendor/LICENSES/pkijs.LICENSE",
)
TRUST_ROOT_FILE = "trust_root.json"
_TRUST_ROOT_SLOT = b'{"key_id":null,"public_key_hex":null}'


def write_verifier_page(context: PublishContext) -> None:
    """Write the page (with the site's trust root in it) and `trust_root.json`, if changed."""
    trust = site_trust_root(context)
    _write_if_changed(context, TRUST_ROOT_FILE, trust_root_text(trust).encode())
    for name in PAGE_ASSETS:
        data = page_asset(name)
        if name == "index.html":
            data = data.replace(_TRUST_ROOT_SLOT, _embedded(trust))
        _write_if_changed(context, PAGE_DIR + name, data)


def site_trust_root(context: PublishContext) -> dict[str, Any]:
    """The site's trust root (docs/format.md, "This project: trust root"): the newest key of
    rotations.jsonl, else the key of the newest published seal; every rotation record leading to
    it; the TSA roots of $CROVIA_TSA_ROOTS."""
    rotations = [
        orjson.loads(line) for _, line in jsonl.iter_lines(context.ledger_dir / ROTATIONS_FILE)
    ]
    if rotations:
        public_hex = rotations[-1]["new_public_key_hex"]
    else:
        public_hex = _seal_at(context, context.new_size)["public_key_hex"]
    return trust_root(bytes.fromhex(public_hex), context.checkpoint.origin, rotations)


def page_asset(name: str) -> bytes:
    """The bytes of one file of the verifier page as shipped in the package."""
    return resources.files("crovia_spider.web").joinpath("verifier", *name.split("/")).read_bytes()


def _seal_at(context: PublishContext, leaf_count: int) -> dict:
    for _offset, line in jsonl.iter_lines(context.ledger_dir / SEALS_FILE):
        seal = orjson.loads(line)
        if seal["leaf_count"] == leaf_count:
            return seal
    raise LookupError(f"no seal at {leaf_count} leaves in {context.ledger_dir}")


def _embedded(trust: dict[str, Any]) -> bytes:
    # Inside <script type="application/json"> only "</" could end the block early; escape "<".
    return json.dumps(trust, sort_keys=True, separators=(",", ":")).replace("<", "\\u003c").encode()


def _write_if_changed(context: PublishContext, relative: str, data: bytes) -> None:
    if context.out.read(relative) != data:
        context.out.write(relative, data)
