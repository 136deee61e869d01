"""Issue 30, observations 2 and 9, on the command line: `crovia verify` refuses a token older than
the seal it stamps, a TSA certificate whose keyUsage is not a TSA's, a TSA path through a
certificate that is no CA or that marks critical an extension OpenSSL does not handle (issue 42,
observation 6), and a proof pending only at calendars the receipt was not submitted
to; `crovia stamp` keeps no token older than its seal and no calendar answer that names another
calendar in a pending attestation (each is recorded in attempts.jsonl, as any bad answer is).

Real servers on 127.0.0.1 only: OpenSSL's `openssl ts -reply` (crovia_spider/demo_tsa.py,
tests/web/hostile_pki.py) and the loopback calendar (tests/ledger/stamps/calendar_server.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from opentimestamps.core.notary import PendingAttestation
from opentimestamps.core.op import OpAppend, OpSHA256
from opentimestamps.core.serialize import BytesDeserializationContext, BytesSerializationContext
from opentimestamps.core.timestamp import Timestamp

from crovia_spider.demo_tsa import OpenSslTsa, TestPki
from ledger.keys import generate_signing_key
from ledger.stamps import ots
from ledger.store import Ledger
from tests.ledger.stamps.calendar_server import LoopbackCalendar
from tests.ledger.stamps.conftest import crovia
from tests.vectors.make_vectors import TEST_KEY, build_ledger, sample_envelope
from tests.web import corpus as c
from tests.web import hostile_pki as h
from tests.web.corpus_tsa import EVIL_CALENDAR, sealed_ahead

AHEAD = "2099-01-01T00:00:00Z"  # a signer's clock far ahead: every token predates the seal


def verify(tmp_path: Path, receipt: dict[str, Any], trust: dict[str, Any]) -> dict[str, Any]:
    """`crovia verify RECEIPT --trust-root TRUST --json`: its exit code and its JSON."""
    (tmp_path / "receipt.json").write_bytes(c.receipt_bytes(receipt))
    (tmp_path / "trust_root.json").write_text(json.dumps(trust))
    done = crovia(tmp_path, "verify", str(tmp_path / "receipt.json"), "--trust-root",
                  str(tmp_path / "trust_root.json"), "--json")  # fmt: skip
    return {"code": done.returncode, **json.loads(done.stdout)}


def stamped(receipt: dict[str, Any], pki: TestPki) -> dict[str, Any]:
    data = c.seal_bytes(receipt)
    with OpenSslTsa(pki) as tsa:
        token = c.der_token(c.tsa_token(tsa, data))
        return c.with_token(receipt, token, c.gen_time_of(token, data), tsa.url)


def failed_check(result: dict[str, Any]) -> tuple[int, str, str]:
    return result["code"], result["verdict"], result.get("check", "")


def test_verify_refuses_a_genuine_token_older_than_its_seal(tmp_path: Path, pki: TestPki) -> None:
    receipt = stamped(sealed_ahead(tmp_path / "ahead")[0], pki)
    for trust in (c.trust_root(TEST_KEY), c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(pki))):
        result = verify(tmp_path, receipt, trust)
        assert failed_check(result) == (1, "invalid", "rfc3161"), result
        assert "cannot predate what it stamps" in json.dumps(result)


def test_verify_refuses_observation_2_a_tsa_issued_by_an_end_entity(
    tmp_path: Path, pki: TestPki
) -> None:
    forged = h.chained_pki(tmp_path / "forged", "Observation2", intermediates=[h.END_ENTITY])
    on_time = stamped(build_ledger(tmp_path / "ledger", 2)[0], forged)
    pinned = c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(forged))
    result = verify(tmp_path, on_time, pinned)
    assert failed_check(result) == (1, "invalid", "rfc3161"), result
    assert "does not chain to a pinned root" in json.dumps(result)
    assert verify(tmp_path, on_time, c.trust_root(TEST_KEY))["verdict"] == "valid"  # not pinned


def test_verify_refuses_a_tsa_certificate_whose_key_usage_is_not_a_tsas(tmp_path: Path) -> None:
    """Without a pinned root too: OpenSSL checks keyUsage only when it chains, our check always."""
    signer = h.chained_pki(
        tmp_path / "ku", "KeyCertSign", tsa=h.TSA.replace("digitalSignature", "keyCertSign")
    )
    receipt = stamped(build_ledger(tmp_path / "ledger", 2)[0], signer)
    result = verify(tmp_path, receipt, c.trust_root(TEST_KEY))
    assert failed_check(result) == (1, "invalid", "rfc3161"), result
    assert "keyUsage is not digitalSignature and/or nonRepudiation only" in json.dumps(result)


def test_verify_refuses_an_unknown_critical_extension_on_a_tsa_path(tmp_path: Path) -> None:
    """Issue 42, observation 6: on the TSA's certificate, pinned or not (as its keyUsage); on an
    intermediate, where the path is checked (pinned), OpenSSL refuses it and says so in words."""
    signer = h.chained_pki(tmp_path / "leaf", "CriticalLeaf", tsa=h.TSA + h.UNKNOWN_CRITICAL)
    receipt = stamped(build_ledger(tmp_path / "ledger", 2)[0], signer)
    for roots in ([], c.tsa_roots_pem(signer)):
        result = verify(tmp_path, receipt, c.trust_root(TEST_KEY, tsa_roots=roots))
        assert failed_check(result) == (1, "invalid", "rfc3161"), result
        assert "marks critical an extension OpenSSL does not handle" in result["message"]
        assert result["computed"] == ["1.3.6.1.4.1.99999.1"], result
    issuer = h.chained_pki(
        tmp_path / "int", "CriticalCA", intermediates=[h.CA + h.UNKNOWN_CRITICAL]
    )
    receipt = stamped(build_ledger(tmp_path / "ledger2", 2)[0], issuer)
    result = verify(tmp_path, receipt, c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(issuer)))
    assert failed_check(result) == (1, "invalid", "rfc3161"), result
    assert "marks critical an extension OpenSSL does not handle" in result["message"], result
    assert verify(tmp_path, receipt, c.trust_root(TEST_KEY))["verdict"] == "valid"  # not pinned


def test_verify_refuses_a_proof_pending_only_at_another_calendar(tmp_path: Path) -> None:
    receipt = build_ledger(tmp_path / "ledger", 2)[0]
    stamp = Timestamp(c.seal_digest_of(receipt))
    commitment = stamp.ops.add(OpAppend(b"\x01" * 16)).ops.add(OpSHA256())
    commitment.attestations.add(PendingAttestation(EVIL_CALENDAR))
    anchored = c.with_proof(receipt, ots.detached(stamp))  # ots_url: c.CALENDAR
    assert anchored["bitcoin_anchor"]["calendar_attestations"] == [EVIL_CALENDAR]
    result = verify(tmp_path, anchored, c.trust_root(TEST_KEY))
    assert failed_check(result) == (1, "invalid", "opentimestamps"), result
    assert "not pending at the calendar the receipt was submitted to" in json.dumps(result)


@pytest.fixture
def ahead(tmp_path: Path) -> Path:
    """A ledger of one seal made with the signer's clock at AHEAD, its key where `crovia` looks."""
    key = generate_signing_key(tmp_path / "keys" / "signing.key")
    clock = mock.patch("ledger.seal.utc_now_seconds", return_value=AHEAD)
    with clock, Ledger.open(tmp_path / "ledger", signing_key=key) as ledger:
        ledger.issue([sample_envelope(0)])
        ledger.seal()
    return tmp_path


