"""Checking an RFC 3161 TimeStampToken offline: imprint, CMS signature, ESS binding, EKU, chain.

The token (DER ContentInfo) is parsed with pyasn1-modules' CMS and TSP structures; signatures are
checked with `cryptography`; the chain to pinned roots is checked by rfc3161-client (OpenSSL's
PKCS7_verify at the token's genTime, purpose timestampsign: every issuer a CA by basicConstraints
with keyCertSign when keyUsage is present, pathLenConstraint held, no critical extension it does
not handle on any certificate of the path). Every refusal raises
Rfc3161Invalid naming what differed. A token must also be no older than the seal it stamps
(`check_not_before_seal`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import rfc3161_client
from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from pyasn1.codec.der import decoder, encoder
from pyasn1.error import PyAsn1Error
from pyasn1_modules import rfc3161, rfc5652

from ledger.exceptions import Rfc3161Invalid
from ledger.stamps import signature as sig
from ledger.stamps.plain_words import chain_refusal, not_der, readable

ID_CT_TSTINFO = rfc3161.id_ct_TSTInfo
ID_SIGNED_DATA = rfc5652.id_signedData
SHA256_OID = "2.16.840.1.101.3.4.2.1"
# The extensions OpenSSL's verifier handles (crypto/x509/v3_purp.c, X509_supported_extension):
# a certificate marking any other one critical is refused (RFC 5280 4.2: a critical extension
# the verifier does not recognise refuses the certificate), by OpenSSL for every certificate of a
# path it checks, and here for the TSA's own certificate, pinned or not. The page holds the
# same list (crovia_spider/web/verifier/verify-stamps.js HANDLED_EXTENSIONS).
HANDLED_EXTENSIONS = frozenset(
    {
        "2.16.840.1.113730.1.1",  # Netscape certificate type
        "2.5.29.15",  # keyUsage
        "2.5.29.17",  # subjectAltName
        "2.5.29.19",  # basicConstraints
        "2.5.29.30",  # nameConstraints
        "2.5.29.31",  # cRLDistributionPoints
        "2.5.29.32",  # certificatePolicies
        "2.5.29.33",  # policyMappings
        "2.5.29.36",  # policyConstraints
        "2.5.29.37",  # extendedKeyUsage
        "2.5.29.54",  # inhibitAnyPolicy
        "1.3.6.1.5.5.7.1.7",  # RFC 3779 IP address blocks
        "1.3.6.1.5.5.7.1.8",  # RFC 3779 AS identifiers
        "1.3.6.1.5.5.7.1.14",  # proxyCertInfo
        "1.3.6.1.5.5.7.48.1.5",  # OCSP noCheck
    }
)


@dataclass(frozen=True)
class TokenFacts:
    """A token that passed: its genTime (ISO 8601, Z), the TSA certificate's subject, whether it
    chains to a pinned root, its nonce (None when the token has none), and its genTime as a time.
    """

    gen_time: str
    tsa_subject: str
    pinned: bool
    nonce: int | None
    gen_at: datetime


def check_token(token: bytes, data: bytes, roots: Sequence[x509.Certificate] = ()) -> TokenFacts:
    """Check that `token` timestamps sha256(`data`), signed by the certificate it carries (with a
    critical timeStamping EKU, bound by ESS signingCertificate(V2)); with `roots`, that this
    certificate chains to one of them. Returns TokenFacts; raises Rfc3161Invalid.
    """
    try:
        return _check_token(token, data, roots)
    except (PyAsn1Error, ValueError) as exc:  # the libraries' word for bytes that are not DER
        raise Rfc3161Invalid(f"the token is not well-formed: {type(exc).__name__}") from None
    except TypeError as exc:
        # cryptography reads a certificate's fields when they are first asked for, and refuses a
        # malformed Name there with TypeError ("oid must be X500_UNIQUE_IDENTIFIER for BitString")
        raise Rfc3161Invalid(f"an embedded certificate does not parse: {readable(exc)}") from None


def _check_token(token: bytes, data: bytes, roots: Sequence[x509.Certificate]) -> TokenFacts:
    signed, tst_der, tst = _parse(token)
    _check_imprint(tst, data)
    info = _only_signer(signed)
    _check_unsigned_fields(signed, info)
    cert_der, cert = _signer_cert(signed, info)
    sig.check_signed_attrs(info, tst_der, cert_der)
    sig.verify_signer(info, cert)
    _check_eku(cert)
    _check_key_usage(cert)
    _check_critical(cert)
    if roots:
        _check_chain(token, data, roots)
    nonce = tst["nonce"]
    gen_at = tst["genTime"].asDateTime.astimezone(UTC)
    return TokenFacts(
        gen_time=_iso(gen_at),
        tsa_subject=cert.subject.rfc4514_string(),
        pinned=bool(roots),
        nonce=int(nonce) if nonce.isValue else None,
        gen_at=gen_at,
    )


# A seal's `sealed_at`: ASCII digits only (Python's digit class would take other scripts' digits).
_SEALED_AT = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z", re.ASCII
)


def check_not_before_seal(facts: TokenFacts, sealed_at: object) -> None:
    """A stamp cannot predate what it stamps: refuse a token whose genTime is before the seal's
    `sealed_at` (whole seconds, so a genTime in its second is not before it). Raises
    Rfc3161Invalid, also when `sealed_at` is no UTC time to hold the genTime against.
    """
    match = _SEALED_AT.fullmatch(sealed_at) if isinstance(sealed_at, str) else None
    try:
        sealed = datetime(*map(int, match.groups()), tzinfo=UTC) if match else None
    except ValueError:
        sealed = None
    if sealed is None:
        raise Rfc3161Invalid(
            "the seal's sealed_at is not a UTC time to hold the token's genTime against",
            expected="YYYY-MM-DDTHH:MM:SSZ",
            computed=sealed_at,
        )
    if facts.gen_at < sealed:
        raise Rfc3161Invalid(
            "the token's genTime is before the seal's sealed_at (a stamp cannot predate what it"
            " stamps)",
            expected=f">= {sealed_at}",
            computed=facts.gen_time,
        )


def _parse(token: bytes) -> tuple[rfc5652.SignedData, bytes, rfc3161.TSTInfo]:
    _strict_first(token)
    try:
        info, rest = decoder.decode(token, asn1Spec=rfc5652.ContentInfo())
        if rest or info["contentType"] != ID_SIGNED_DATA:
            raise Rfc3161Invalid("the token is not one CMS SignedData", computed=len(rest))
        signed, _ = decoder.decode(info["content"], asn1Spec=rfc5652.SignedData())
        # DER only: every byte is then the encoding of what was checked (certificates included)
        if encoder.encode(info) != token or encoder.encode(signed) != bytes(info["content"]):
            raise Rfc3161Invalid("the token is not DER (re-encoding it changes its bytes)")
        encap = signed["encapContentInfo"]
        if encap["eContentType"] != ID_CT_TSTINFO:
            raise Rfc3161Invalid(
                "the token's content is not a TSTInfo",
                expected=str(ID_CT_TSTINFO),
                computed=str(encap["eContentType"]),
            )
        tst_der = bytes(encap["eContent"])
        tst, rest = decoder.decode(tst_der, asn1Spec=rfc3161.TSTInfo())
    except PyAsn1Error as exc:
        raise Rfc3161Invalid(f"the token is not DER CMS: {not_der(exc)}") from None
    if rest:
        raise Rfc3161Invalid("bytes after the TSTInfo", computed=len(rest))
    return signed, tst_der, tst


def _strict_first(token: bytes) -> None:
    """rfc3161-client's parser (strict DER, the certificates read as X.509) reads the token first,
    and its refusals are a line long. pyasn1's encoder, which holds the token to DER below, puts the
    whole structure's repr into its error at every level: a token with one bad certificate time
    cost 3 MB for 942 bytes (found by tests/fuzz/fuzz_tsa.py).
    """
    try:
        rfc3161_client.decode_timestamp_response(_granted(token))
    except ValueError as exc:
        raise Rfc3161Invalid(f"the token is not DER CMS: {not_der(exc)}") from None


def _granted(token: bytes) -> bytes:
    """The DER TimeStampResp granting `token`: SEQUENCE { SEQUENCE { INTEGER 0 }, token }."""
    body = b"\x30\x03\x02\x01\x00" + token
    return b"\x30" + _der_length(len(body)) + body


def _der_length(length: int) -> bytes:
    if length < 0x80:
        return bytes([length])
    octets = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(octets)]) + octets


def _check_imprint(tst: rfc3161.TSTInfo, data: bytes) -> None:
    imprint = tst["messageImprint"]
    algorithm = str(imprint["hashAlgorithm"]["algorithm"])
    if algorithm != SHA256_OID:
        raise Rfc3161Invalid("imprint algorithm", expected=SHA256_OID, computed=algorithm)
    expected = hashlib.sha256(data).hexdigest()
    computed = bytes(imprint["hashedMessage"]).hex()
    if computed != expected:
        raise Rfc3161Invalid(
            "the token's imprint is not sha256 of the seal's signed bytes",
            expected=expected,
            computed=computed,
        )


def _only_signer(signed: rfc5652.SignedData) -> rfc5652.SignerInfo:
    infos = signed["signerInfos"]
    if len(infos) != 1:
        raise Rfc3161Invalid("a token has exactly one SignerInfo", expected=1, computed=len(infos))
    return infos[0]


def _check_unsigned_fields(signed: rfc5652.SignedData, info: rfc5652.SignerInfo) -> None:
    """What the signature does not cover must still be exactly what RFC 5652 requires: SignedData
    version 3 (content other than id-data), SignerInfo version 1 or 3 by its identifier, and the
    signer's digest algorithm among the SignedData's.
    """
    expected_info = 1 if info["sid"].getName() == "issuerAndSerialNumber" else 3
    versions = (int(signed["version"]), int(info["version"]))
    if versions != (3, expected_info):
        raise Rfc3161Invalid(
            "SignedData and SignerInfo versions", expected=(3, expected_info), computed=versions
        )
    listed = {encoder.encode(algorithm) for algorithm in signed["digestAlgorithms"]}
    if encoder.encode(info["digestAlgorithm"]) not in listed:
        raise Rfc3161Invalid("the signer's digest algorithm is not among the SignedData's")


def _signer_cert(
    signed: rfc5652.SignedData, info: rfc5652.SignerInfo
) -> tuple[bytes, x509.Certificate]:
    """The embedded certificate the SignerInfo names (issuer and serial, or key identifier)."""
    sid = info["sid"]
    for choice in signed["certificates"] if signed["certificates"].isValue else ():
        if choice.getName() != "certificate":
            continue
        der = encoder.encode(choice["certificate"])
        try:
            cert = x509.load_der_x509_certificate(der)
        except x509.InvalidVersion as exc:  # not a ValueError
            raise Rfc3161Invalid(
                f"an embedded certificate does not parse: {readable(exc)}"
            ) from None
        if sig.names_certificate(sid, cert):
            return der, cert
    raise Rfc3161Invalid(
        "the token does not carry the certificate that signed it (certReq was set)",
        computed=sid.getName(),
    )


def _check_eku(cert: x509.Certificate) -> None:
    try:
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    except x509.ExtensionNotFound:
        eku = None
    timestamping = x509.ExtendedKeyUsageOID.TIME_STAMPING
    if eku is None or not eku.critical or list(eku.value) != [timestamping]:
        raise Rfc3161Invalid(
            "the TSA certificate's extendedKeyUsage is not critical timeStamping only (RFC 3161)",
            expected=timestamping.dotted_string,
            computed=None if eku is None else [o.dotted_string for o in eku.value],
        )


def _check_key_usage(cert: x509.Certificate) -> None:
    """A TSA certificate's keyUsage, when present, is digitalSignature and/or nonRepudiation only
    (RFC 5280; OpenSSL's timestampsign purpose, which `_check_chain` applies with a pinned root,
    holds every token to it here, pinned or not)."""
    try:
        usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    except x509.ExtensionNotFound:
        return
    others = {
        "keyEncipherment": usage.key_encipherment,
        "dataEncipherment": usage.data_encipherment,
        "keyAgreement": usage.key_agreement,
        "keyCertSign": usage.key_cert_sign,
        "cRLSign": usage.crl_sign,
    }
    if any(others.values()) or not (usage.digital_signature or usage.content_commitment):
        raise Rfc3161Invalid(
            "the TSA certificate's keyUsage is not digitalSignature and/or nonRepudiation only",
            expected=["digitalSignature", "nonRepudiation"],
            computed=[name for name, on in others.items() if on]
            + ["digitalSignature"] * usage.digital_signature
            + ["nonRepudiation"] * usage.content_commitment,
        )


def _check_critical(cert: x509.Certificate) -> None:
    """No extension of the TSA certificate is critical unless OpenSSL handles it."""
    unhandled = sorted(
        ext.oid.dotted_string
        for ext in cert.extensions
        if ext.critical and ext.oid.dotted_string not in HANDLED_EXTENSIONS
    )
    if unhandled:
        raise Rfc3161Invalid(
            "the TSA certificate marks critical an extension OpenSSL does not handle (RFC 5280:"
            " a critical extension not understood refuses the certificate)",
            expected=sorted(HANDLED_EXTENSIONS),
            computed=unhandled,
        )


def _content_info(token: bytes) -> rfc5652.ContentInfo:
    return decoder.decode(token, asn1Spec=rfc5652.ContentInfo())[0]


def _check_chain(token: bytes, data: bytes, roots: Sequence[x509.Certificate]) -> None:
    """rfc3161-client verifies a TimeStampResp, so the token is wrapped in a granted one."""
    response = rfc3161.TimeStampResp()
    response["status"]["status"] = 0
    response["timeStampToken"] = _content_info(token)
    try:
        parsed = rfc3161_client.decode_timestamp_response(encoder.encode(response))
        verifier = rfc3161_client.VerifierBuilder(roots=list(roots)).build()
        verifier.verify(parsed, hashlib.sha256(data).digest())
    except (rfc3161_client.VerificationError, ValueError, UnsupportedAlgorithm) as exc:
        words, phrase = chain_refusal(exc)  # never OpenSSL's error stack itself
        raise Rfc3161Invalid(
            words,
            expected=[r.subject.rfc4514_string() for r in roots],
            computed=f"OpenSSL: {phrase}" if phrase else None,
        ) from None


def _iso(moment: datetime) -> str:
    text = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{moment.microsecond:06d}".rstrip("0") if moment.microsecond else "") + "Z"
