"""Hostile stamps with a known verdict (issue 30, observations 2 and 9): TSA certificate paths
OpenSSL refuses (an issuer that is no CA, a CA without keyCertSign, pathLenConstraint exceeded,
a signer whose keyUsage or extendedKeyUsage is not a TSA's, a certificate of the path marking
critical an extension OpenSSL does not handle: issue 42, observation 6), genuine tokens older
than the seal they stamp, and OpenTimestamps proofs pending at a calendar the receipt was not
submitted to.
Each passing path has a control beside it, so a verifier that refuses everything fails too.

Tokens come from OpenSSL's `openssl ts -reply` on 127.0.0.1 (tests/web/hostile_pki.py); a seal
older than its token is made by sealing with the clock 77 seconds ahead, as a signer whose clock
runs ahead (or one who wants an earlier time vouched for) would.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

from opentimestamps.core.notary import PendingAttestation
from opentimestamps.core.op import OpAppend, OpSHA256
from opentimestamps.core.timestamp import Timestamp

from crovia_spider.demo_tsa import OpenSslTsa, TestPki
from ledger.stamps import ots
from tests.vectors.make_vectors import TEST_KEY, build_ledger
from tests.web import corpus as c
from tests.web import hostile_pki as h
from tests.web.corpus import Expected

EVIL_CALENDAR = "http://127.0.0.2:9/evil"
SECOND_CALENDAR = "https://b.calendar.example"
AHEAD = timedelta(seconds=77)


def hostile_cases(work: Path, pki: TestPki) -> list[Expected]:
    """Every case of this module, built under `work`; `pki` is the corpus's TSA."""
    return (
        tsa_path_cases(work)
        + carried_cases(work, pki)
        + early_token_cases(work, pki)
        + calendar_cases(work)
    )


def _paths() -> dict[str, tuple[dict[str, Any], str]]:
    """name -> (chained_pki options, expected verdict under a pin of its root)."""
    return {
        "an intermediate CA": ({}, "valid"),
        "an intermediate with pathLenConstraint 0": (
            {"intermediates": [h.CA + "basicConstraints = critical, CA:TRUE, pathlen:0\n"]},
            "valid",
        ),
        "an end-entity issuer (CA:FALSE, serverAuth)": (
            {"intermediates": [h.END_ENTITY]},
            "invalid",
        ),
        "an issuer without basicConstraints": (
            {"intermediates": ["keyUsage = critical, keyCertSign\n"]},
            "invalid",
        ),
        "an intermediate CA without keyCertSign": (
            {"intermediates": [h.CA_WITHOUT_CERT_SIGN]},
            "invalid",
        ),
        "a root of pathLenConstraint 0 over two intermediates": (
            {
                "root": h.ROOT + "basicConstraints = critical, CA:TRUE, pathlen:0\n",
                "intermediates": [h.CA],
            },
            "invalid",
        ),
        "an intermediate of pathLenConstraint 0 over another": (
            {"intermediates": [_pathlen(0), h.CA]},
            "invalid",
        ),
        "an intermediate of pathLenConstraint 1 over another": (
            {"intermediates": [_pathlen(1), h.CA]},
            "valid",
        ),
        "a signer with keyUsage keyCertSign only": (
            {"tsa": h.TSA.replace("digitalSignature", "keyCertSign")},
            "invalid",
        ),
        "a signer whose timeStamping extendedKeyUsage is not critical": (
            {"tsa": h.TSA.replace("critical, timeStamping", "timeStamping")},
            "invalid",
        ),
        "a signer with serverAuth beside timeStamping": (
            {"tsa": h.TSA.replace("timeStamping", "timeStamping, serverAuth")},
            "invalid",
        ),
        # RFC 5280 4.2: a critical extension the verifier does not handle refuses the certificate.
        # OpenSSL handles only those of X509_supported_extension (issue 42, observation 6).
        "a signer with an unknown critical extension": (
            {"tsa": h.TSA + h.UNKNOWN_CRITICAL},
            "invalid",
        ),
        "a signer with an unknown extension, not critical": (
            {"tsa": h.TSA + h.UNKNOWN_CRITICAL.replace("critical, ", "")},
            "valid",
        ),
        "a signer with a critical subjectKeyIdentifier (not one OpenSSL handles)": (
            {"tsa": h.TSA + "subjectKeyIdentifier = critical, hash\n"},
            "invalid",
        ),
        "a signer with critical certificatePolicies and subjectAltName (handled)": (
            {"tsa": h.TSA + h.HANDLED_CRITICAL},
            "valid",
        ),
        "an intermediate with an unknown critical extension": (
            {"intermediates": [h.CA + h.UNKNOWN_CRITICAL]},
            "invalid",
        ),
        "an intermediate with a critical authorityKeyIdentifier": (
            {"intermediates": [h.CA + "authorityKeyIdentifier = critical, keyid\n"]},
            "invalid",
        ),
        "an intermediate with critical policyConstraints and nameConstraints (handled)": (
            {"intermediates": [h.CA + h.HANDLED_CRITICAL_CA]},
            "valid",
        ),
        "a root with an unknown critical extension": (
            {"root": h.ROOT + h.UNKNOWN_CRITICAL},
            "invalid",
        ),
    }


