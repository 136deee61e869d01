"""Issue 33, observation 5: `crovia verify` and the page read past exactly one final newline
("\\n" or "\\r\\n") after a receipt and refuse anything more, with the same verdict and check
(tests/web/corpus_newline.py); the CLI does so on a saved file too."""

from __future__ import annotations

import pytest

from crovia_spider.cli import main
from tests.web import corpus as c
from tests.web.corpus_newline import hostile_cases
from tests.web.test_differential import Case, cli_outcome, page_outcomes, pki  # noqa: F401

pytestmark = pytest.mark.slow


def test_final_newlines_get_the_expected_verdict_in_both_verifiers(tmp_path, pki):  # noqa: F811
    expected = hostile_cases(tmp_path, pki)
    cases = [Case(e.name, c.receipt_bytes(e.receipt), e.pin, e.headers) for e in expected]
    page = page_outcomes(cases)
    for want, case, got in zip(expected, cases, page, strict=True):
        assert cli_outcome(case) == (want.verdict, want.check), want.name
        assert tuple(got[:2]) == (want.verdict, want.check), (want.name, got)


@pytest.mark.parametrize(("tail", "code"), [(b"\n", 0), (b"\r\n", 0), (b"\n\n", 1), (b" ", 1)])
def test_crovia_verify_of_a_saved_file(tmp_path, tail, code, capsys) -> None:
    seed = next(e.receipt for e in hostile_cases(tmp_path, None) if e.name == "seed + one final LF")
    path = tmp_path / "receipt.json"
    path.write_bytes(seed[:-1] + tail)
    assert main(["verify", str(path), "--any-key"]) == code
    captured = capsys.readouterr()
    if code:
        assert "check canonical_bytes failed" in captured.err and "trailing byte" in captured.err
    else:
        assert captured.out.startswith("OK (--any-key)")
