"""Differential testing: the page's verification core (its own scripts, run by Node) and
`crovia verify`'s own function (ledger.receipt.verify_receipt_bytes) over one corpus give the
same verdict and name the same first failing check, case for case.

The corpus: the reference receipt and ours, every systematic mutation of them
(tests/vectors/make_vectors.py), genuine and forged RFC 3161 tokens (a real OpenSSL TSA on
127.0.0.1) and every third byte of a token flipped, pending and confirmed OpenTimestamps proofs
with every byte of a proof changed, with and without block headers, receipts on both sides of a
key rotation, forged rotations and a fork, another site's key, each with and without pins.
"""

from __future__ import annotations

import base64
import copy
import importlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from crovia_spider.demo_tsa import OPENSSL, OpenSslTsa, TestPki
from tests.crawl import PROJECT_ROOT
from tests.vectors.make_vectors import (
    TEST_KEY,
    _changed,
    _get,
    _scalars,
    _set,
    build_ledger,
    mutations,
    seed_receipt,
)
from tests.web import corpus as c
from tests.web.test_agreement import rotation_changes

pytestmark = pytest.mark.slow

NODE = Path(os.environ.get("CROVIA_NODE", shutil.which("node") or "/usr/bin/node"))
RUNNER = PROJECT_ROOT / "tests" / "web" / "core_runner.js"


@dataclass
class Case:
    name: str
    data: bytes
    pin: dict[str, Any] | None = None
    headers: tuple[bytes, ...] = ()


def cli_outcome(case: Case) -> tuple[str, str | None]:
    """(verdict, first failing check) from `crovia verify`'s own function (docs/format.md, "One
    verdict"), the trust root read as `crovia verify --trust-root` reads it."""
    from ledger.keys import parse_trust_root
    from ledger.receipt import receipt_verdict

    pin = {}
    if case.pin is not None:
        pin["trust_root"] = parse_trust_root(json.dumps(case.pin).encode())
    return receipt_verdict(case.data, bitcoin_headers=list(case.headers), **pin)


