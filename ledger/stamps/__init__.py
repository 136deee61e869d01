"""Trusted time on seals: RFC 3161 timestamp tokens and OpenTimestamps proofs (docs/stamps.md).

What is stamped, by both kinds, is a seal's signed bytes (`stamped_bytes`): the canonical JSON of
the seal minus `signature` and `sig_algorithm`, so a stamp binds the root, the leaf count, the key
and the seal time together. The modules, in the order data flows through them:

- `rfc3161` builds a request and accepts a TSA's reply; `tst` checks a token (pure, offline);
- `ots` reads and writes OpenTimestamps proofs (the `opentimestamps` library's format);
- `stamper` runs `crovia stamp` over an injected HTTP transport; `store` keeps what it got in
  `<ledger dir>/stamps/`;
- `anchor` puts the stamps of a receipt's seal into the receipt; `check` verifies them there.

Wire formats are parsed by their libraries (rfc3161-client, pyasn1-modules, opentimestamps); this
package decides what is acceptable and says why. Nothing here speaks HTTP.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ledger.seal import seal_signed_bytes


def stamped_bytes(seal: Mapping[str, Any]) -> bytes:
    """The bytes every stamp of `seal` covers: the seal's signed bytes."""
    return seal_signed_bytes(dict(seal))


def seal_digest(seal: Mapping[str, Any]) -> bytes:
    """sha256 of `stamped_bytes(seal)`: the RFC 3161 imprint, the OpenTimestamps file digest, and
    the name of the seal's record in `stamps/seals/`.
    """
    return hashlib.sha256(stamped_bytes(seal)).digest()
