"""Verifying the stamps a receipt carries (`crovia verify`): every one found, none required.

RFC 3161 tokens are checked fully over the seal's signed bytes (ledger.stamps.tst), chained to the
roots the user pinned when given. An OpenTimestamps proof is checked up to its attestations: it
must start at the seal digest, and the receipt's claims must be exactly what the proof attests; a
Bitcoin attestation is checked against block headers the user gives. A bad stamp raises
Rfc3161Invalid or OtsInvalid; a missing one is no error.

The stamp libraries (cryptography's x509, rfc3161-client, pyasn1-modules, opentimestamps,
python-bitcoinlib) load only when a receipt carries what needs them: verifying a receipt without
stamps imports none of them (issue 19: `crovia verify` starts fast; tests/ledger/receipt/
test_verify_imports.py holds it).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger.exceptions import LedgerError, OtsInvalid, Rfc3161Invalid
from ledger.stamps import seal_digest, stamped_bytes
from ledger.stamps.plain_words import readable

if TYPE_CHECKING:  # the stamp libraries load only for a receipt that carries a stamp
    from cryptography import x509

    from ledger.stamps import ots
    from ledger.stamps.tst import TokenFacts


@dataclass(frozen=True)
class TimeClaim:
    """A time a third party vouches for, and who: `pinned` when the user pinned that party."""

    at: str
    source: str
    pinned: bool


@dataclass(frozen=True)
class StampVerdict:
    """The stamps that passed: tokens (TSA URL, facts), the proof's attestations, the times."""

    tokens: tuple[tuple[str, TokenFacts], ...]
    proof: ots.ProofSummary | None
    times: tuple[TimeClaim, ...]
    checks: tuple[str, ...]

    @property
    def earliest_pinned(self) -> TimeClaim | None:
        pinned = [t for t in self.times if t.pinned]
        return min(pinned, key=lambda t: datetime.fromisoformat(t.at)) if pinned else None


