"""The fixed keys and data the harnesses and their seed corpus share (tests/fuzz/make_corpus.py
signs the seeds with them, so a seed passes the signature checks and the fuzzer starts from valid
input)."""

from __future__ import annotations

import hashlib

import nacl.signing

from ledger.store import default_origin
from ledger.tlog.cosignature import CosignatureSigner, CosignatureVerifier
from ledger.tlog.note import Ed25519Signer, Ed25519Verifier

LOG_KEY = nacl.signing.SigningKey(hashlib.sha256(b"crovia fuzz: the log").digest())
WITNESS_KEY = nacl.signing.SigningKey(hashlib.sha256(b"crovia fuzz: a witness").digest())
ORIGIN = default_origin(bytes(LOG_KEY.verify_key))
WITNESS_NAME = "witness.fuzz.example"

LOG_SIGNER = Ed25519Signer(ORIGIN, LOG_KEY)
LOG_VERIFIER = Ed25519Verifier(ORIGIN, bytes(LOG_KEY.verify_key))
WITNESS_SIGNER = CosignatureSigner(WITNESS_NAME, WITNESS_KEY)
WITNESS_VERIFIER = CosignatureVerifier(WITNESS_NAME, bytes(WITNESS_KEY.verify_key))

TSA_DATA = b"crovia fuzz: a seal's signed bytes"  # what the seed TSA replies timestamp
OTS_DIGEST = hashlib.sha256(b"crovia fuzz: a seal").digest()  # what the seed calendar reply is on
