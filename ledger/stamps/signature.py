"""The CMS SignerInfo of a timestamp token: which certificate it names, and its signature.

Supported signature algorithms are those TSAs use: RSA PKCS#1 v1.5, ECDSA and Ed25519. Anything
else is refused by name rather than passed over.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from pyasn1.codec.der import encoder
from pyasn1.type.univ import ObjectIdentifier
from pyasn1_modules import rfc5652

from ledger.exceptions import Rfc3161Invalid

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


def verify_signer(info: rfc5652.SignerInfo, cert: x509.Certificate, signed: bytes) -> None:
    """The SignerInfo's signature over `signed` verifies under `cert`'s key; else Rfc3161Invalid."""
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
        raise Rfc3161Invalid(f"the TSA certificate's key does not load: {exc}") from None
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
