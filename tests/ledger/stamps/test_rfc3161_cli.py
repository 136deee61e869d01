"""Acceptance of RFC 3161 stamping: crawl, seal, `crovia stamp` against OpenSSL's own TSA on
127.0.0.1, `crovia prove`, `crovia verify --tsa-root`, and `openssl ts -verify` on the token.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from crovia_spider.demo_tsa import OpenSslTsa, closed_port_url, openssl
from ledger.canonical import canonical_json
from ledger.exceptions import Rfc3161Invalid, SealSignatureInvalid
from ledger.receipt import verify_receipt
from ledger.stamps import seal_digest, stamped_bytes
from tests.ledger.stamps.conftest import crovia, first_axiom


def stamp_and_prove(base: Path, tsa_url: str, **env: str) -> dict:
    proc = crovia(base, "stamp", CROVIA_TSA_URLS=tsa_url, **env)
    assert proc.returncode == 0, proc.stderr
    proof = crovia(base, "prove", first_axiom(base), "--out", str(base / "receipt.json"), "--force")
    assert proof.returncode == 0, proof.stderr
    return json.loads((base / "receipt.json").read_bytes())


def test_stamp_prove_verify_with_a_real_tsa(work, pki):
    with OpenSslTsa(pki) as tsa:
        receipt = stamp_and_prove(work, tsa.url, CROVIA_TSA_ROOTS=str(pki.root))
        again = crovia(work, "stamp", CROVIA_TSA_URLS=tsa.url)
        assert tsa.hits == 1, "a seal that has this TSA's token is not stamped twice"
    assert "0 RFC 3161 tokens kept" in again.stdout
    (token,) = receipt["rfc3161_timestamps"]
    assert token["tsa_url"] == tsa.url and token["gen_time"].endswith("Z")
    assert receipt["bitcoin_anchor"]["status"] == "not_stamped", "no calendar was asked"

    pinned = crovia(work, "verify", str(work / "receipt.json"), "--tsa-root", str(pki.root))
    assert pinned.returncode == 1 and "pinned_key" in pinned.stderr  # the key is not pinned
    pinned = crovia(
        work, "verify", str(work / "receipt.json"), "--tsa-root", str(pki.root), "--any-key"
    )
    assert pinned.returncode == 0, pinned.stderr
    assert "chained to a pinned root" in pinned.stdout
    assert f"pinned third party: {token['gen_time']}" in pinned.stdout
    unpinned = crovia(work, "verify", str(work / "receipt.json"), "--any-key")
    assert unpinned.returncode == 0 and "TSA NOT pinned" in unpinned.stdout
    assert "none pinned" in unpinned.stdout


def test_the_trust_root_pins_the_tsa_roots_and_the_tsa_is_named_by_its_certificate(work, pki):
    """Issue 16, obs 5 and 6: CROVIA_TSA_ROOTS go into the trust root; `verify --trust-root`
    chains the token to them; the earliest pinned time names the TSA from its certificate, never
    the unsigned tsa_url."""
    with OpenSslTsa(pki) as tsa:
        receipt = stamp_and_prove(work, tsa.url, CROVIA_TSA_ROOTS=str(pki.root))
    trust_root = work / "trust_root.json"
    made = crovia(work, "pubkey", "--trust-root", str(trust_root), CROVIA_TSA_ROOTS=str(pki.root))
    assert made.returncode == 0, made.stderr
    (pem,) = json.loads(trust_root.read_bytes())["tsa_roots"]
    assert pem.startswith("-----BEGIN CERTIFICATE-----") and pem in pki.root.read_text()
    (token,) = receipt["rfc3161_timestamps"]
    proc = crovia(work, "verify", str(work / "receipt.json"), "--trust-root", str(trust_root))
    assert proc.returncode == 0, proc.stderr
    assert "verdict: valid" in proc.stdout and "chained to a pinned root" in proc.stdout
    (earliest,) = [line for line in proc.stdout.splitlines() if "pinned third party" in line]
    assert token["gen_time"] in earliest and "CN=Test TSA" in earliest
    assert tsa.url not in earliest and "127.0.0.1" not in earliest
    forged = json.loads(json.dumps(receipt))
    forged["rfc3161_timestamps"][0]["tsa_url"] = "http://timestamp.example-famous-tsa.com"
    (work / "forged_url.json").write_bytes(canonical_json(forged))
    proc = crovia(work, "verify", str(work / "forged_url.json"), "--trust-root", str(trust_root))
    assert proc.returncode == 0 and "example-famous-tsa" not in _earliest(proc.stdout)
    forged["rfc3161_timestamps"][0]["gen_time"] = "2001-01-01T00:00:00Z"
    (work / "forged_time.json").write_bytes(canonical_json(forged))
    proc = crovia(work, "verify", str(work / "forged_time.json"), "--trust-root", str(trust_root))
    assert proc.returncode == 1 and "verdict: invalid (check rfc3161)" in proc.stderr
    proc = crovia(work, "verify", str(work / "forged_time.json"), "--pubkey", "ab" * 32)
    assert "verdict: invalid (check rfc3161)" in proc.stderr  # a stamp fails before the pin


def _earliest(out: str) -> str:
    return "".join(line for line in out.splitlines() if "pinned third party" in line)


def test_openssl_accepts_the_kept_token_over_the_seals_signed_bytes(work, pki):
    with OpenSslTsa(pki) as tsa:
        receipt = stamp_and_prove(work, tsa.url)
    (work / "token.der").write_bytes(
        base64.b64decode(receipt["rfc3161_timestamps"][0]["token_base64"])
    )
    (work / "seal.bytes").write_bytes(stamped_bytes(receipt["seal"]))
    out = openssl(
        "ts", "-verify", "-data", "seal.bytes", "-in", "token.der", "-token_in",
        "-CAfile", str(pki.root), "-untrusted", str(pki.tsa_cert), cwd=work,
    )  # fmt: skip
    assert b"Verification: OK" in out


def test_a_changed_byte_in_the_token_seal_or_imprint_fails_verify(work, pki):
    with OpenSslTsa(pki) as tsa:
        receipt = stamp_and_prove(work, tsa.url)
    token = base64.b64decode(receipt["rfc3161_timestamps"][0]["token_base64"])
    imprint_at = token.index(seal_digest(receipt["seal"]))
    for position in [*range(0, len(token), 7), imprint_at, imprint_at + 31]:
        changed = bytearray(token)
        changed[position] ^= 0x01
        mutated = json.loads(json.dumps(receipt))
        mutated["rfc3161_timestamps"][0]["token_base64"] = base64.b64encode(changed).decode()
        with pytest.raises(Rfc3161Invalid):
            verify_receipt(mutated, tsa_roots=_roots(pki))
    mutated = json.loads(json.dumps(receipt))
    mutated["seal"]["sealed_at"] = mutated["seal"]["sealed_at"].replace("2", "3", 1)
    with pytest.raises(SealSignatureInvalid):
        verify_receipt(mutated)
    for name, value in (("imprint", imprint_at), ("token", len(token) // 2)):
        changed = bytearray(token)
        changed[value] ^= 0x80
        mutated = json.loads(json.dumps(receipt))
        mutated["rfc3161_timestamps"][0]["token_base64"] = base64.b64encode(changed).decode()
        (work / f"{name}.json").write_bytes(canonical_json(mutated))  # exact bytes: verify reads
        proc = crovia(
            work, "verify", str(work / f"{name}.json"), "--tsa-root", str(pki.root), "--any-key"
        )
        assert proc.returncode == 1 and "check rfc3161 failed" in proc.stderr, proc.stderr


def test_a_token_checked_under_another_root_or_with_another_gen_time_fails(work, pki, tmp_path):
    from crovia_spider.demo_tsa import TestPki

    stranger = TestPki(tmp_path / "stranger", name="Stranger")
    with OpenSslTsa(pki) as tsa:
        receipt = stamp_and_prove(work, tsa.url)
    proc = crovia(
        work, "verify", str(work / "receipt.json"), "--tsa-root", str(stranger.root), "--any-key"
    )
    assert proc.returncode == 1 and "does not chain to a pinned root" in proc.stderr
    receipt["rfc3161_timestamps"][0]["gen_time"] = "2001-01-01T00:00:00Z"
    with pytest.raises(Rfc3161Invalid, match="genTime"):
        verify_receipt(receipt)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("down", "ConnectionRefusedError"),
        ("hang", "timed out"),
        ("garbage", "not a DER TimeStampResp"),
        ("other_nonce", "nonce"),
        ("other_data", "imprint is not sha256 of the seal's signed bytes"),
    ],
)
def test_a_failing_tsa_is_recorded_nothing_is_kept_and_the_next_run_retries(
    work, pki, mode, reason
):
    with OpenSslTsa(pki, mode=mode) as bad:
        url = closed_port_url() if mode == "down" else bad.url
        proc = crovia(work, "stamp", "--timeout", "2", CROVIA_TSA_URLS=url)
    assert proc.returncode == 0, proc.stderr
    assert reason in proc.stdout
    (attempt,) = [
        json.loads(x) for x in (work / "ledger/stamps/attempts.jsonl").read_text().splitlines()
    ]
    assert attempt["url"] == url and attempt["kind"] == "rfc3161" and reason in attempt["error"]
    assert not list((work / "ledger/stamps").glob("seals/*.json")), "nothing is kept"
    receipt = json.loads(crovia(work, "prove", first_axiom(work)).stdout)
    assert "rfc3161_timestamps" not in receipt
    with OpenSslTsa(pki) as good:
        receipt = stamp_and_prove(work, good.url)
    assert [t["tsa_url"] for t in receipt["rfc3161_timestamps"]] == [good.url]


def test_no_settings_do_nothing_and_an_unreadable_root_is_a_usage_error(work):
    proc = crovia(work, "stamp")
    assert proc.returncode == 0 and "nothing to do" in proc.stdout
    proc = crovia(
        work, "stamp", CROVIA_TSA_URLS="http://127.0.0.1:9/", CROVIA_TSA_ROOTS="/nonexistent.pem"
    )
    assert proc.returncode == 2 and "cannot read trusted TSA root" in proc.stderr


def _roots(pki):
    from ledger.stamps.check import load_roots

    return load_roots([pki.root])
