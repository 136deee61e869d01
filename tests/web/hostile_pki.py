"""TSA certificate paths that no verifier may trust, made with the openssl CLI: a root, a chain of
intermediates with chosen extensions, and a TSA certificate issued by the last of them. The
tokens still come from OpenSSL's own `openssl ts -reply` (crovia_spider/demo_tsa.py's TestPki and
OpenSslTsa), which signs whatever its configuration names: the intermediates travel in the token
(`certs =`), as a TSA that sends its chain sends them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyasn1.codec.der import decoder, encoder
from pyasn1_modules import rfc3161, rfc5652

from crovia_spider.demo_tsa import TestPki, openssl

ROOT = "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, cRLSign\n"
CA = "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, cRLSign\n"
TSA = (
    "basicConstraints = critical, CA:FALSE\n"
    "keyUsage = critical, digitalSignature\n"
    "extendedKeyUsage = critical, timeStamping\n"
)
# What observation 2 of issue 30 used as an issuer: a web server's certificate.
END_ENTITY = (
    "basicConstraints = critical, CA:FALSE\n"
    "keyUsage = critical, digitalSignature, keyEncipherment\n"
    "extendedKeyUsage = serverAuth\n"
)
CA_WITHOUT_CERT_SIGN = "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, cRLSign\n"
# An extension under a private arc no verifier knows, marked critical: "must understand".
UNKNOWN_CRITICAL = "1.3.6.1.4.1.99999.1 = critical, ASN1:UTF8String:must understand\n"
# Critical extensions OpenSSL handles (X509_supported_extension), on a TSA and on a CA.
HANDLED_CRITICAL = (
    "certificatePolicies = critical, 1.3.6.1.4.1.99999.2\n"
    "subjectAltName = critical, DNS:tsa.example\n"
)
HANDLED_CRITICAL_CA = (
    "policyConstraints = critical, requireExplicitPolicy:3\n"
    "nameConstraints = critical, permitted;DNS:example\n"
)
_EC = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")


def chained_pki(
    directory: Path,
    name: str,
    *,
    root: str = ROOT,
    intermediates: Sequence[str] = (CA,),
    tsa: str = TSA,
) -> TestPki:
    """A TestPki whose root has the extensions `root`, and whose TSA certificate (extensions
    `tsa`) is issued through one intermediate per entry of `intermediates` (each entry its
    extensions), the token carrying every intermediate. A TSA certificate `openssl ts` refuses to
    sign with (its keyUsage or extendedKeyUsage is not a TSA's) signs through ResignedPki."""
    pki = (TestPki if tsa == TSA else ResignedPki)(directory, name=name)
    if root != ROOT:
        (directory / "root.ext").write_text(root)
        openssl("req", "-new", "-x509", "-key", "ca.key", "-out", "ca.pem", "-days", "3",
                "-subj", f"/CN={name} Root CA", "-extensions", "v3", "-config",
                _req_config(directory, root), cwd=directory)  # fmt: skip
    issuer = "ca"
    for number, extensions in enumerate(intermediates):
        issuer = _issue(
            directory, f"int{number}", f"{name} Intermediate {number}", issuer, extensions
        )
    (directory / "tsa.ext").write_text(tsa)
    openssl("x509", "-req", "-in", "tsa.csr", "-CA", f"{issuer}.pem", "-CAkey", f"{issuer}.key",
            "-CAcreateserial", "-out", "tsa.pem", "-days", "2", "-extfile", "tsa.ext",
            cwd=directory)  # fmt: skip
    if intermediates:
        chain = "".join((directory / f"int{n}.pem").read_text() for n in range(len(intermediates)))
        (directory / "chain.pem").write_text(chain)
        with (directory / "ts.cnf").open("a") as config:
            config.write(f"certs = {directory}/chain.pem\n")
    return pki


def _issue(directory: Path, stem: str, subject: str, issuer: str, extensions: str) -> str:
    openssl("req", "-new", *_EC, "-keyout", f"{stem}.key", "-out", f"{stem}.csr",
            "-subj", f"/CN={subject}", cwd=directory)  # fmt: skip
    (directory / f"{stem}.ext").write_text(extensions)
    openssl("x509", "-req", "-in", f"{stem}.csr", "-CA", f"{issuer}.pem", "-CAkey",
            f"{issuer}.key", "-CAcreateserial", "-out", f"{stem}.pem", "-days", "2",
            "-extfile", f"{stem}.ext", cwd=directory)  # fmt: skip
    return stem


def _req_config(directory: Path, extensions: str) -> str:
    path = directory / "root.cnf"
    path.write_text(f"[req]\ndistinguished_name = dn\n[dn]\n[v3]\n{extensions}")
    return str(path)


class ResignedPki(TestPki):
    """A TSA whose certificate `openssl ts -reply` will not sign with: `openssl ts -reply` makes
    the TSTInfo (with a helper TSA certificate under the same root), and `openssl cms -sign
    -cades` signs it again with the hostile certificate (ESS signingCertificateV2 included)."""

    def __init__(self, directory: Path, name: str = "Test") -> None:
        super().__init__(directory, name=name)
        openssl("x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", "helper.pem", "-days", "2", "-extfile", "tsa.ext",
                cwd=directory)  # fmt: skip
        config = (directory / "ts.cnf").read_text().replace("/tsa.pem", "/helper.pem")
        (directory / "helper.cnf").write_text(config)

    def reply(self, query: bytes) -> bytes:
        (self.dir / "query.tsq").write_bytes(query)
        openssl("ts", "-reply", "-queryfile", "query.tsq", "-config", "helper.cnf",
                "-out", "helper.tsr", cwd=self.dir)  # fmt: skip
        response, _ = decoder.decode(
            (self.dir / "helper.tsr").read_bytes(), asn1Spec=rfc3161.TimeStampResp()
        )
        signed, _ = decoder.decode(
            response["timeStampToken"]["content"], asn1Spec=rfc5652.SignedData()
        )
        (self.dir / "tst.der").write_bytes(bytes(signed["encapContentInfo"]["eContent"]))
        chain = ("-certfile", "chain.pem") if (self.dir / "chain.pem").exists() else ()
        openssl("cms", "-sign", "-binary", "-nodetach", "-in", "tst.der", "-econtent_type",
                str(rfc3161.id_ct_TSTInfo), "-signer", "tsa.pem", "-inkey", "tsa.key", *chain,
                "-md", "sha256", "-cades", "-nosmimecap", "-outform", "DER", "-out", "token.der",
                cwd=self.dir)  # fmt: skip
        token, _ = decoder.decode(
            (self.dir / "token.der").read_bytes(), asn1Spec=rfc5652.ContentInfo()
        )
        response["timeStampToken"] = token
        return encoder.encode(response)
