"""A hostile token costs memory in proportion to its size (found by tests/fuzz/fuzz_tsa.py).

The input is a real `openssl ts` token (tests/fuzz/corpus) whose TSA certificate's notAfter was
mutated into an invalid UTCTime: pyasn1 decodes it, but its encoder, asked to hold the token to
DER, put the whole SignedData's repr into its error at every level: 3 MB for 942 bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.exceptions import Rfc3161Invalid
from ledger.stamps.tst import check_token
from tests.fuzz.keys import TSA_DATA
from tests.memory import traced_peak

FINDING = (
    Path(__file__).resolve().parents[2] / "fuzz" / "findings" / "tsa" / "bad-certificate-time.der"
)


def test_a_certificate_with_a_bad_time_is_refused_cheaply() -> None:
    token = FINDING.read_bytes()
    with pytest.raises(Rfc3161Invalid, match=r"not DER CMS.*Validity::not_after") as refused:
        check_token(token, b"data")
    assert len(str(refused.value)) < 1000
    measured = traced_peak(check_token, token, b"data", expected=(Rfc3161Invalid,))
    assert measured.error == f"Rfc3161Invalid: {refused.value}"
    assert measured.peak < 20 * len(token) + (512 << 10), measured.peak


def test_a_certificate_with_a_malformed_name_is_refused() -> None:
    """A real token whose TSA certificate's issuer the fuzzer turned into a BitString attribute
    of another type: cryptography refuses it with TypeError when the issuer is first read, which
    escaped `check_token` and stopped `crovia verify` with a traceback."""
    token = FINDING.with_name("certificate-name-bitstring.der").read_bytes()
    with pytest.raises(Rfc3161Invalid, match="embedded certificate does not parse"):
        check_token(token, TSA_DATA)  # the data the token's imprint names