def _pathlen(length: int) -> str:
    return (
        f"basicConstraints = critical, CA:TRUE, pathlen:{length}\n"
        "keyUsage = critical, keyCertSign, cRLSign\n"
    )


def tsa_path_cases(work: Path, only: str = "") -> list[Expected]:
    """A token from each path of `_paths` (those whose name holds `only`), with its root pinned
    and unpinned: only the pin of its own root can make it valid, and a path OpenSSL refuses
    never."""
    receipt = build_ledger(work / "paths-ledger", 3)[1]
    data = c.seal_bytes(receipt)
    cases = []
    for number, (name, (options, verdict)) in enumerate(_paths().items()):
        if only not in name:
            continue
        pki = h.chained_pki(work / f"path{number}", f"Path{number}", **options)
        with OpenSslTsa(pki) as tsa:
            token = c.der_token(c.tsa_token(tsa, data))
            url = tsa.url
        stamped = c.with_token(receipt, token, c.gen_time_of(token, data), url)
        pinned = c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(pki))
        # a signer's own checks fail whether a root is pinned or not
        leaf_only = "signer" in name and verdict == "invalid"
        failed = "rfc3161" if verdict == "invalid" else None
        cases.append(Expected(f"TSA path: {name}", stamped, pinned, verdict, failed))
        cases.append(
            Expected(
                f"TSA path: {name}, unpinned TSA",
                stamped,
                c.trust_root(TEST_KEY),
                "invalid" if leaf_only else "valid",
                "rfc3161" if leaf_only else None,
            )
        )
    return cases


def carried_cases(work: Path, pki: TestPki) -> list[Expected]:
    """A token signed by a TSA under a root nobody pinned, carrying a certificate that does chain
    to the pinned root (`pki`'s TSA certificate): what chains is not what signed."""
    receipt = build_ledger(work / "carried-ledger", 3)[0]
    data = c.seal_bytes(receipt)
    stranger = TestPki(work / "stranger", name="Stranger")
    with (stranger.dir / "ts.cnf").open("a") as config:
        config.write(f"certs = {pki.tsa_cert}\n")
    with OpenSslTsa(stranger) as tsa:
        token = c.der_token(c.tsa_token(tsa, data))
        stamped = c.with_token(receipt, token, c.gen_time_of(token, data), tsa.url)
    pinned = c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(pki))
    name = "a token from an unpinned TSA carrying a certificate of the pinned root"
    return [Expected(name, stamped, pinned, "invalid", "rfc3161")]


def sealed_at(directory: Path, when: str, size: int = 3) -> list[dict[str, Any]]:
    """Receipts of a ledger whose seal says it was made at `when` (the signer's clock)."""
    with mock.patch("ledger.seal.utc_now_seconds", return_value=when):
        return build_ledger(directory, size)


