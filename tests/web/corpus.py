"""Receipts for the page's tests and the differential corpus: stamped (a real OpenSSL TSA on
127.0.0.1, OpenTimestamps proofs built with the `opentimestamps` library), on both sides of a key
rotation, forged rotations, another site's key; and the trust roots (pins) to read them under.

Stamp fields lie outside the seal's signature, so a stamp is added to a genuine receipt here
exactly as anyone could add one; what the verifiers must do is tell a genuine stamp from a forged
one.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

import nacl.signing
from bitcoin.core import CBlockHeader
from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.op import OpAppend, OpPrepend, OpSHA256
from opentimestamps.core.timestamp import Timestamp

from crovia_spider.demo_tsa import OpenSslTsa, TestPki
from ledger.canonical import canonical_json
from ledger.exceptions import CanonicalizationError, Rfc3161Invalid
from ledger.keys import key_id
from ledger.keys.rotation import rotation_signed_bytes
from ledger.stamps import ots, seal_digest, stamped_bytes
from ledger.stamps.anchor import anchor_block
from ledger.stamps.rfc3161 import accept_reply, new_request
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_envelope

CALENDAR = "https://calendar.example/pending"
BLOCK_HEIGHT = 840000
BLOCK_TIME = 1_713_571_767  # 2024-04-20T00:09:27Z
NEW_KEY = nacl.signing.SigningKey(hashlib.sha256(b"crovia page tests: the next key").digest())
THIEF_KEY = nacl.signing.SigningKey(hashlib.sha256(b"crovia page tests: a stolen key").digest())
OTHER_KEY = nacl.signing.SigningKey(hashlib.sha256(b"crovia page tests: another site").digest())


def receipt_bytes(receipt: Any) -> bytes:
    """The bytes of a (possibly mutated) receipt: canonical where it can be, else the stdlib's;
    bytes are a receipt file as it was saved, taken as they are."""
    if isinstance(receipt, bytes):
        return receipt
    try:
        return canonical_json(receipt)
    except CanonicalizationError:
        return json.dumps(receipt, sort_keys=True, separators=(",", ":")).encode()


def public_hex(key: nacl.signing.SigningKey) -> str:
    return bytes(key.verify_key).hex()


def trust_root(
    key: nacl.signing.SigningKey | str,
    rotations: list[dict[str, Any]] = (),
    tsa_roots: list[str] = (),
) -> dict[str, Any]:
    """A trust root as `crovia publish` writes it (docs/format.md "trust root")."""
    public = key if isinstance(key, str) else public_hex(key)
    return {
        "key_id": key_id(bytes.fromhex(public)),
        "key_rotations": [dict(r) for r in rotations],
        "public_key_hex": public,
        "signature_algorithm": "ed25519",
        "tsa_roots": list(tsa_roots),
    }


# -- RFC 3161 --------------------------------------------------------------------------------------


def tsa_token(tsa: OpenSslTsa, data: bytes) -> bytes:
    """A token over sha256(`data`) from the TSA on 127.0.0.1, as `crovia stamp` asks for one."""
    request = new_request(data)
    post = urllib.request.Request(
        tsa.url,
        data=request.der,
        headers={"Content-Type": "application/timestamp-query"},
        method="POST",
    )
    with urllib.request.urlopen(post, timeout=30) as reply:  # 127.0.0.1 only
        body = reply.read()
    try:
        token, _facts = accept_reply(body, request, data)
    except Rfc3161Invalid:
        # `crovia stamp` would not keep it (OpenSSL may send a SET OF certificates out of DER
        # order); a verifier must refuse it all the same, so its bytes are kept as they came:
        # the reply's SEQUENCE content is the status, then the token.
        from pyasn1.codec.ber import decoder

        size = body[1] & 0x7F if body[1] & 0x80 else 0
        _status, token = decoder.decode(body[2 + size :])
    return token


def with_token(receipt: dict[str, Any], token: bytes, gen_time: str, url: str) -> dict[str, Any]:
    out = copy.deepcopy(receipt)
    entry = {"gen_time": gen_time, "token_base64": base64.b64encode(token).decode(), "tsa_url": url}
    out["rfc3161_timestamps"] = [entry]
    return out


def gen_time_of(token: bytes, data: bytes) -> str:
    """The token's genTime as `crovia stamp` records it; a placeholder for a token it refuses."""
    from ledger.stamps.tst import check_token

    try:
        return check_token(token, data).gen_time
    except Rfc3161Invalid:  # still the token's own genTime, so only what was refused differs
        from pyasn1.codec.ber import decoder
        from pyasn1_modules import rfc3161, rfc5652

        info, _ = decoder.decode(token, asn1Spec=rfc5652.ContentInfo())
        signed, _ = decoder.decode(info["content"], asn1Spec=rfc5652.SignedData())
        content = bytes(signed["encapContentInfo"]["eContent"])
        tst, _ = decoder.decode(content, asn1Spec=rfc3161.TSTInfo())
        moment = tst["genTime"].asDateTime.astimezone(UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# -- OpenTimestamps --------------------------------------------------------------------------------


def ots_proof(digest: bytes, *, confirmed: bool) -> tuple[bytes, bytes | None]:
    """A detached proof on `digest` (calendar-shaped: append, sha256, pending); `confirmed` adds
    a Bitcoin attestation on prepend+sha256. Returns the proof and the matching block header."""
    stamp = Timestamp(digest)
    commitment = stamp.ops.add(OpAppend(b"\x01" * 16)).ops.add(OpSHA256())
    header = None
    if confirmed:
        root = commitment.ops.add(OpPrepend(b"synthetic block")).ops.add(OpSHA256())
        root.attestations.add(BitcoinBlockHeaderAttestation(BLOCK_HEIGHT))
        header = CBlockHeader(
            nVersion=0x20000000,
            hashMerkleRoot=root.msg,
            nTime=BLOCK_TIME,
            nBits=0x207FFFFF,
            nNonce=1,
        ).serialize()
    else:
        commitment.attestations.add(PendingAttestation(CALENDAR))
    return ots.detached(stamp), header


def with_proof(receipt: dict[str, Any], proof: bytes) -> dict[str, Any]:
    out = copy.deepcopy(receipt)
    record = {
        "proof_base64": base64.b64encode(proof).decode(),
        "calendars": [CALENDAR],
        "stamped_at": "2026-06-18T05:00:00Z",
    }
    out["bitcoin_anchor"] = anchor_block(record)
    return out


def other_header(header: bytes) -> bytes:
    changed = bytearray(header)
    changed[40] ^= 0xFF  # inside hashMerkleRoot
    return bytes(changed)


# -- key rotations ---------------------------------------------------------------------------------


@dataclass
class Rotated:
    """Receipts published before a rotation (old key, as they were) and after it, the record."""

    before: list[dict[str, Any]]
    after: list[dict[str, Any]]
    record: dict[str, Any]
    fork: dict[str, Any] = field(default_factory=dict)


def rotated_ledger(directory: Path) -> Rotated:
    """TEST_KEY signs 3 leaves and seals (those receipts are published then), hands over to
    NEW_KEY, which signs 3 more and seals."""
    with Ledger.open(directory, signing_key=TEST_KEY) as ledger:
        first = ledger.issue([sample_envelope(n) for n in range(3)])
        ledger.seal()
        before = [ledger.receipt(item.axiom_id) for item in first]
        record = ledger.rotate_key(NEW_KEY)
        second = ledger.issue([sample_envelope(n) for n in range(3, 6)])
        ledger.seal()
        after = [ledger.receipt(item.axiom_id) for item in second]
    fork = signed_record(record, THIEF_KEY, old_signer=TEST_KEY)
    return Rotated(before, after, record, fork)


def signed_record(
    record: dict[str, Any],
    new_key: nacl.signing.SigningKey,
    *,
    old_signer: nacl.signing.SigningKey,
) -> dict[str, Any]:
    """`record` handed over to `new_key` instead, its old signature made by `old_signer` (the
    outgoing key for a fork by a thief who holds it; any other key for a forgery)."""
    out = dict(record)
    new = bytes(new_key.verify_key)
    out["new_public_key_hex"] = new.hex()
    out["new_key_id"] = key_id(new)
    signed = rotation_signed_bytes(out)
    out["old_signature"] = old_signer.sign(signed).signature.hex()
    out["new_signature"] = new_key.sign(signed).signature.hex()
    return out


def tsa_roots_pem(pki: TestPki) -> list[str]:
    return [pki.root.read_text()]


def seal_bytes(receipt: dict[str, Any]) -> bytes:
    return stamped_bytes(receipt["seal"])


def seal_digest_of(receipt: dict[str, Any]) -> bytes:
    return seal_digest(receipt["seal"])


def variant_pki(directory: Path, *, rsa: bool = False, ess: str = "sha256", chain: bool = False):
    """A TestPki whose TSA differs in what a token carries: an RSA key (rsaEncryption signatures),
    ESS signingCertificate v1 (`ess="sha1"`), or the CA certificate and its ESS id in the token
    (`chain`). The tokens still come from `openssl ts -reply`."""
    from crovia_spider.demo_tsa import openssl

    pki = TestPki(directory, name=f"Variant{'-rsa' * rsa}{'-chain' * chain}-{ess}")
    if rsa:
        openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "tsa.key",
                "-out", "tsa.csr", "-subj", "/CN=Variant RSA TSA", cwd=directory)  # fmt: skip
        openssl("x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", "tsa.pem", "-days", "2", "-extfile", "tsa.ext",
                cwd=directory)  # fmt: skip
    config = (
        (directory / "ts.cnf")
        .read_text()
        .replace("ess_cert_id_alg = sha256", f"ess_cert_id_alg = {ess}")
    )
    if chain:
        config = config.replace("ess_cert_id_chain = no", "ess_cert_id_chain = yes")
        config += f"certs = {directory}/ca.pem\n"
    (directory / "ts.cnf").write_text(config)
    return pki


