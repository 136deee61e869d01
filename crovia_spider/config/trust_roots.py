"""The trust root files front ends write (`keygen --trust-root`, `pubkey --trust-root`, `crovia
publish`): the key, its signed rotation chain and the TSA roots of `$CROVIA_TSA_ROOTS`.
docs/format.md, "This project: trust root"."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crovia_spider.options import env_default


def tsa_root_pems() -> list[str]:
    """The PEM certificates of the files `$CROVIA_TSA_ROOTS` names (comma-separated), one string
    per certificate. Raises LedgerError (a usage error) for a file that holds none."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    from ledger.exceptions import LedgerError

    pems: list[str] = []
    for name in (p.strip() for p in env_default("CROVIA_TSA_ROOTS").split(",")):
        if not name:
            continue
        try:
            certificates = x509.load_pem_x509_certificates(Path(name).read_bytes())
        except (OSError, ValueError) as exc:
            raise LedgerError(f"CROVIA_TSA_ROOTS: cannot read {name}: {exc}") from None
        pems += [c.public_bytes(Encoding.PEM).decode("ascii") for c in certificates]
    return pems


def trust_root(
    public: bytes, origin: str | None = None, rotations: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """The trust root of `public` with the note verifier key under `origin` (default: the log's
    origin, $CROVIA_LOG_ORIGIN or `crovia.local/<key_id>`) and the records leading to it."""
    from ledger.keys import trust_root_fields
    from ledger.store import log_origin, note_verifier_key

    if origin is None:
        origin = log_origin(env_default("CROVIA_LOG_ORIGIN") or None, public)
    return trust_root_fields(
        public,
        note_verifier_key=note_verifier_key(public, origin),
        key_rotations=rotations,
        tsa_roots=tsa_root_pems(),
    )


def trust_root_text(root: Mapping[str, Any]) -> str:
    """The file form: pretty-printed, sorted keys, a trailing newline."""
    return json.dumps(root, indent=2, sort_keys=True) + "\n"
