"""Keys: key files, signing, signature checks and the rotation chain.

Holds the Ed25519 key files and their 0600 rule (`keys`), the batch signer of envelopes and seals
(`signer`), the signature checks every verifier shares (`signatures`), and the signed hand-over
from one key to the next (`rotation`, `keychain`). May import the format root (`ledger.canonical`,
`ledger.envelope`, `ledger.seal`, ...) and nothing else of `ledger/`. Exports what the CLI,
pipelines, bench and tests use.
"""

from __future__ import annotations

from ledger.keys.keychain import verify_chain
from ledger.keys.keyfile import (
    generate_signing_key,
    key_id,
    load_signing_key,
    parse_pin,
    public_key_hex,
)
from ledger.keys.rotation import (
    ROTATION_DOMAIN,
    build_rotation,
    check_rotation,
    rotation_signed_bytes,
)
from ledger.keys.signatures import check_envelope_signature
from ledger.keys.signer import PARALLEL_MIN, BatchSigner, sign_range
from ledger.keys.trust import (
    Trust,
    TrustRoot,
    TrustRootInvalid,
    decide_trust,
    known_chain,
    parse_rotations,
    parse_trust_root,
    trust_root_fields,
)

__all__ = [
    "PARALLEL_MIN",
    "ROTATION_DOMAIN",
    "BatchSigner",
    "Trust",
    "TrustRoot",
    "TrustRootInvalid",
    "build_rotation",
    "check_envelope_signature",
    "check_rotation",
    "decide_trust",
    "generate_signing_key",
    "key_id",
    "known_chain",
    "load_signing_key",
    "parse_pin",
    "parse_rotations",
    "parse_trust_root",
    "public_key_hex",
    "rotation_signed_bytes",
    "sign_range",
    "trust_root_fields",
    "verify_chain",
]