def page_outcomes(cases: list[Case]) -> list[tuple[str, str | None, str | None]]:
    """(verdict, first failing check, its message) from the page's core under Node."""
    payload = [
        {
            "data": base64.b64encode(case.data).decode(),
            "pin": case.pin,
            "headers": [h.hex() for h in case.headers],
        }
        for case in cases
    ]
    assert NODE.exists(), (
        f"Node is not installed at {NODE}: apt-get install -y nodejs (make test does)"
    )
    done = subprocess.run(
        [str(NODE), str(RUNNER)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [tuple(row) for row in json.loads(done.stdout)]


def stamp_changes(receipt: dict[str, Any], section: str) -> list[tuple[str, dict[str, Any]]]:
    """`receipt` with each scalar of its stamp `section` changed (same JSON type, hex kept hex),
    each key removed, one key added, and the section's type changed."""
    out = []
    for path, value in _scalars(receipt[section], (section,)):
        changed = copy.deepcopy(receipt)
        _set(changed, path, _changed(value))
        out.append((f"change {path}", changed))
        removed = copy.deepcopy(receipt)
        del _get(removed, path[:-1])[path[-1]]
        out.append((f"remove {path}", removed))
    for extra in ({"x": 1}, "x", [], None):
        changed = copy.deepcopy(receipt)
        holder = changed[section][0] if isinstance(changed[section], list) else changed[section]
        holder["extra"] = extra
        out.append((f"add extra {extra!r}", changed))
        replaced = copy.deepcopy(receipt)
        replaced[section] = extra
        out.append((f"replace {section} by {extra!r}", replaced))
    return out


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPki:
    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    return TestPki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def forger(tmp_path_factory: pytest.TempPathFactory) -> TestPki:
    """A TSA that names itself after a well-known one, under a root nobody pinned."""
    return TestPki(tmp_path_factory.mktemp("forger"), name="DigiCert Timestamp 2001")


def build_corpus(work: Path, pki: TestPki, forger: TestPki) -> list[Case]:
    ours = build_ledger(work / "vectors", 13)
    seed = seed_receipt()
    site = c.trust_root(TEST_KEY)
    site_tsa = c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(pki))
    other_site = c.trust_root(c.OTHER_KEY)
    seed_site = c.trust_root(seed["seal"]["public_key_hex"])
    cases: list[Case] = []

    def add(name: str, receipt: Any, pin=None, headers=()) -> None:
        cases.append(Case(name, c.receipt_bytes(receipt), pin, tuple(headers)))

    # the plain receipts under every pin, and every systematic mutation of them
    bases = {"seed": seed, "ours 0": ours[0], "ours 6": ours[6], "ours 12": ours[12]}
    for name, base in bases.items():
        for pin_name, pin in (
            ("none", None),
            ("site", site),
            ("other site", other_site),
            ("seed's key", seed_site),
        ):
            add(f"{name} pinned to {pin_name}", base, pin)
        for mutation in mutations(base):
            add(f"{name}: {mutation.name}", mutation.receipt, site if "ours" in name else None)

    # RFC 3161: genuine, forged, over other data, every third byte flipped
    data = c.seal_bytes(ours[0])
    with OpenSslTsa(pki) as tsa, OpenSslTsa(forger) as fake:
        token = c.tsa_token(tsa, data)
        forged = c.tsa_token(fake, data)
        elsewhere = c.tsa_token(tsa, b"another seal")
        url = tsa.url
    stamped = c.with_token(ours[0], token, c.gen_time_of(token, data), url)
    for pin_name, pin in (("none", None), ("site", site), ("site+tsa", site_tsa)):
        add(f"genuine token, pin {pin_name}", stamped, pin)
        add(
            f"forged token, pin {pin_name}",
            c.with_token(ours[0], forged, "2001-09-09T01:46:40Z", url),
            pin,
        )
        add(
            f"forged token, true gen_time, pin {pin_name}",
            c.with_token(ours[0], forged, c.gen_time_of(forged, data), url),
            pin,
        )
        add(
            f"token over other data, pin {pin_name}",
            c.with_token(ours[0], elsewhere, "x", url),
            pin,
        )
    add(
        "genuine token under another TSA root",
        stamped,
        c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(forger)),
    )
    other_url = copy.deepcopy(stamped)
    other_url["rfc3161_timestamps"][0]["tsa_url"] = "https://tsa.example/well-known"
    add("genuine token, another tsa_url (unsigned)", other_url, site_tsa)
    for position in range(0, len(token), 3):
        changed = bytearray(token)
        changed[position] ^= 0x01
        add(
            f"token byte {position} flipped",
            c.with_token(
                ours[0], bytes(changed), stamped["rfc3161_timestamps"][0]["gen_time"], url
            ),
            site_tsa,
        )
    for name, mutated in stamp_changes(stamped, "rfc3161_timestamps"):
        add(f"stamped: {name}", mutated, site_tsa)

    # TSAs of other kinds: RSA, ESS v1 (SHA-1), the CA certificate carried in the token
    for number, options in enumerate(
        ({"rsa": True}, {"ess": "sha1"}, {"chain": True}, {"rsa": True, "chain": True})
    ):
        variant = c.variant_pki(work / f"variant{number}", **options)
        with OpenSslTsa(variant) as tsa:
            token = c.tsa_token(tsa, data)
        genuine = c.with_token(ours[0], token, c.gen_time_of(token, data), tsa.url)
        trusted = c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(variant))
        sorted_token = c.der_token(token)
        der = c.with_token(ours[0], sorted_token, c.gen_time_of(sorted_token, data), tsa.url)
        for pin in (None, site_tsa, trusted):
            add(f"variant {options} token", genuine, pin)
            add(f"variant {options} token in DER", der, pin)
        # (a carried CA certificate is not flipped: rfc3161-client may or may not read its
        # issuer name, depending on the order of the SET; see docs/verifier.md)
        for position in range(number, len(token), 5) if "chain" not in options else ():
            changed = bytearray(token)
            changed[position] ^= 0x04
            gen_time = genuine["rfc3161_timestamps"][0]["gen_time"]
            flipped = c.with_token(ours[0], bytes(changed), gen_time, tsa.url)
            add(f"variant {options} token byte {position} flipped", flipped, trusted)

    # OpenTimestamps: pending, confirmed, forged claims, every byte of a proof changed, headers
    digest = c.seal_digest_of(ours[6])
    pending_proof, _ = c.ots_proof(digest, confirmed=False)
    confirmed_proof, header = c.ots_proof(digest, confirmed=True)
    pending = c.with_proof(ours[6], pending_proof)
    confirmed = c.with_proof(ours[6], confirmed_proof)
    add("pending proof", pending, site)
    add("confirmed proof", confirmed, site)
    add("confirmed proof, its header", confirmed, site, [header])
    add("confirmed proof, another header", confirmed, site, [c.other_header(header)])
    add("pending proof, a header", pending, site, [header])
    add("no proof, a header", ours[6], site, [header])
    add(
        "proof of another seal",
        c.with_proof(ours[6], c.ots_proof(b"\x00" * 32, confirmed=False)[0]),
        site,
    )
    claimed = copy.deepcopy(pending)
    claimed["bitcoin_anchor"]["status"] = "confirmed"
    add("pending proof claimed confirmed", claimed, site)
    invented = copy.deepcopy(pending)
    invented["bitcoin_anchor"]["bitcoin_attestations"] = [
        {"block_height": 840000, "merkle_root": "ab" * 32}
    ]
    add("pending proof with an invented attestation", invented, site)
    bare = copy.deepcopy(ours[6])
    bare["bitcoin_anchor"].update(
        status="confirmed",
        bitcoin_attestations=[{"block_height": 840000, "merkle_root": "ab" * 32}],
    )
    add("a confirmed anchor with no proof", bare, site)
    for proof, base in ((pending_proof, pending), (confirmed_proof, confirmed)):
        for position in range(len(proof)):
            for flip in (0x01, 0x80):
                changed = bytearray(proof)
                changed[position] ^= flip
                mutated = copy.deepcopy(base)
                mutated["bitcoin_anchor"]["ots_proof_base64"] = base64.b64encode(changed).decode()
                add(
                    f"proof byte {position} ^ {flip}",
                    mutated,
                    site,
                    [header] if base is confirmed else [],
                )
        for cut in (1, 7, len(proof) // 2):
            mutated = copy.deepcopy(base)
            mutated["bitcoin_anchor"]["ots_proof_base64"] = base64.b64encode(proof[:-cut]).decode()
            add(f"proof cut by {cut}", mutated, site)
    for name, mutated in stamp_changes(confirmed, "bitcoin_anchor"):
        add(f"confirmed: {name}", mutated, site, [header])
    for name, proof in c.bounded_proofs(digest):  # every one attests what `pending` claims
        mutated = copy.deepcopy(pending)
        mutated["bitcoin_anchor"]["ots_proof_base64"] = base64.b64encode(proof).decode()
        add(f"proof: {name}", mutated, site)

    # key rotations: both sides, forged rotations, a fork, pins before and after
    rotated = c.rotated_ledger(work / "rotated")
    new_site = c.trust_root(c.NEW_KEY, [rotated.record])
    pins = {
        "none": None,
        "site now (with its chain)": new_site,
        "site before the rotation": site,
        "new key, no chain": c.trust_root(c.NEW_KEY),
        "the thief's fork": c.trust_root(c.THIEF_KEY, [rotated.fork]),
        "only the incoming key signed": c.trust_root(
            c.NEW_KEY, [c.signed_record(rotated.record, c.NEW_KEY, old_signer=c.NEW_KEY)]
        ),
        "a key outside the chain signed": c.trust_root(
            c.NEW_KEY, [c.signed_record(rotated.record, c.NEW_KEY, old_signer=c.OTHER_KEY)]
        ),
        "chain not ending at the pin": c.trust_root(TEST_KEY, [rotated.record]),
        "the same record twice": c.trust_root(c.NEW_KEY, [rotated.record, rotated.record]),
    }
    for side, receipts in (("before", rotated.before), ("after", rotated.after)):
        for number, receipt in enumerate(receipts):
            for pin_name, pin in pins.items():
                add(f"{side} {number}, pin {pin_name}", receipt, pin)
    for changed in rotation_changes(rotated.after[0]):
        for pin in (None, new_site):
            add("after 0 with a changed record", changed, pin)
    forked = copy.deepcopy(rotated.after[0])
    forked["key_rotations"] = [rotated.fork]
    add("a receipt carrying the thief's record", forked, new_site)
    return cases


# The modules of hostile cases, each with its expected verdicts (a module missing here is a
# corpus that silently stopped being loaded).
HOSTILE_MODULES = {
    "corpus_browser",
    "corpus_capture",
    "corpus_coverage",
    "corpus_duplicate_last",
    "corpus_eras",
    "corpus_fetch",
    "corpus_integers",
    "corpus_newline",
    "corpus_relay",
    "corpus_seal_kind",
    "corpus_tsa",
}


def hostile_corpus(work: Path, pki: TestPki) -> list[tuple[Case, c.Expected]]:
    """The cases of every `tests/web/corpus_*.py` module, each with its expected verdict."""
    out = []
    for path in sorted((PROJECT_ROOT / "tests" / "web").glob("corpus_*.py")):
        module = importlib.import_module(f"tests.web.{path.stem}")
        for want in module.hostile_cases(work / path.stem, pki):
            data = c.receipt_bytes(want.receipt)
            out.append((Case(f"{path.stem}: {want.name}", data, want.pin, want.headers), want))
    return out


def test_page_core_and_crovia_verify_agree_on_every_case(
    tmp_path: Path, pki: TestPki, forger: TestPki
) -> None:
    hostile = hostile_corpus(tmp_path / "hostile", pki)
    cases = build_corpus(tmp_path, pki, forger) + [case for case, _want in hostile]
    assert len(cases) >= 2000, len(cases)
    expected = [cli_outcome(case) for case in cases]
    got = page_outcomes(cases)
    disagreements = [
        (case.name, want, have)
        for case, want, have in zip(cases, expected, got, strict=True)
        if want != tuple(have[:2])
    ]
    assert not disagreements, (len(disagreements), disagreements[:15])
    by_name = dict(zip((case.name for case in cases), expected, strict=True))
    unexpected = [
        (case.name, (want.verdict, want.check), by_name[case.name])
        for case, want in hostile
        if by_name[case.name] != (want.verdict, want.check)
    ]
    assert not unexpected, unexpected
    # each hostile module holds refusals and, beside them, controls that must stay valid
    by_module: dict[str, set[str]] = {}
    for case, want in hostile:
        by_module.setdefault(case.name.split(":")[0], set()).add(want.verdict)
    assert set(by_module) >= HOSTILE_MODULES, sorted(by_module)
    assert all({"valid", "invalid"} <= verdicts for verdicts in by_module.values()), by_module
    assert len(hostile) >= 80, len(hostile)
    print(f"corpus: {len(cases)} cases, {len(hostile)} hostile, 0 disagreements")
    verdicts = {want[0] for want in expected}
    assert verdicts == {"valid", "unpinned", "invalid"}
    failed = {want[1] for want in expected}
    assert {"rfc3161", "opentimestamps", "key_rotation", "pinned_key", "bitcoin_anchor"} <= failed
