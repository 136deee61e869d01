"""Keys: key files, signing, signature checks and the rotation chain.

Holds the Ed25519 key files (typed: PKCS#8 PEM, mode 0600; `keyfile`), the batch signer of
envelopes and seals (`signer`), the signature checks every verifier shares (`signatures`), and the
signed hand-over from one key to the next (`rotation`, `keychain`). May import the format root
(`ledger.canonical`, `ledger.envelope`, `ledger.seal`, ...) and nothing else of `ledger/`.
Exports what the CLI, pipelines, bench and tests use.
"""

from __future__ import annotations

from ledger import exports_on_first_use

# Each name this package exports and the module that defines it, imported on first use (as
# the `ledger` package does for its short API): a
# receipt check (`crovia verify`) needs the trust and signature modules, not the batch signer's
# thread pool and logging (issue 19: verify starts fast).
_EXPORTS = {
    "verify_chain": "keychain",
    "Converted": "keyfile",
    "KeyContext": "key_content",
    "convert_key_file": "keyfile",
    "generate_signing_key": "keyfile",
    "key_id": "keyfile",
    "load_signing_key": "keyfile",
    "parse_pin": "keyfile",
    "public_key_hex": "keyfile",
    "ROTATION_DOMAIN": "rotation",
    "build_rotation": "rotation",
    "check_rotation": "rotation",
    "rotation_signed_bytes": "rotation",
    "check_envelope_signature": "signatures",
    "PARALLEL_MIN": "signer",
    "BatchSigner": "signer",
    "sign_range": "signer",
    "Trust": "trust",
    "TrustRoot": "trust",
    "TrustRootInvalid": "trust",
    "decide_trust": "trust",
    "known_chain": "trust",
    "parse_rotations": "trust",
    "parse_trust_root": "trust",
    "trust_root_fields": "trust",
}

__getattr__ = exports_on_first_use(__name__, _EXPORTS)

__all__ = sorted(_EXPORTS)