def sealed_ahead(directory: Path, size: int = 3) -> list[dict[str, Any]]:
    """Receipts of a ledger sealed with the clock AHEAD: any token asked for now predates it."""
    later = (datetime.now(UTC) + AHEAD).strftime("%Y-%m-%dT%H:%M:%SZ")
    return sealed_at(directory, later, size)


def early_token_cases(work: Path, pki: TestPki) -> list[Expected]:
    """Genuine tokens whose genTime is before the seal's `sealed_at`, under every pin; and the
    receipt of observation 2: such a token from a TSA issued by an end-entity certificate."""
    receipt = sealed_ahead(work / "ahead-ledger")[0]
    data = c.seal_bytes(receipt)
    forged_path = h.chained_pki(work / "observation2", "Observation2", intermediates=[h.END_ENTITY])
    cases = []
    for label, issuer in (("the corpus TSA", pki), ("an end-entity issuer", forged_path)):
        with OpenSslTsa(issuer) as tsa:
            token = c.der_token(c.tsa_token(tsa, data))
            url = tsa.url
        early = c.with_token(receipt, token, c.gen_time_of(token, data), url)
        assert early["rfc3161_timestamps"][0]["gen_time"] < receipt["seal"]["sealed_at"]
        for pin_name, pin in (
            ("its root", c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(issuer))),
            ("no TSA root", c.trust_root(TEST_KEY)),
            ("nothing", None),
        ):
            name = f"a token before sealed_at from {label}, pinned to {pin_name}"
            cases.append(Expected(name, early, pin, "invalid", "rfc3161"))
    # a seal whose (signed) sealed_at is no time to hold a genTime against: nothing to compare
    for number, when in enumerate(
        ("2026-06-18T04:43:37", "\uff12\uff10\uff12\uff16-06-18T04:43:37Z")
    ):
        odd = sealed_at(work / f"odd-ledger{number}", when)[0]
        data = c.seal_bytes(odd)
        with OpenSslTsa(pki) as tsa:
            token = c.der_token(c.tsa_token(tsa, data))
            stamped = c.with_token(odd, token, c.gen_time_of(token, data), tsa.url)
        name = f"a token on a seal whose sealed_at is {when!r}"  # refused before the stamps
        cases.append(Expected(name, stamped, c.trust_root(TEST_KEY), "invalid", "receipt_shape"))
    return cases


def calendar_cases(work: Path) -> list[Expected]:
    """Proofs pending at a calendar the receipt does not say it was submitted to (`ots_url`)."""
    receipt = build_ledger(work / "calendar-ledger", 3)[2]
    digest = c.seal_digest_of(receipt)
    site = c.trust_root(TEST_KEY)
    cases = []
    for name, calendars, ots_url, verdict in (
        ("pending at another calendar than ots_url", [EVIL_CALENDAR], c.CALENDAR, "invalid"),
        ("pending at ots_url", [c.CALENDAR], c.CALENDAR, "valid"),
        (
            "pending at two calendars, ots_url one",
            [c.CALENDAR, SECOND_CALENDAR],
            c.CALENDAR,
            "valid",
        ),
        ("pending, ots_url empty", [c.CALENDAR], "", "invalid"),
    ):
        stamped = _pending_at(receipt, digest, calendars, ots_url)
        cases.append(
            Expected(
                f"OTS: {name}",
                stamped,
                site,
                verdict,
                "opentimestamps" if verdict == "invalid" else None,
            )
        )
    return cases


def _pending_at(
    receipt: dict[str, Any], digest: bytes, calendars: list[str], ots_url: str
) -> dict[str, Any]:
    stamp = Timestamp(digest)
    for number, calendar in enumerate(calendars):
        commitment = stamp.ops.add(OpAppend(bytes([number + 1]) * 16)).ops.add(OpSHA256())
        commitment.attestations.add(PendingAttestation(calendar))
    proof = ots.detached(stamp)
    out = c.with_proof(receipt, proof)
    out["bitcoin_anchor"]["ots_url"] = ots_url
    assert out["bitcoin_anchor"]["calendar_attestations"] == sorted(calendars)
    out["bitcoin_anchor"]["ots_proof_base64"] = base64.b64encode(proof).decode()
    return out
