"""A TSA reply with a status RFC 3161 does not define is refused as a failed check, like any bad
reply, so `crovia stamp` records it and goes on (found by tests/fuzz/fuzz_tsa.py: a ValueError
escaped, which the stamper does not catch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.exceptions import Rfc3161Invalid
from ledger.stamps.rfc3161 import Request, accept_reply

REPLY = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "tsa" / "openssl_reply"
STATUS_AT = 8  # 30 82 LL LL | 30 03 02 01 <status>: a real `openssl ts -reply` answer


@pytest.mark.parametrize("status", [6, 7, 127])
def test_an_undefined_status_is_a_failed_check(status: int) -> None:
    reply = bytearray(REPLY.read_bytes())
    assert reply[STATUS_AT - 4 : STATUS_AT] == b"\x30\x03\x02\x01" and reply[STATUS_AT] == 0
    reply[STATUS_AT] = status
    with pytest.raises(Rfc3161Invalid, match="status") as refused:
        accept_reply(bytes(reply), Request(der=b"", nonce=1), b"data")
    assert refused.value.computed == status
