"""The stamps of a receipt's seal, put into the receipt (`crovia prove`).

Only what exists is added, outside the signed envelope and seal: `rfc3161_timestamps` (a list of
`{gen_time, token_base64, tsa_url}`) when the seal has tokens, and a `bitcoin_anchor` block filled
from the seal's OpenTimestamps proof (status, calendars, Bitcoin claims, the whole proof as a
base64 detached `.ots` file in `ots_proof_base64`) when it has one. A receipt of a seal without
stamps keeps the reference shape exactly.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ledger.stamps import ots
from ledger.stamps.store import StampStore


def attach_stamps(receipt: dict[str, Any], ledger_dir: Path) -> dict[str, Any]:
    """`receipt` with the stamps that `ledger_dir/stamps/` holds for its seal (changed in place)."""
    receipt.update(stamp_fields(receipt["seal"], ledger_dir))
    return receipt


def stamp_fields(seal: Mapping[str, Any], ledger_dir: Path) -> dict[str, Any]:
    """The receipt fields the stamps of `seal` fill (`rfc3161_timestamps`, `bitcoin_anchor`),
    none when it has none: the same for every receipt under that seal."""
    record = StampStore(ledger_dir).load(seal)
    fields: dict[str, Any] = {}
    if record["rfc3161"]:
        fields["rfc3161_timestamps"] = sorted(
            record["rfc3161"], key=lambda token: (token["gen_time"], token["tsa_url"])
        )
    if "ots" in record:
        fields["bitcoin_anchor"] = anchor_block(record["ots"])
    return fields


def anchor_block(proof: Mapping[str, Any]) -> dict[str, Any]:
    """The receipt's `bitcoin_anchor` for a stored proof record, every claim read from the proof."""
    summary = ots.scan_detached(base64.b64decode(proof["proof_base64"])).summary
    return {
        "bitcoin_attestations": bitcoin_claims(summary),
        "calendar_attestations": list(summary.pending),
        "ots_proof_base64": proof["proof_base64"],
        "ots_url": proof["calendars"][0] if proof["calendars"] else "",
        "stamped_at": proof["stamped_at"],
        "status": summary.status,
    }


def bitcoin_claims(summary: ots.ProofSummary) -> list[dict[str, Any]]:
    """`bitcoin_attestations` entries: the block height and the merkle root that block must have
    (byte-reversed hex, as `bitcoin-cli getblockheader` prints it).
    """
    return [{"block_height": c.height, "merkle_root": c.merkle_root_hex} for c in summary.bitcoin]
