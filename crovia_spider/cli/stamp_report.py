"""What `crovia verify` says about a receipt's stamps, for people and for `--json`."""

from __future__ import annotations

from typing import Any

from crovia_spider.cli.ledger_args import printable


def stamp_report(verdict: Any) -> dict[str, Any]:
    """The `stamps` and `earliest_pinned_time` fields of `crovia verify --json`."""
    earliest = verdict.earliest_pinned
    proof = verdict.proof
    return {
        "stamps": {
            "rfc3161": [{"tsa_url": url, **facts.__dict__} for url, facts in verdict.tokens],
            "opentimestamps": None
            if proof is None
            else {
                "status": proof.status,
                "pending_calendars": list(proof.pending),
                "bitcoin": [
                    {"block_height": c.height, "merkle_root": c.merkle_root_hex}
                    for c in proof.bitcoin
                ],
            },
            "times": [t.__dict__ for t in verdict.times],
        },
        "earliest_pinned_time": None if earliest is None else earliest.__dict__,
    }


def print_stamps(verdict: Any) -> None:
    """One line per stamp, then the earliest time a pinned third party vouches for."""
    if not verdict.tokens and verdict.proof is None:
        print("stamps: none (the seal was not timestamped by a third party)")
        return
    for url, facts in verdict.tokens:
        pin = "chained to a pinned root" if facts.pinned else "TSA NOT pinned (give --tsa-root PEM)"
        print(
            f"rfc3161: {facts.gen_time} by TSA {facts.tsa_subject} (its certificate), {pin};"
            f" said to come from {printable(url)} (unsigned)"
        )
    _print_proof(verdict)
    earliest = verdict.earliest_pinned
    if earliest is None:
        print(
            "earliest third-party time: none pinned (give --tsa-root PEM for a token, or"
            " --bitcoin-header HEX for a Bitcoin attestation)"
        )
    else:
        print(
            f"earliest time vouched for by a pinned third party: {earliest.at} ({earliest.source})"
        )


def _print_proof(verdict: Any) -> None:
    proof = verdict.proof
    if proof is None:
        return
    for calendar in proof.pending:
        print(
            f"opentimestamps: pending at calendar {calendar} (run `crovia stamp --upgrade` later)"
        )
    checked = {t.source for t in verdict.times}
    for claim in proof.bitcoin:
        source = f"Bitcoin block {claim.height}"
        state = (
            "checked against the given header"
            if source in checked
            else "not checked: give --bitcoin-header HEX of that block"
        )
        print(
            f"opentimestamps: Bitcoin block {claim.height} must have merkle root"
            f" {claim.merkle_root_hex} ({state})"
        )
