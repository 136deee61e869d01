"""The CMS SignerInfo of a timestamp token: the certificate it names, its signed attributes
(contentType, messageDigest, ESS signingCertificate), and its signature over them.

Supported signature algorithms are those TSAs use: RSA PKCS#1 v1.5, ECDSA and Ed25519. Anything
else is refused by name rather than passed over.
"""

from __future__ import annotations

import hashlib

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from pyasn1.codec.der import decoder, encoder
from pyasn1.type.univ import ObjectIdentifier
from pyasn1_modules import rfc2634, rfc3161, rfc5035, rfc5652

from ledger.exceptions import Rfc3161Invalid
from ledger.stamps.plain_words import readable

_HASHES = {
    "1.3.14.3.2.26": "sha1",
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
}
# signature algorithm -> the hash it names (None: the SignerInfo's digestAlgorithm decides)
_SIGNATURES = {
    "1.2.840.113549.1.1.1": None,  # rsaEncryption
    "1.2.840.113549.1.1.11": "sha256",
    "1.2.840.113549.1.1.12": "sha384",
    "1.2.840.113549.1.1.13": "sha512",
    "1.2.840.10045.4.3.2": "sha256",
    "1.2.840.10045.4.3.3": "sha384",
    "1.2.840.10045.4.3.4": "sha512",
    "1.3.101.112": None,  # Ed25519
}


def hash_name(oid: ObjectIdentifier) -> str:
    """hashlib's name of a digest algorithm OID; Rfc3161Invalid for one we do not accept."""
    name = _HASHES.get(str(oid))
    if name is None:
        raise Rfc3161Invalid(
            "unsupported digest algorithm", expected=sorted(_HASHES), computed=str(oid)
        )
    return name


def names_certificate(sid: rfc5652.SignerIdentifier, cert: x509.Certificate) -> bool:
    """True when the SignerIdentifier names `cert` (by serial and issuer, or by key identifier)."""
    if sid.getName() == "issuerAndSerialNumber":
        ias = sid["issuerAndSerialNumber"]
        issuer = encoder.encode(ias["issuer"])
        return (
            int(ias["serialNumber"]) == cert.serial_number and issuer == cert.issuer.public_bytes()
        )
    try:
        ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    except x509.ExtensionNotFound:
        return False
    return bytes(sid["subjectKeyIdentifier"]) == ski


def verify_signer(info: rfc5652.SignerInfo, cert: x509.Certificate) -> None:
    """The SignerInfo's signature over its signed attributes verifies under `cert`'s key; else
    Rfc3161Invalid.
    """
    signed = encoder.encode(_attrs_as_set(info))
    algorithm = str(info["signatureAlgorithm"]["algorithm"])
    if algorithm not in _SIGNATURES:
        raise Rfc3161Invalid(
            "unsupported signature algorithm", expected=sorted(_SIGNATURES), computed=algorithm
        )
    name = _SIGNATURES[algorithm] or hash_name(info["digestAlgorithm"]["algorithm"])
    digest = getattr(hashes, name.upper())()
    try:
        key = cert.public_key()
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise Rfc3161Invalid(f"the TSA certificate's key does not load: {readable(exc)}") from None
    signature = bytes(info["signature"])
    try:
        if isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, signed, padding.PKCS1v15(), digest)
        elif isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, signed, ec.ECDSA(digest))
        elif isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, signed)
        else:
            raise Rfc3161Invalid("unsupported TSA key type", computed=type(key).__name__)
    except InvalidSignature:
        raise Rfc3161Invalid(
            "the CMS signature does not verify under the TSA certificate",
            expected=cert.subject.rfc4514_string(),
        ) from None


def check_signed_attrs(info: rfc5652.SignerInfo, tst_der: bytes, cert_der: bytes) -> None:
    """The signed contentType is id-ct-TSTInfo, messageDigest is the TSTInfo's digest, and ESS
    binds the certificate `cert_der`; else Rfc3161Invalid.
    """
    attrs = {str(a["attrType"]): a["attrValues"] for a in info["signedAttrs"]}
    content_type = attrs.get(str(rfc5652.id_contentType))
    if content_type is None or decoder.decode(content_type[0])[0] != rfc3161.id_ct_TSTInfo:
        raise Rfc3161Invalid("signed contentType is not id-ct-TSTInfo")
    digest = attrs.get(str(rfc5652.id_messageDigest))
    algorithm = hash_name(info["digestAlgorithm"]["algorithm"])
    computed = hashlib.new(algorithm, tst_der).hexdigest()
    claimed = bytes(decoder.decode(digest[0])[0]).hex() if digest is not None else None
    if claimed != computed:
        raise Rfc3161Invalid(
            "signed messageDigest of the TSTInfo", expected=claimed, computed=computed
        )
    _check_ess(attrs, cert_der)


def _check_ess(attrs: dict, cert_der: bytes) -> None:
    """ESS signingCertificateV2 (any hash, default SHA-256) or signingCertificate (SHA-1) names
    the signer's certificate: a token cannot be re-signed under another certificate of the key.
    """
    if str(rfc5035.id_aa_signingCertificateV2) in attrs:
        value = attrs[str(rfc5035.id_aa_signingCertificateV2)][0]
        ess, _ = decoder.decode(value, asn1Spec=rfc5035.SigningCertificateV2())
        first = ess["certs"][0]
        oid = first["hashAlgorithm"]["algorithm"]
        algorithm = hash_name(oid) if oid.isValue else "sha256"
    elif str(rfc2634.id_aa_signingCertificate) in attrs:
        value = attrs[str(rfc2634.id_aa_signingCertificate)][0]
        ess, _ = decoder.decode(value, asn1Spec=rfc2634.SigningCertificate())
        first, algorithm = ess["certs"][0], "sha1"
    else:
        raise Rfc3161Invalid("no ESS signingCertificate(V2) attribute binds the TSA certificate")
    computed = hashlib.new(algorithm, cert_der).hexdigest()
    claimed = bytes(first["certHash"]).hex()
    if claimed != computed:
        raise Rfc3161Invalid(
            "ESS certHash names another certificate", expected=claimed, computed=computed
        )


def _attrs_as_set(info: rfc5652.SignerInfo) -> rfc5652.SignedAttributes:
    """The signed attributes re-tagged as the SET OF that the signature covers (RFC 5652 5.4)."""
    attrs = rfc5652.SignedAttributes()
    attrs.extend(info["signedAttrs"])
    return attrs