def load_roots(paths: Sequence[Path]) -> list[x509.Certificate]:
    """The PEM certificates in `paths` (each file may hold several). Raises LedgerError (usage)."""
    roots: list[x509.Certificate] = []
    if not paths:
        return roots
    from cryptography import x509

    for path in paths:
        try:
            roots += x509.load_pem_x509_certificates(Path(path).read_bytes())
        except OSError as exc:
            raise LedgerError(f"cannot read trusted TSA root {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise LedgerError(f"trusted TSA root {path} is not PEM: {readable(exc)}") from None
    return roots


def parse_block_header(text: str) -> bytes:
    """An 80-byte Bitcoin block header from 160 hex characters. Raises LedgerError (usage)."""
    try:
        header = bytes.fromhex(text)
    except ValueError:
        header = b""
    if len(header) != 80:
        raise LedgerError(f"--bitcoin-header wants 160 hex characters (80 bytes), got {text!r}")
    return header


def verify_stamps(
    receipt: Mapping[str, Any],
    *,
    tsa_roots: Sequence[x509.Certificate] = (),
    bitcoin_headers: Sequence[bytes] = (),
) -> StampVerdict:
    """Check every stamp of `receipt`; raise Rfc3161Invalid or OtsInvalid at the first bad one."""
    tokens = tuple(_tokens(receipt, tsa_roots))
    times = [
        # Named from its certificate: the token's tsa_url is unsigned, anyone can write one.
        TimeClaim(f.gen_time, f"RFC 3161 TSA {f.tsa_subject}", f.pinned)
        for _url, f in tokens
    ]
    proof = None
    anchor = receipt["bitcoin_anchor"]
    if "ots_proof_base64" in anchor:
        proof = _proof(receipt["seal"], anchor)
        times += _bitcoin_times(proof, bitcoin_headers)
    elif bitcoin_headers:
        raise OtsInvalid("--bitcoin-header given, but the receipt has no OpenTimestamps proof")
    checks = ("rfc3161",) * bool(tokens) + ("opentimestamps",) * (proof is not None)
    return StampVerdict(tokens=tokens, proof=proof, times=tuple(times), checks=checks)


def _tokens(receipt: Mapping[str, Any], roots: Sequence[x509.Certificate]):
    entries = receipt.get("rfc3161_timestamps", ())
    if not entries:
        return
    from ledger.stamps.tst import check_not_before_seal, check_token

    data = stamped_bytes(receipt["seal"])
    for number, entry in enumerate(entries):
        where = f"rfc3161_timestamps[{number}] from {entry['tsa_url']}"
        try:
            facts = check_token(_b64(entry["token_base64"], Rfc3161Invalid), data, roots)
        except Rfc3161Invalid as exc:
            raise Rfc3161Invalid(
                f"{where}: {exc.args[0]}", expected=exc.expected, computed=exc.computed
            ) from None
        if entry["gen_time"] != facts.gen_time:
            raise Rfc3161Invalid(
                f"{where}: gen_time is the token's genTime",
                expected=facts.gen_time,
                computed=entry["gen_time"],
            )
        try:
            check_not_before_seal(facts, receipt["seal"]["sealed_at"])
        except Rfc3161Invalid as exc:
            raise Rfc3161Invalid(
                f"{where}: {exc.args[0]}", expected=exc.expected, computed=exc.computed
            ) from None
        yield entry["tsa_url"], facts


def _proof(seal: Mapping[str, Any], anchor: Mapping[str, Any]) -> ots.ProofSummary:
    from opentimestamps.core.op import OpSHA256

    from ledger.stamps import ots
    from ledger.stamps.anchor import bitcoin_claims

    detached = ots.scan_detached(_b64(anchor["ots_proof_base64"], OtsInvalid))
    expected = seal_digest(seal).hex()
    if not isinstance(detached.file_hash_op, OpSHA256) or detached.file_digest.hex() != expected:
        raise OtsInvalid(
            "the proof does not start at sha256 of the seal's signed bytes",
            expected=f"sha256 {expected}",
            computed=f"{detached.file_hash_op} {detached.file_digest.hex()}",
        )
    summary = detached.summary
    claimed = {k: anchor[k] for k in ("status", "calendar_attestations", "bitcoin_attestations")}
    proven = {
        "status": summary.status,
        "calendar_attestations": list(summary.pending),
        "bitcoin_attestations": bitcoin_claims(summary),
    }
    if claimed != proven:
        raise OtsInvalid(
            "bitcoin_anchor claims what its proof does not attest",
            expected=proven,
            computed=claimed,
        )
    ots.check_submitted_to(summary, anchor["ots_url"])
    return summary


def _bitcoin_times(summary: ots.ProofSummary, headers: Sequence[bytes]) -> list[TimeClaim]:
    """Block times of the Bitcoin claims that a given header confirms; none given, none checked."""
    if not headers:
        return []
    from bitcoin.core import CBlockHeader
    from opentimestamps.core.notary import BitcoinBlockHeaderAttestation

    parsed = [CBlockHeader.deserialize(h) for h in headers]
    times = []
    for claim in summary.bitcoin:
        for header in parsed:
            if header.hashMerkleRoot == claim.digest:
                at = BitcoinBlockHeaderAttestation(claim.height).verify_against_blockheader(
                    claim.digest, header
                )
                moment = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                times.append(TimeClaim(moment, f"Bitcoin block {claim.height}", True))
    if not times:
        raise OtsInvalid(
            "no given block header has the merkle root a Bitcoin attestation requires",
            expected=[c.merkle_root_hex for c in summary.bitcoin],
            computed=[h.hashMerkleRoot[::-1].hex() for h in parsed],
        )
    return times


def _b64(text: str, error: type[Rfc3161Invalid] | type[OtsInvalid]) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise error("not standard base64", computed=text[:40]) from None
