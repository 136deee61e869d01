"""What a library refused, in words a reader of `crovia verify` can act on.

rfc3161-client reports OpenSSL's refusals as the Rust debug form of an error stack
(`ErrorStack([Error { code: 276824181, library: "PKCS7 routines", ... }])`), its ASN.1 parser's
as `ParseError { kind: ..., location: [...] }`, and pyasn1 puts the repr of whole schema objects
into its messages. None of that is for a reader: these functions keep the one phrase that says
what failed (OpenSSL's verify error, the parser's kind and field) and put it in a sentence.
"""

from __future__ import annotations

import re

# OpenSSL's X509 verify errors (X509_verify_cert_error_string) for a TSA's certificate path,
# checked with the timestampsign purpose at the token's genTime, as what is wrong with the path.
_NO_ROOT = "no pinned TSA root issued it, nor a certificate the token carries that one issued"
_CHAIN_WORDS = {
    "unable to get local issuer certificate": _NO_ROOT,
    "unable to get issuer certificate": _NO_ROOT,
    "self-signed certificate in certificate chain": _NO_ROOT,
    "self signed certificate in certificate chain": _NO_ROOT,
    "self-signed certificate": "it is self-signed and is not a pinned TSA root",
    "self signed certificate": "it is self-signed and is not a pinned TSA root",
    "invalid CA certificate": "a certificate between it and the root is not a CA"
    " (basicConstraints CA:TRUE, with keyCertSign when keyUsage is present)",
    "path length constraint exceeded": "the path to the root is longer than a pathLenConstraint"
    " on it allows",
    "certificate has expired": "a certificate of the path had expired at the token's genTime",
    "certificate is not yet valid": "a certificate of the path was not yet valid at the token's"
    " genTime",
    "unsupported certificate purpose": "a certificate of the path is not for time stamping (its"
    " extendedKeyUsage or keyUsage)",
    "certificate signature failure": "a signature on a certificate of the path does not verify",
    "unable to decode issuer public key": "the public key of an issuer on the path cannot be read",
    "invalid or inconsistent certificate extension": "a certificate of the path has an invalid"
    " or inconsistent extension",
    "unhandled critical extension": "a certificate of the path marks critical an extension"
    " OpenSSL does not handle (RFC 5280: a critical extension not understood refuses it)",
}
CHAIN_REFUSED = "the TSA certificate does not chain to a pinned root"
_PKCS7_WORDS = {
    "signature failure": "the token's CMS signature does not verify under its TSA certificate",
    "digest failure": "the token's signed messageDigest is not the digest of its TSTInfo",
    "signer certificate not found": "the token does not carry the certificate that signed it",
    "no signatures on data": "the token holds no signature",
}
_VERIFY_ERROR = re.compile(r'Verify error: ?([A-Za-z0-9 ,()./:-]{1,100})"')
_REASON = re.compile(r'reason: "([A-Za-z0-9 ,()./-]{1,100})"')
_PARSE_KIND = re.compile(r"kind: ([A-Za-z]+)")
_PARSE_FIELD = re.compile(r'"([A-Za-z]+::[A-Za-z_]+)"')
_ASN1_KINDS = {
    "ShortData": "it ends in the middle of a value",
    "InvalidLength": "a length is not a DER length",
    "InvalidValue": "a value is not valid for its type",
    "UnexpectedTag": "a value is not of the type expected there",
    "ExtraData": "bytes follow a value that should end there",
    "IntegerOverflow": "an integer is too large",
    "InvalidSetOrdering": "a SET OF is not in DER order",
    "EncodedDefault": "a DEFAULT value is encoded (DER leaves it out)",
    "UnknownDefinedBy": "a value names a type not known there",
}
_SCHEMA = re.compile(r"not in asn1Spec: <([A-Za-z0-9]+) ")
_READABLE = re.compile(r"[A-Za-z0-9 ,.:;()'=/_-]{1,160}")


def chain_refusal(error: Exception) -> tuple[str, str | None]:
    """(what failed, in words; OpenSSL's own phrase or None) for rfc3161-client's refusal of a
    token's certificate path or CMS signature."""
    text = str(error)
    verify = _VERIFY_ERROR.search(text)
    if verify:
        phrase = verify.group(1).strip()
        return f"{CHAIN_REFUSED}: {_CHAIN_WORDS.get(phrase, f'OpenSSL says: {phrase}')}", phrase
    reason = _REASON.search(text)
    if reason:
        phrase = reason.group(1).strip()
        words = _PKCS7_WORDS.get(phrase, f"OpenSSL refused the token: {phrase}")
        return words, phrase
    return f"{CHAIN_REFUSED}: rfc3161-client says: {readable(error)}", None


def not_der(error: Exception) -> str:
    """Why a token's bytes are not DER CMS, from rfc3161-client's or pyasn1's refusal."""
    text = str(error)
    kind = _PARSE_KIND.search(text)
    if "ParseError" in text and kind:
        fields = _PARSE_FIELD.findall(text)
        where = f", at {' > '.join(fields)}" if fields else ""
        return _ASN1_KINDS.get(kind.group(1), "its ASN.1 does not parse") + where
    schema = _SCHEMA.search(text)
    if schema:
        named = "" if schema.group(1) == "TagMap" else f" ({schema.group(1)})"
        return f"a value is not of the type expected there{named}"
    return readable(error)


def readable(error: Exception) -> str:
    """The exception's message if it is a short line of plain text; else its class's name."""
    text = str(error).strip()
    if _READABLE.fullmatch(text):
        return text
    return type(error).__name__
