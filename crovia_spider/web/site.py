"""What `crovia publish` adds for people: the verifier page under `v/`, `trust_root.json`, and the
receipts (ledger/receipt_files.py). Everything is static; files are replaced atomically and only
when their bytes change.

The page pins the site's key: the trust root is written into the page itself (a JSON data block,
not a script), so a copy of the page opened from disk still compares receipts with this site's
key, not with the key a receipt carries.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from ledger.files import replace_if_changed
from ledger.jsonl import fsync_dir
from ledger.reader import LedgerReader
from ledger.receipt_files import publish_receipts

PAGE_DIR = "v"
PAGE_ASSETS = ("index.html", "verify-core.js", "page.js", "verifier.css")
TRUST_ROOT_FILE = "trust_root.json"
_TRUST_ROOT_SLOT = '{"key_id":null,"public_key_hex":null}'


def publish_site(reader: LedgerReader, out_dir: Path) -> dict[str, int]:
    """Write the page, the trust root and the new receipts of `reader`'s ledger into `out_dir`.

    Returns counts of what was written. The trust root is the newest seal's key; a ledger without
    a seal publishes nothing but the page, with no key to pin. Raises OSError on I/O failure.
    """
    out_dir = Path(out_dir)
    seal = reader.last_seal()
    trust = trust_root_of(seal) if seal else None
    written = _write_page(out_dir / PAGE_DIR, trust)
    if trust is not None:
        text = json.dumps(trust, indent=2, sort_keys=True) + "\n"
        written += replace_if_changed(out_dir / TRUST_ROOT_FILE, text.encode())
    receipts = publish_receipts(reader, out_dir)
    fsync_dir(out_dir)
    return {"page_files": written, "receipts": receipts}


def trust_root_of(seal: dict[str, Any]) -> dict[str, str]:
    """The trust root (key_id, public key, algorithm) of the key that signed `seal`."""
    return {
        "key_id": seal["key_id"],
        "public_key_hex": seal["public_key_hex"],
        "signature_algorithm": seal["sig_algorithm"],
    }


def page_asset(name: str) -> bytes:
    """The bytes of one file of the verifier page as shipped in the package."""
    return resources.files("crovia_spider.web").joinpath("verifier", name).read_bytes()


def _write_page(target: Path, trust: dict[str, str] | None) -> int:
    target.mkdir(parents=True, exist_ok=True)
    written = 0
    for name in PAGE_ASSETS:
        data = page_asset(name)
        if name == "index.html" and trust is not None:
            data = data.replace(_TRUST_ROOT_SLOT.encode(), _embedded(trust))
        written += replace_if_changed(target / name, data)
    if written:
        fsync_dir(target)
    return written


def _embedded(trust: dict[str, str]) -> bytes:
    # Inside <script type="application/json"> only "</" could end the block early; escape "<".
    return json.dumps(trust, sort_keys=True, separators=(",", ":")).replace("<", "\\u003c").encode()
