"""Issue 42, observation 6: a TSA certificate path in which a certificate marks critical an
extension OpenSSL does not handle (RFC 5280 4.2: "must understand") is refused by `crovia verify`
(OpenSSL, through rfc3161-client) and by the page alike, at `rfc3161`; the same extension not
critical, and critical extensions OpenSSL handles, stay valid. The TSA's own certificate is
refused pinned or not (as its extendedKeyUsage and keyUsage are); an intermediate's or a root's
only where the path is checked, under a pinned root. The cases are corpus_tsa.py's, which the
whole differential corpus runs too; this file runs them alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crovia_spider.demo_tsa import OPENSSL
from tests.web import corpus as c
from tests.web.corpus_tsa import tsa_path_cases
from tests.web.test_differential import Case, cli_outcome, page_outcomes

pytestmark = pytest.mark.slow


def test_critical_extensions_on_a_tsa_path_get_the_same_verdict(tmp_path: Path) -> None:
    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    wanted = tsa_path_cases(tmp_path, only="critical")
    assert len(wanted) == 18, [e.name for e in wanted]
    cases = [Case(e.name, c.receipt_bytes(e.receipt), e.pin, e.headers) for e in wanted]
    page = page_outcomes(cases)
    wrong = []
    for case, want, got in zip(cases, wanted, page, strict=True):
        cli = cli_outcome(case)
        if not (want.verdict, want.check) == cli == tuple(got[:2]):
            wrong.append((case.name, (want.verdict, want.check), cli, got))
    assert not wrong, wrong
    refused = [got[2] for want, got in zip(wanted, page, strict=True) if want.verdict == "invalid"]
    assert all("critical" in message for message in refused), refused
    assert {e.verdict for e in wanted} == {"valid", "invalid"}
