"""Fuzz harness: a TSA's RFC 3161 reply (ledger/stamps/rfc3161.py) and the token in it (tst.py).

The bytes are accepted as a reply to a request over fixed data (`accept_reply`: DER TimeStampResp,
status, then `check_token`: DER CMS, imprint, one signer, ESS binding, signature, EKU) and, on
their own, checked as a token (`check_token`), as `crovia verify` checks one in a receipt.
Documented error: Rfc3161Invalid.
"""

from __future__ import annotations

import contextlib
import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from ledger.exceptions import Rfc3161Invalid
    from ledger.stamps.rfc3161 import Request, accept_reply
    from ledger.stamps.tst import check_token
    from tests.fuzz.keys import TSA_DATA as DATA

DOCUMENTED = (Rfc3161Invalid,)
SLACK = 512 << 10  # pyasn1 instantiates the CMS and TSP schemas per decode: ~230 KiB
REQUEST = Request(der=b"", nonce=1)


def target(data: bytes) -> None:
    with contextlib.suppress(Rfc3161Invalid):
        accept_reply(data, REQUEST, DATA)
    check_token(data, DATA)


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