def attempts(base: Path) -> list[dict[str, Any]]:
    path = base / "ledger" / "stamps" / "attempts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def stored(base: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in (base / "ledger/stamps/seals").glob("*.json")]


def test_stamp_keeps_no_token_older_than_its_seal(ahead: Path, pki: TestPki) -> None:
    with OpenSslTsa(pki) as tsa:
        proc = crovia(ahead, "stamp", CROVIA_TSA_URLS=tsa.url)
    assert proc.returncode == 0, proc.stderr
    assert "0 RFC 3161 tokens kept" in proc.stdout, proc.stdout
    assert not any(record["rfc3161"] for record in stored(ahead))
    (attempt,) = attempts(ahead)
    assert attempt["kind"] == "rfc3161" and "cannot predate" in attempt["error"]


def _serialize(stamp: Timestamp) -> bytes:
    ctx = BytesSerializationContext()
    stamp.serialize(ctx)
    return ctx.getbytes()


class ElsewhereCalendar(LoopbackCalendar):
    """A calendar whose answers keep a pending attestation of another calendar: at `submit`, a
    reply pending only there; at `upgrade`, an upgrade that reaches Bitcoin but also promises that
    other calendar (its submit reply then is honest)."""

    def __init__(self, lies_at: str) -> None:
        super().__init__()
        self.lies_at = lies_at

    def submit(self, digest: bytes) -> bytes:
        if self.lies_at != "submit":
            return super().submit(digest)
        self.submitted.append(digest)
        stamp = Timestamp(digest)
        commitment = stamp.ops.add(OpAppend(b"\x02" * 16)).ops.add(OpSHA256())
        commitment.attestations.add(PendingAttestation(EVIL_CALENDAR))
        return _serialize(stamp)

    def upgraded(self, commitment: bytes) -> bytes | None:
        honest = super().upgraded(commitment)
        if honest is None or self.lies_at != "upgrade":
            return honest
        stamp = Timestamp.deserialize(BytesDeserializationContext(honest), commitment)
        stamp.ops.add(OpAppend(b"\x03")).attestations.add(PendingAttestation(EVIL_CALENDAR))
        return _serialize(stamp)


@pytest.fixture
def on_time(tmp_path: Path) -> Path:
    key = generate_signing_key(tmp_path / "keys" / "signing.key")
    with Ledger.open(tmp_path / "ledger", signing_key=key) as ledger:
        ledger.issue([sample_envelope(0)])
        ledger.seal()
    return tmp_path


def test_stamp_refuses_a_calendar_answer_naming_another_calendar(on_time: Path) -> None:
    with ElsewhereCalendar("submit") as cal:
        proc = crovia(on_time, "stamp", CROVIA_OTS_CALENDARS=cal.url)
        assert cal.submitted, proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "0 OpenTimestamps submissions kept" in proc.stdout, proc.stdout
    assert not any("ots" in record for record in stored(on_time))
    (attempt,) = attempts(on_time)
    assert attempt["kind"] == "ots_submit" and EVIL_CALENDAR in attempt["error"]
    assert cal.url in attempt["error"]  # what was expected: the calendar asked


def test_stamp_refuses_an_upgrade_naming_another_calendar(on_time: Path) -> None:
    with ElsewhereCalendar("upgrade") as cal:
        assert crovia(on_time, "stamp", CROVIA_OTS_CALENDARS=cal.url).returncode == 0
        (before,) = stored(on_time)
        cal.mine()
        proc = crovia(on_time, "stamp", "--upgrade", CROVIA_OTS_CALENDARS=cal.url)
    assert proc.returncode == 0, proc.stderr
    assert "0 proofs upgraded to Bitcoin" in proc.stdout, proc.stdout
    (after,) = stored(on_time)
    assert after == before  # the pending proof is kept as it was
    (attempt,) = attempts(on_time)
    assert attempt["kind"] == "ots_upgrade" and EVIL_CALENDAR in attempt["error"]
