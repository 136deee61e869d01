"""`crovia verify` reads past exactly one final newline ("\\n" or "\\r\\n") after a receipt saved
to a file and refuses anything more. Both verifiers' verdicts on every such case are held by the
differential corpus (tests/web/corpus_newline.py, in tests/web/test_differential.py)."""

from __future__ import annotations

import pytest

from crovia_spider.cli import main
from tests.web.corpus_newline import hostile_cases

pytestmark = pytest.mark.slow


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
