"""RFC 3161 at stamp time: a request over a seal, and the check of a TSA's reply before keeping it.

rfc3161-client builds the request (SHA-256 imprint, a fresh random nonce, certReq set) and parses
the reply; `ledger.stamps.tst.check_token` then checks the token it carries as a verifier would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import rfc3161_client
from cryptography import x509

from ledger.exceptions import Rfc3161Invalid
from ledger.stamps.plain_words import not_der
from ledger.stamps.tst import TokenFacts, check_token

QUERY_TYPE = "application/timestamp-query"
REPLY_TYPE = "application/timestamp-reply"


@dataclass(frozen=True)
class Request:
    """A DER TimeStampReq and the nonce its reply must echo."""

    der: bytes
    nonce: int


def new_request(data: bytes) -> Request:
    """A request for a token over sha256(`data`), with a fresh nonce and certReq set."""
    request = (
        rfc3161_client.TimestampRequestBuilder()
        .data(data)
        .hash_algorithm(rfc3161_client.HashAlgorithm.SHA256)
        .nonce(nonce=True)
        .cert_request(cert_request=True)
        .build()
    )
    return Request(der=request.as_bytes(), nonce=request.nonce)


def accept_reply(
    reply: bytes, request: Request, data: bytes, roots: Sequence[x509.Certificate] = ()
) -> tuple[bytes, TokenFacts]:
    """The DER TimeStampToken of `reply` and its facts, if the reply is granted, echoes the
    request's nonce, and its token passes `check_token` over `data` (chained to `roots` when
    given). Raises Rfc3161Invalid naming the first thing that is wrong.
    """
    try:
        response = rfc3161_client.decode_timestamp_response(reply)
    except ValueError as exc:
        raise Rfc3161Invalid(
            "the reply is not a DER TimeStampResp",
            computed=f"{len(reply)} bytes, {hashlib.sha256(reply).hexdigest()[:16]}:"
            f" {not_der(exc)}",
        ) from None
    try:
        status = rfc3161_client.PKIStatus(response.status)
    except ValueError:
        raise Rfc3161Invalid(
            "the TSA answered a status RFC 3161 does not define",
            expected="GRANTED",
            computed=response.status,
        ) from None
    if status is not rfc3161_client.PKIStatus.GRANTED:
        raise Rfc3161Invalid(
            "the TSA did not grant the request",
            expected="GRANTED",
            computed=f"{status.name} {list(response.status_string)}",
        )
    token = response.time_stamp_token()
    facts = check_token(token, data, roots)
    if facts.nonce != request.nonce:
        raise Rfc3161Invalid(
            "the reply does not echo the request's nonce (a replayed or misrouted reply)",
            expected=request.nonce,
            computed=facts.nonce,
        )
    return token, facts