def der_token(token: bytes) -> bytes:
    """`token` with its SignedData re-encoded in DER (SET OF sorted): what a TSA that follows
    DER sends. The certificates are not signed, so the token stays genuine."""
    from pyasn1.codec.ber import decoder
    from pyasn1.codec.der import encoder
    from pyasn1_modules import rfc5652

    info, _ = decoder.decode(token, asn1Spec=rfc5652.ContentInfo())
    signed, _ = decoder.decode(info["content"], asn1Spec=rfc5652.SignedData())
    info["content"] = encoder.encode(signed)
    return encoder.encode(info)


# -- OpenTimestamps proofs at and over the bounds of ledger/stamps/ots.py -------------------------


def _pending_branch(stamp: Timestamp, first: bytes, hashes: int = 1) -> None:
    """One calendar-shaped branch of `stamp`: append `first`, `hashes` sha256, pending CALENDAR."""
    node = stamp.ops.add(OpAppend(first))
    for _ in range(hashes):
        node = node.ops.add(OpSHA256())
    node.attestations.add(PendingAttestation(CALENDAR))


def bounded_proofs(digest: bytes) -> list[tuple[str, bytes]]:
    """Proofs on `digest` whose every attestation is pending at CALENDAR (so a receipt's anchor
    claims exactly what each attests), at and over each bound, and ones repeating a branch."""
    from opentimestamps.core.op import OpHexlify

    proofs = []
    honest = Timestamp(digest)
    _pending_branch(honest, b"\x01" * 16)
    one = ots.detached(honest)
    header, body = one[: -len(_serialized(honest))], _serialized(honest)
    proofs.append(("a branch repeated in the root", header + b"\xff" + body + body))
    pending = Timestamp(digest)
    pending.ops.add(OpAppend(b"\x01" * 16)).ops.add(OpSHA256())
    attestation = _serialized(_attested(digest))
    proofs.append(("an attestation repeated", header + b"\xff" + attestation + attestation))
    # reverse (0xf2), sha256 (0x08), the attestation (the library warns as it builds a reverse)
    proofs.append(("a reverse operation", header + b"\xf2\x08" + attestation))
    many = Timestamp(digest)
    for number in range(4):
        _pending_branch(many, bytes([number + 1]), hashes=200)
    proofs.append(("more operations than its size allows", ots.detached(many)))
    within = Timestamp(digest)
    for number in range(2):
        _pending_branch(within, bytes([number + 1]), hashes=200)
    proofs.append(("many operations within the bound", ots.detached(within)))
    wide = Timestamp(digest)
    node = wide
    for _ in range(6):  # 32 -> 2048 bytes
        node = node.ops.add(OpHexlify())
    node = node.ops.add(OpAppend(b"x" * 2045))
    for number in range(24):
        node.ops.add(OpAppend(bytes([number + 1]))).attestations.add(PendingAttestation(CALENDAR))
    proofs.append(("more message bytes than its size allows", ots.detached(wide)))
    deep = Timestamp(digest)
    _pending_branch(deep, b"\x02", hashes=256)
    proofs.append(("deeper than 256", ots.detached(deep)))
    long = Timestamp(digest)
    for number in range(66):
        _pending_branch(long, number.to_bytes(2, "big") * 2032)
    proofs.append(("longer than the bound", ots.detached(long)))
    return proofs


def _attested(digest: bytes) -> Timestamp:
    stamp = Timestamp(digest)
    stamp.attestations.add(PendingAttestation(CALENDAR))
    return stamp


def _serialized(stamp: Timestamp) -> bytes:
    from opentimestamps.core.serialize import BytesSerializationContext

    ctx = BytesSerializationContext()
    stamp.serialize(ctx)
    return ctx.getbytes()


# -- hostile cases with an expected verdict --------------------------------------------------------


@dataclass
class Expected:
    """A differential-corpus case whose verdict is known in advance: both verifiers must give
    `verdict` and name `check` as the first failing one (None when nothing failed). Modules
    named `tests/web/corpus_*.py` contribute these through a `hostile_cases(work, pki)` function
    (work: an empty directory; pki: the corpus's TestPki, a real OpenSSL TSA under a root)."""

    name: str
    receipt: Any
    pin: dict[str, Any] | None
    verdict: str
    check: str | None
    headers: tuple[bytes, ...] = ()
