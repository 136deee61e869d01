// The stamps of a receipt, checked in the browser as `crovia verify` checks them
// (ledger/stamps/check.py, tst.py, signature.py, ots.py): RFC 3161 tokens with PKI.js and asn1js
// (vendor/pkijs.bundle.js), OpenTimestamps proofs by replaying their operations from the seal's
// signed bytes. A stamp that fails raises CheckFailed("rfc3161" | "opentimestamps"); a stamp this
// browser cannot check (no PKI.js, an algorithm WebCrypto lacks) is reported "not checked" and
// adds nothing. Times come only from what was checked, never from unsigned fields (`tsa_url`).
//
// A classic script loaded after verify-core.js; it defines one global, CroviaStamps.
"use strict";

(function (root) {
  const V = root.CroviaVerify;
  const { CheckFailed, JsonInt, canonical, sha256, toHex, sameBytes, plain } = V;

  const OID = {
    signedData: "1.2.840.113549.1.7.2",
    tstInfo: "1.2.840.113549.1.9.16.1.4",
    contentType: "1.2.840.113549.1.9.3",
    messageDigest: "1.2.840.113549.1.9.4",
    signingCertificate: "1.2.840.113549.1.9.16.2.12",
    signingCertificateV2: "1.2.840.113549.1.9.16.2.47",
    sha256: "2.16.840.1.101.3.4.2.1",
    extKeyUsage: "2.5.29.37",
    keyUsage: "2.5.29.15",
    basicConstraints: "2.5.29.19",
    timeStamping: "1.3.6.1.5.5.7.3.8",
  };
  // ledger/stamps/signature.py: the digests and signature algorithms a token may use.
  const HASHES = {
    "1.3.14.3.2.26": "SHA-1",
    "2.16.840.1.101.3.4.2.1": "SHA-256",
    "2.16.840.1.101.3.4.2.2": "SHA-384",
    "2.16.840.1.101.3.4.2.3": "SHA-512",
  };
  const SIGNATURES = [
    "1.2.840.113549.1.1.1", "1.2.840.113549.1.1.11", "1.2.840.113549.1.1.12",
    "1.2.840.113549.1.1.13", "1.2.840.10045.4.3.2", "1.2.840.10045.4.3.3", "1.2.840.10045.4.3.4",
    "1.3.101.112",
  ];
  const ED25519 = "1.3.101.112";
  // The extensions OpenSSL's verifier handles (X509_supported_extension; ledger/stamps/tst.py
  // HANDLED_EXTENSIONS): a certificate marking any other one critical is refused (RFC 5280 4.2),
  // the TSA's own pinned or not, every certificate of the path when it is checked.
  const HANDLED_EXTENSIONS = [
    "2.16.840.1.113730.1.1", "2.5.29.15", "2.5.29.17", "2.5.29.19", "2.5.29.30", "2.5.29.31",
    "2.5.29.32", "2.5.29.33", "2.5.29.36", "2.5.29.37", "2.5.29.54", "1.3.6.1.5.5.7.1.7",
    "1.3.6.1.5.5.7.1.8", "1.3.6.1.5.5.7.1.14", "1.3.6.1.5.5.7.48.1.5",
  ];

  class NotChecked extends Error {}

  const bytesOf = (buffer) => new Uint8Array(buffer);

  // Python's base64.b64decode(text, validate=True).
  function b64(text, check) {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.replace(/=+$/, "").length % 4 === 1 ||
        (text.length % 4 !== 0)) {
      throw new CheckFailed(check, "not standard base64", null, text.slice(0, 40));
    }
    const raw = atob(text);
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }

  function stampedBytes(seal) {
    return V.canonicalBytes(V.without(seal, ["signature", "sig_algorithm"]));
  }

  // -- RFC 3161 ---------------------------------------------------------------------------------

  const tokenFail = (message, expected, computed) => {
    throw new CheckFailed("rfc3161", message, expected, computed);
  };

  function derOf(asn1) {
    return bytesOf(asn1.toBER(false));
  }

  // The TSTInfo is signed, not re-encoded (as ledger/stamps/tst.py): nothing may follow it.
  function parseTstInfo(bytes) {
    const parsed = asn1js.fromBER(bytes);
    if (parsed.offset === -1 || parsed.result.error) tokenFail("the TSTInfo is not DER");
    if (parsed.offset !== bytes.length) tokenFail("bytes after the TSTInfo", null, bytes.length - parsed.offset);
    return parsed.result;
  }

  function parseDer(bytes, what) {
    const parsed = asn1js.fromBER(bytes);
    if (parsed.offset === -1 || parsed.result.error) tokenFail(`${what} is not DER`);
    if (parsed.offset !== bytes.length) tokenFail(`bytes after the ${what}`, null, bytes.length - parsed.offset);
    if (!sameBytes(derOf(parsed.result), bytes)) tokenFail(`${what} is not DER (re-encoding it changes its bytes)`);
    return parsed.result;
  }

  // What re-encoding cannot see: asn1js keeps the order of a SET OF and a constructed string as
  // parsed, where DER (and pyasn1's re-encoding in ledger/stamps/tst.py) sorts the encodings of a
  // SET OF's elements and makes strings primitive. `setOf` marks an IMPLICIT [n] SET OF.
  function checkDerSets(node, setOf) {
    const id = node.idBlock;
    if (!id.isConstructed) return;
    if (id.tagClass === 1 && (id.tagNumber === 3 || id.tagNumber === 4)) tokenFail("the token is not DER (a constructed string)");
    const children = node.valueBlock.value;
    if (setOf || (id.tagClass === 1 && id.tagNumber === 17)) {
      const encodings = children.map(derOf);
      const width = Math.max(0, ...encodings.map((e) => e.length));
      const padded = encodings.map((e) => { const out = new Uint8Array(width); out.set(e); return out; });
      for (let k = 1; k < padded.length; k++) {
        if (compareBytes(padded[k - 1], padded[k]) > 0) tokenFail("the token is not DER (a SET OF out of order)");
      }
    }
    for (const child of children) checkDerSets(child, false);
  }

  // DER's rules for the primitive values asn1js keeps as it read them (X.690 section 11; what
  // pyasn1's re-encoding and `cryptography` refuse in ledger/stamps/tst.py).
  const notDer = (what) => tokenFail(`the token is not DER (${what})`);
  function checkDerValues(node) {
    const id = node.idBlock;
    if (id.isConstructed) {
      for (const child of node.valueBlock.value) checkDerValues(child);
      return;
    }
    if (id.tagClass !== 1) return;
    // the content octets as read (the whole TLV less its identifier and length)
    const v = bytesOf(node.valueBeforeDecodeView).subarray(id.blockLength + node.lenBlock.blockLength);
    const text = () => String.fromCharCode(...v);
    switch (id.tagNumber) {
      case 1:
        if (v.length !== 1 || (v[0] !== 0 && v[0] !== 0xff)) notDer("a BOOLEAN is 0x00 or 0xFF");
        break;
      case 2:
      case 10:
        if (!v.length || (v.length > 1 && ((v[0] === 0 && v[1] < 0x80) || (v[0] === 0xff && v[1] >= 0x80)))) {
          notDer("an INTEGER in fewest bytes");
        }
        break;
      case 3:
        if (!v.length || v[0] > 7 || (v.length === 1 && v[0]) || (v.length > 1 && v[v.length - 1] & ((1 << v[0]) - 1))) {
          notDer("a BIT STRING's unused bits");
        }
        break;
      case 5:
        if (v.length) notDer("a NULL is empty");
        break;
      case 6:
        if (!v.length || (v[v.length - 1] & 0x80) || v.some((b, k) => b === 0x80 && (k === 0 || !(v[k - 1] & 0x80)))) {
          notDer("an OBJECT IDENTIFIER in fewest bytes");
        }
        break;
      case 23:
        if (!/^\d{12}Z$/.test(text()) || !validTime(text(), 2)) notDer("a UTCTime is YYMMDDHHMMSSZ");
        break;
      case 24:
        if (!/^\d{14}(\.\d*[1-9])?Z$/.test(text()) || !validTime(text(), 4)) notDer("a GeneralizedTime is YYYYMMDDHHMMSS[.f]Z");
        break;
      default:
    }
  }

  function validTime(t, yearDigits) {
    const n = (at, len) => Number(t.slice(at, at + len));
    const month = n(yearDigits, 2);
    const day = n(yearDigits + 2, 2);
    return month >= 1 && month <= 12 && day >= 1 && day <= 31 && n(yearDigits + 4, 2) <= 23 &&
      n(yearDigits + 6, 2) <= 59 && n(yearDigits + 8, 2) <= 59;
  }

  // What `cryptography` wants of every certificate a token carries (ledger/stamps/tst.py loads
  // each one): a version of v1 to v3, and a public key whose parameters fit its algorithm.
  function checkCertificate(cert) {
    if (cert.version < 0 || cert.version > 2) tokenFail(`an embedded certificate does not parse: ${cert.version + 1} is not a valid X509 version`);
    const key = cert.subjectPublicKeyInfo.algorithm;
    const params = key.algorithmParams;
    if (key.algorithmId === "1.2.840.10045.2.1" && !(params instanceof asn1js.ObjectIdentifier)) {
      tokenFail("the token is not well-formed: an EC key without a named curve");
    }
    if (key.algorithmId === "1.2.840.113549.1.1.1" && params && !(params instanceof asn1js.Null)) {
      tokenFail("the token is not well-formed: an RSA key's parameters are not NULL");
    }
  }

  // An ECDSA signature is DER too: SEQUENCE { r INTEGER, s INTEGER } and nothing after it.
  function checkEcdsaSignature(signature) {
    const bytes = bytesOf(signature.valueBlock.valueHexView);
    const parsed = asn1js.fromBER(bytes);
    const seq = parsed.result;
    const ok = parsed.offset === bytes.length && seq instanceof asn1js.Sequence &&
      seq.valueBlock.value.length === 2 && seq.valueBlock.value.every((v) => v instanceof asn1js.Integer) &&
      sameBytes(derOf(seq), bytes);
    if (!ok) tokenFail("the CMS signature does not verify under the TSA certificate (not a DER ECDSA signature)");
    checkDerValues(seq);
  }

  function compareBytes(a, b) {
    for (let k = 0; k < Math.min(a.length, b.length); k++) if (a[k] !== b[k]) return a[k] - b[k];
    return a.length - b.length;
  }

  // SignedData's [0] certificates and [1] crls, and each SignerInfo's [0] signed and [1]
  // unsigned attributes, are IMPLICIT SET OF.
  function checkSignedDataDer(signedData) {
    checkDerSets(signedData, false);
    checkDerValues(signedData);
    const fields = signedData.valueBlock.value;
    for (const field of fields) if (field.idBlock.tagClass === 3) checkDerSets(field, true);
    const infos = fields[fields.length - 1];
    for (const info of infos.idBlock.isConstructed ? infos.valueBlock.value : []) {
      if (!info.idBlock.isConstructed) continue;
      for (const field of info.valueBlock.value) if (field.idBlock.tagClass === 3) checkDerSets(field, true);
    }
  }

  function schemaOf(make, what) {
    try {
      return make();
    } catch (err) {
      return tokenFail(`the token is not well-formed: ${what} (${err.message || err})`);
    }
  }

  function attributeValues(info) {
    const out = Object.create(null);
    for (const attr of info.signedAttrs ? info.signedAttrs.attributes : []) out[attr.type] = attr.values;
    return out;
  }

  async function digest(name, bytes) {
    return bytesOf(await crypto.subtle.digest(name, bytes));
  }

  function namesCertificate(sid, cert) {
    if (sid instanceof pkijs.IssuerAndSerialNumber) {
      return sameBytes(derOf(sid.issuer.toSchema()), derOf(cert.issuer.toSchema())) &&
        BigInt("0x" + (toHex(bytesOf(sid.serialNumber.valueBlock.valueHexView)) || "0")) ===
        BigInt("0x" + (toHex(bytesOf(cert.serialNumber.valueBlock.valueHexView)) || "0"));
    }
    const ext = (cert.extensions || []).find((e) => e.extnID === "2.5.29.14");
    if (!ext) return false;
    const keyId = sid.idBlock.isConstructed ? sid.valueBlock.value[0].valueBlock.valueHexView : sid.valueBlock.valueHexView;
    return sameBytes(bytesOf(ext.parsedValue.valueBlock.valueHexView), bytesOf(keyId));
  }

  // ESS signingCertificateV2 (any hash, default SHA-256) or signingCertificate (SHA-1) names the
  // signer's certificate (ledger/stamps/signature.py _check_ess).
  async function checkEss(attrs, certDer) {
    let first;
    let hash;
    const certsOf = (value) => {
      const seq = value.valueBlock.value;
      if (!(value instanceof asn1js.Sequence) || !(seq[0] instanceof asn1js.Sequence) || !seq[0].valueBlock.value.length) {
        tokenFail("the ESS signingCertificate attribute is not well-formed");
      }
      return seq[0].valueBlock.value[0].valueBlock.value;
    };
    if (attrs[OID.signingCertificateV2]) {
      const fields = certsOf(attrs[OID.signingCertificateV2][0]);
      if (fields[0] instanceof asn1js.Sequence) {
        const alg = new pkijs.AlgorithmIdentifier({ schema: fields[0] }).algorithmId;
        hash = HASHES[alg];
        if (!hash) tokenFail("unsupported digest algorithm", Object.keys(HASHES).sort(), alg);
        first = fields[1];
      } else {
        hash = "SHA-256";
        first = fields[0];
      }
    } else if (attrs[OID.signingCertificate]) {
      first = certsOf(attrs[OID.signingCertificate][0])[0];
      hash = "SHA-1";
    } else {
      tokenFail("no ESS signingCertificate(V2) attribute binds the TSA certificate");
    }
    if (!(first instanceof asn1js.OctetString)) tokenFail("the ESS certHash is not an OCTET STRING");
    const claimed = toHex(bytesOf(first.valueBlock.valueHexView));
    const computed = toHex(await digest(hash, certDer));
    if (claimed !== computed) tokenFail("ESS certHash names another certificate", claimed, computed);
  }

  function checkEku(cert) {
    const ext = (cert.extensions || []).find((e) => e.extnID === OID.extKeyUsage);
    const purposes = ext && ext.parsedValue ? ext.parsedValue.keyPurposes : null;
    if (!ext || !ext.critical || !purposes || purposes.length !== 1 || purposes[0] !== OID.timeStamping) {
      tokenFail("the TSA certificate's extendedKeyUsage is not critical timeStamping only (RFC 3161)",
        OID.timeStamping, purposes);
    }
  }

  // keyUsage as OpenSSL reads it (its first two bytes: bit 0, digitalSignature, is 0x80 of the
  // first), or null when the certificate has none.
  function keyUsageOf(cert) {
    const ext = (cert.extensions || []).find((e) => e.extnID === OID.keyUsage);
    if (!ext) return null;
    const bits = ext.parsedValue instanceof asn1js.BitString ? bytesOf(ext.parsedValue.valueBlock.valueHexView) : new Uint8Array(0);
    return (bits[0] || 0) | ((bits[1] || 0) << 8);
  }
  const KU = { digitalSignature: 0x80, nonRepudiation: 0x40, keyCertSign: 0x04 };

  // A TSA certificate's keyUsage, when present, is digitalSignature and/or nonRepudiation only
  // (ledger/stamps/tst.py _check_key_usage; OpenSSL's timestampsign purpose).
  function checkKeyUsage(cert) {
    const usage = keyUsageOf(cert);
    const signing = KU.digitalSignature | KU.nonRepudiation;
    if (usage !== null && ((usage & ~signing) || !(usage & signing))) {
      tokenFail("the TSA certificate's keyUsage is not digitalSignature and/or nonRepudiation only",
        ["digitalSignature", "nonRepudiation"], usage);
    }
  }

  // The extensions `cert` marks critical that OpenSSL does not handle, sorted (none: []).
  function unhandledCritical(cert) {
    return (cert.extensions || []).filter((e) => e.critical && !HANDLED_EXTENSIONS.includes(e.extnID))
      .map((e) => e.extnID).sort();
  }

  function checkCritical(cert) {
    const unhandled = unhandledCritical(cert);
    if (unhandled.length) {
      tokenFail("the TSA certificate marks critical an extension OpenSSL does not handle (RFC 5280: a critical extension not understood refuses the certificate)",
        HANDLED_EXTENSIONS.slice().sort(), unhandled);
    }
  }

  function subjectOf(cert) {
    // RFC 4514 order (most specific first), as `crovia verify` prints it.
    const short = { "2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU" };
    return cert.subject.typesAndValues.slice().reverse()
      .map((tv) => `${short[tv.type] || tv.type}=${tv.value.valueBlock.value}`).join(",");
  }

  function isoTime(date) {
    const ms = date.getUTCMilliseconds();
    const text = date.toISOString().slice(0, 19);
    return text + (ms ? `.${String(ms).padStart(3, "0")}`.replace(/0+$/, "") : "") + "Z";
  }

  // Check one token over `data`; with `roots` (pkijs Certificates), its chain to one of them.
  async function checkToken(token, data, roots) {
    const outer = parseDer(token, "the token");
    const info = schemaOf(() => new pkijs.ContentInfo({ schema: outer }), "ContentInfo");
    if (info.contentType !== OID.signedData) tokenFail("the token is not one CMS SignedData", OID.signedData, info.contentType);
    const signed = schemaOf(() => new pkijs.SignedData({ schema: info.content }), "SignedData");
    checkSignedDataDer(info.content);
    const encap = signed.encapContentInfo;
    if (encap.eContentType !== OID.tstInfo) tokenFail("the token's content is not a TSTInfo", OID.tstInfo, encap.eContentType);
    if (!encap.eContent || encap.eContent.idBlock.isConstructed) tokenFail("the TSTInfo is not one primitive OCTET STRING");
    const tstDer = bytesOf(encap.eContent.valueBlock.valueHexView);
    const tst = schemaOf(() => new pkijs.TSTInfo({ schema: parseTstInfo(tstDer) }), "TSTInfo");
    const imprint = tst.messageImprint;
    if (imprint.hashAlgorithm.algorithmId !== OID.sha256) tokenFail("imprint algorithm", OID.sha256, imprint.hashAlgorithm.algorithmId);
    const expected = toHex(await sha256(data));
    const computed = toHex(bytesOf(imprint.hashedMessage.valueBlock.valueHexView));
    if (computed !== expected) tokenFail("the token's imprint is not sha256 of the seal's signed bytes", expected, computed);
    if (signed.signerInfos.length !== 1) tokenFail("a token has exactly one SignerInfo", 1, signed.signerInfos.length);
    const signer = signed.signerInfos[0];
    const byIssuer = signer.sid instanceof pkijs.IssuerAndSerialNumber;
    const versions = [signed.version, signer.version];
    if (versions[0] !== 3 || versions[1] !== (byIssuer ? 1 : 3)) tokenFail("SignedData and SignerInfo versions", [3, byIssuer ? 1 : 3], versions);
    const listed = signed.digestAlgorithms.map((a) => toHex(derOf(a.toSchema())));
    if (!listed.includes(toHex(derOf(signer.digestAlgorithm.toSchema())))) {
      tokenFail("the signer's digest algorithm is not among the SignedData's");
    }
    const trusted = roots.length > 0;
    for (const carried of signed.certificates || []) {
      if (carried instanceof pkijs.Certificate) checkCertificate(carried);
    }
    const cert = (signed.certificates || []).find((c) => c instanceof pkijs.Certificate && namesCertificate(signer.sid, c));
    if (!cert) tokenFail("the token does not carry the certificate that signed it (certReq was set)");
    const certDer = derOf(cert.toSchema());
    const attrs = attributeValues(signer);
    const type = attrs[OID.contentType];
    if (!type || !(type[0] instanceof asn1js.ObjectIdentifier) || type[0].valueBlock.toString() !== OID.tstInfo) {
      tokenFail("signed contentType is not id-ct-TSTInfo");
    }
    const hash = HASHES[signer.digestAlgorithm.algorithmId];
    if (!hash) tokenFail("unsupported digest algorithm", Object.keys(HASHES).sort(), signer.digestAlgorithm.algorithmId);
    const digestAttr = attrs[OID.messageDigest];
    const claimedDigest = digestAttr && digestAttr[0] instanceof asn1js.OctetString ? toHex(bytesOf(digestAttr[0].valueBlock.valueHexView)) : null;
    const tstDigest = toHex(await digest(hash, tstDer));
    if (claimedDigest !== tstDigest) tokenFail("signed messageDigest of the TSTInfo", claimedDigest, tstDigest);
    await checkEss(attrs, certDer);
    const algorithm = signer.signatureAlgorithm.algorithmId;
    if (!SIGNATURES.includes(algorithm)) tokenFail("unsupported signature algorithm", SIGNATURES, algorithm);
    if (algorithm === ED25519) throw new NotChecked("an Ed25519 TSA signature (PKI.js cannot check it)");
    if (algorithm.startsWith("1.2.840.10045.4.3.")) checkEcdsaSignature(signer.signature);
    if (trusted) checkChainParams(signer.signatureAlgorithm);
    let result;
    try {
      result = await signed.verify({ signer: 0, data, checkChain: false, extendedMode: true });
    } catch (err) {
      if (err && err.code === 7) throw new NotChecked(String(err.message));
      tokenFail(`the CMS signature does not verify under the TSA certificate: ${err && err.message}`, subjectOf(cert));
    }
    if (!result.signatureVerified) tokenFail("the CMS signature does not verify under the TSA certificate", subjectOf(cert));
    checkEku(cert);
    checkKeyUsage(cert);
    checkCritical(cert);
    if (trusted) {
      const others = (signed.certificates || []).filter((c) => c instanceof pkijs.Certificate && c !== cert);
      const failure = await chainFailure(cert, others, roots, tst.genTime);
      if (failure) tokenFail(`the TSA certificate does not chain to a pinned root: ${failure}`, roots.map(subjectOf));
    }
    return { gen_time: isoTime(tst.genTime), tsa_subject: subjectOf(cert), pinned: trusted, gen_at: tst.genTime };
  }

  // Why `cert` does not chain to one of `roots` at `date`, or null when it does. Trusted first
  // (as OpenSSL builds paths): straight from a root, then through the token's other
  // certificates, which are not signed and may be anything. PKI.js builds the path and checks its
  // signatures, names and dates; it takes the last certificate it is given for the one to
  // chain, so the TSA certificate goes last. What PKI.js does not hold a path to, OpenSSL does
  // (rfc3161-client, in `crovia verify`): `pathFailure` holds the path it built to that.
  async function chainFailure(cert, others, roots, date) {
    const certDer = derOf(cert.toSchema());
    const carried = others.filter((c) => !sameBytes(derOf(c.toSchema()), certDer));
    let failure = "no path";
    for (const certs of [[cert], [...carried, cert]]) {
      const engine = new pkijs.CertificateChainValidationEngine({ trustedCerts: roots.slice(), certs, checkDate: date });
      try {
        const outcome = await engine.verify();
        if (outcome.result) return pathFailure(engine.certs, certDer);
        failure = outcome.resultMessage;
      } catch (err) {
        failure = (err && err.resultMessage) || String(err);
      }
      if (!carried.length) break;
    }
    return failure;
  }

  // OpenSSL's checks of a built path (crypto/x509/x509_vfy.c check_chain_extensions, with the
  // timestampsign purpose rfc3161-client sets), over `path` = [TSA certificate, ..., root]:
  // every certificate above the TSA's is a CA (X509_check_ca: keyUsage, when present, has
  // keyCertSign; basicConstraints CA:TRUE, required of every one below the root; a root without
  // basicConstraints passes as OpenSSL lets it, a v1 self-signed one or one whose keyUsage has
  // keyCertSign), and each pathLenConstraint bounds the CA certificates below it that are not
  // self-issued; and no certificate of it, the root included, marks critical an extension
  // OpenSSL does not handle (X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION). The TSA certificate's own
  // keyUsage, extendedKeyUsage and critical extensions are held by checkToken.
  function pathFailure(path, certDer) {
    if (!path.length || !sameBytes(derOf(path[0].toSchema()), certDer)) return "the path found does not start at the TSA certificate";
    let below = 0; // CA certificates below, not self-issued (OpenSSL's plen)
    for (let i = 1; i < path.length; i++) {
      const cert = path[i];
      const unhandled = unhandledCritical(cert);
      if (unhandled.length) {
        return `certificate ${i} of the path (${subjectOf(cert)}) marks critical an extension OpenSSL does not handle (${unhandled.join(", ")}): RFC 5280 refuses a certificate with a critical extension not understood`;
      }
      const ca = caKind(cert);
      const root = i === path.length - 1;
      if (!ca || (!root && ca !== 1)) {
        return `certificate ${i} of the path (${subjectOf(cert)}) is not a CA certificate: basicConstraints CA:TRUE, and keyCertSign when keyUsage is present`;
      }
      const limit = pathLenOf(cert);
      if (i > 1 && limit !== null && below > limit) {
        return `certificate ${i} of the path (${subjectOf(cert)}) allows ${limit} CA certificate(s) below it, the path has ${below}`;
      }
      if (!sameBytes(derOf(cert.subject.toSchema()), derOf(cert.issuer.toSchema()))) below++;
    }
    return null;
  }

  // X509_check_ca: 0 not a CA, 1 by basicConstraints, 3 a v1 self-signed root, 4 by keyUsage,
  // 5 by Netscape's certificate type.
  function caKind(cert) {
    const usage = keyUsageOf(cert);
    if (usage !== null && !(usage & KU.keyCertSign)) return 0;
    const bc = (cert.extensions || []).find((e) => e.extnID === OID.basicConstraints);
    if (bc) {
      const value = bc.parsedValue;
      if (!(value instanceof pkijs.BasicConstraints)) return 0;
      const limit = value.pathLenConstraint;
      if (typeof limit === "number" && limit < 0) return 0; // OpenSSL: an invalid extension
      return value.cA === true ? 1 : 0;
    }
    if (cert.version === 0 && sameBytes(derOf(cert.subject.toSchema()), derOf(cert.issuer.toSchema()))) return 3;
    if (usage !== null) return 4;
    return 0; // (Netscape's CA types: PKI.js cannot read the extension; refused, never trusted)
  }

  // pathLenConstraint, or null when there is none (or it is too large to bound anything).
  function pathLenOf(cert) {
    const bc = (cert.extensions || []).find((e) => e.extnID === OID.basicConstraints);
    const limit = bc && bc.parsedValue instanceof pkijs.BasicConstraints ? bc.parsedValue.pathLenConstraint : undefined;
    return typeof limit === "number" && Number.isSafeInteger(limit) ? limit : null;
  }

  // Chaining to a root, `crovia verify` parses the SignerInfo again with rfc3161-client, which
  // (as X.509 libraries do) wants the signature algorithm's parameters absent or NULL.
  function checkChainParams(algorithm) {
    const params = algorithm.algorithmParams;
    if (params && !(params instanceof asn1js.Null)) {
      tokenFail("the TSA certificate does not chain to a pinned root: the signature algorithm's parameters are not NULL");
    }
  }

  function pemRoots(pems) {
    return (pems || []).map((pem) => {
      const body = pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
      return pkijs.Certificate.fromBER(b64(body, "trust_root"));
    });
  }

  async function checkTokens(receipt, tsaRoots) {
    if (!Object.prototype.hasOwnProperty.call(receipt, "rfc3161_timestamps")) return [];
    const data = stampedBytes(receipt.seal);
    const out = [];
    const ready = typeof root.pkijs === "object" && typeof root.asn1js === "object";
    const roots = ready ? pemRoots(tsaRoots) : [];
    for (let n = 0; n < receipt.rfc3161_timestamps.length; n++) {
      const entry = receipt.rfc3161_timestamps[n];
      const where = `rfc3161_timestamps[${n}] from ${entry.tsa_url}`;
      if (!ready) {
        out.push({ checked: false, why: "PKI.js did not load", claimed_time: entry.gen_time });
        continue;
      }
      let facts;
      try {
        facts = await checkToken(b64(entry.token_base64, "rfc3161"), data, roots);
      } catch (err) {
        if (err instanceof NotChecked) {
          out.push({ checked: false, why: err.message, claimed_time: entry.gen_time });
          continue;
        }
        if (err instanceof CheckFailed) throw new CheckFailed("rfc3161", `${where}: ${err.message}`, err.expected, err.computed);
        throw new CheckFailed("rfc3161", `${where}: the token is not well-formed: ${err && err.message}`);
      }
      if (entry.gen_time !== facts.gen_time) {
        throw new CheckFailed("rfc3161", `${where}: gen_time is the token's genTime`, facts.gen_time, entry.gen_time);
      }
      const late = notBeforeSeal(facts, receipt.seal.sealed_at);
      if (late) throw new CheckFailed("rfc3161", `${where}: ${late[0]}`, late[1], late[2]);
      out.push({ checked: true, gen_time: facts.gen_time, tsa_subject: facts.tsa_subject, pinned: facts.pinned });
    }
    return out;
  }

  // A stamp cannot predate what it stamps (ledger/stamps/tst.py check_not_before_seal): the
  // token's genTime may not be before the seal's sealed_at (whole seconds, ASCII digits only).
  // [message, expected, computed] of the refusal, or null.
  const SEALED_AT = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z$/;
  function notBeforeSeal(facts, sealedAt) {
    const parts = typeof sealedAt === "string" ? SEALED_AT.exec(sealedAt) : null;
    const sealed = parts ? utcTime(parts.slice(1).map(Number)) : null;
    if (sealed === null) {
      return ["the seal's sealed_at is not a UTC time to hold the token's genTime against", "YYYY-MM-DDTHH:MM:SSZ", plain(sealedAt)];
    }
    if (facts.gen_at.getTime() < sealed) {
      return ["the token's genTime is before the seal's sealed_at (a stamp cannot predate what it stamps)", `>= ${sealedAt}`, facts.gen_time];
    }
    return null;
  }

  // Milliseconds since 1970 of [year, month, day, hour, minute, second], or null for a time
  // Python's datetime refuses (month 13, 30 February, hour 24, second 60, year 0).
  function utcTime([year, month, day, hour, minute, second]) {
    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    date.setUTCHours(hour, minute, second, 0);
    const same = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day &&
      date.getUTCHours() === hour && date.getUTCMinutes() === minute && date.getUTCSeconds() === second;
    return year >= 1 && same ? date.getTime() : null;
  }

  // -- OpenTimestamps (the opentimestamps library's format, ledger/stamps/ots.py) ---------------

  const MAGIC = V.fromHex("004f70656e54696d657374616d7073000050726f6f6600bf89e2e884e89294");
  const PENDING = "83dfe30d2ef90c8e";
  const BITCOIN = "0588960d73d71901";
  const HEIGHT_ONLY = ["06869a0d73d71b45", "30fe8087b5c7ead7"]; // Litecoin, Ethereum: reported only
  const URI_CHARS = /^[A-Za-z0-9\-._/:]*$/;
  const MAX_MSG = 4096;
  const otsFail = (message, expected, computed) => {
    throw new CheckFailed("opentimestamps", message, expected, computed);
  };

  class Reader {
    constructor(bytes) {
      this.bytes = bytes;
      this.at = 0;
    }
    bytesN(n) {
      if (this.at + n > this.bytes.length) otsFail(`not a valid .ots proof: truncated (wanted ${n} bytes)`);
      const out = this.bytes.slice(this.at, this.at + n);
      this.at += n;
      return out;
    }
    byte() {
      return this.bytesN(1)[0];
    }
    varuint() {
      let value = 0n;
      let shift = 0n;
      for (;;) {
        const b = this.byte();
        value |= BigInt(b & 0x7f) << shift;
        if (!(b & 0x80)) return value;
        shift += 7n;
      }
    }
    varbytes(max, min = 0) {
      const n = this.varuint();
      if (n > BigInt(max)) otsFail(`not a valid .ots proof: varbytes longer than ${max}`);
      if (n < BigInt(min)) otsFail(`not a valid .ots proof: varbytes shorter than ${min}`);
      return this.bytesN(Number(n));
    }
    eof() {
      if (this.at !== this.bytes.length) otsFail("not a valid .ots proof: trailing bytes");
    }
  }

  const HASH_OPS = {
    0x02: ["sha1", (m) => nobleHashes.sha1(m)],
    0x03: ["ripemd160", (m) => nobleHashes.ripemd160(m)],
    0x08: ["sha256", null],
    0x67: ["keccak256", (m) => nobleHashes.keccak_256(m)],
  };

  async function applyOp(tag, arg, msg) {
    if (msg.length > (tag === 0xf3 ? MAX_MSG / 2 : MAX_MSG)) otsFail("not a valid .ots proof: message too long for an operation");
    let out;
    if (tag === 0xf0) out = V.concat(msg, arg);
    else if (tag === 0xf1) out = V.concat(arg, msg);
    else if (tag === 0xf2) {
      if (!msg.length) otsFail("not a valid .ots proof: reverse of an empty message");
      out = msg.slice().reverse();
    } else if (tag === 0xf3) {
      if (!msg.length) otsFail("not a valid .ots proof: hexlify of an empty message");
      out = new TextEncoder().encode(toHex(msg));
    } else if (tag === 0x08) out = await sha256(msg);
    else {
      if (typeof root.nobleHashes !== "object") throw new NotChecked(`a ${HASH_OPS[tag][0]} operation (its hash did not load)`);
      out = HASH_OPS[tag][1](msg);
    }
    if (out.length > MAX_MSG) otsFail("not a valid .ots proof: an operation's result is too long");
    return out;
  }

  // The bounds of ledger/stamps/ots.py (docs/stamps.md, "Limits on OpenTimestamps proofs"), for a
  // detached proof: total bytes; tags (operations, attestation markers, forks, the file's hash
  // operation) at most one per 8 bytes beyond a slack; computed message bytes at most 8 per byte
  // beyond a slack; depth 256.
  const MAX_REPLY_BYTES = 16 * 1024;
  const MAX_CALENDAR_ANSWERS = 16;
  const MAX_PROOF_BYTES = MAX_CALENDAR_ANSWERS * MAX_REPLY_BYTES + 4096;
  const PROOF_SLACK_OPERATIONS = MAX_CALENDAR_ANSWERS * (32 + 1);
  const PROOF_SLACK_MESSAGE_BYTES = MAX_CALENDAR_ANSWERS * 4096 + 4096;

  class Budget {
    constructor(size) {
      this.operations = 0;
      this.maxOperations = PROOF_SLACK_OPERATIONS + Math.floor(size / 8);
      this.messageBytes = 0;
      this.maxMessageBytes = PROOF_SLACK_MESSAGE_BYTES + 8 * size;
    }
    tag(reader) {
      this.operations += 1;
      if (this.operations > this.maxOperations) {
        otsFail("the proof has more operations than its size allows", `<= ${this.maxOperations}`, this.operations);
      }
      return reader.byte();
    }
    computed(msg) {
      this.messageBytes += msg.length;
      if (this.messageBytes > this.maxMessageBytes) {
        otsFail("the proof computes more message bytes than its size allows", `<= ${this.maxMessageBytes}`, this.messageBytes);
      }
    }
  }

  // One timestamp node: {attestations: Map(key -> attestation), ops: Map(op key -> child)}; ops
  // are keyed by tag and argument, attestations by kind and what the library compares them by. A
  // node that repeats either is refused, as ledger/stamps/ots.py refuses it (the library's writer
  // never repeats one, and its reader would keep only the last of two equal operations).
  async function readTimestamp(reader, msg, depth, budget) {
    if (!depth) otsFail("not a valid .ots proof: deeper than 256 operations");
    budget.computed(msg);
    const node = { msg, attestations: new Map(), ops: new Map() };
    const item = async (tag) => {
      if (tag === 0x00) {
        const kind = toHex(reader.bytesN(8));
        const payload = new Reader(reader.varbytes(8192));
        let attestation;
        let key;
        if (kind === PENDING) {
          const uri = payload.varbytes(1000);
          const text = String.fromCharCode(...uri);
          if (!URI_CHARS.test(text)) otsFail("not a valid .ots proof: a calendar URI with a character outside [A-Za-z0-9-._/:]");
          attestation = { kind: "pending", uri: text };
          key = `${kind}:${text}`;
        } else if (kind === BITCOIN || HEIGHT_ONLY.includes(kind)) {
          attestation = { kind: kind === BITCOIN ? "bitcoin" : "other", height: payload.varuint() };
          key = `${kind}:${attestation.height}`;
        } else {
          payload.at = payload.bytes.length;
          attestation = { kind: "other" };
          key = `${kind}:${toHex(payload.bytes)}`;
        }
        payload.eof();
        if (node.attestations.has(key)) otsFail("the proof repeats an attestation in one node");
        node.attestations.set(key, attestation);
        return;
      }
      let arg = null;
      if (tag === 0xf0 || tag === 0xf1) arg = reader.varbytes(MAX_MSG, 1);
      else if (!(tag === 0xf2 || tag === 0xf3 || tag in HASH_OPS)) otsFail(`not a valid .ots proof: unknown operation tag 0x${tag.toString(16)}`);
      const key = `${tag}:${arg ? toHex(arg) : ""}`;
      if (node.ops.has(key)) otsFail("the proof repeats an operation in one node");
      const result = await applyOp(tag, arg, msg);
      node.ops.set(key, await readTimestamp(reader, result, depth - 1, budget));
    };
    let tag = budget.tag(reader);
    while (tag === 0xff) {
      await item(budget.tag(reader));
      tag = budget.tag(reader);
    }
    await item(tag);
    return node;
  }

  function* allAttestations(node) {
    for (const attestation of node.attestations.values()) yield [node.msg, attestation];
    for (const child of node.ops.values()) yield* allAttestations(child);
  }

  async function loadDetached(bytes, sealDigest) {
    if (bytes.length > MAX_PROOF_BYTES) otsFail(`the proof is longer than ${MAX_PROOF_BYTES} bytes`, `<= ${MAX_PROOF_BYTES}`, bytes.length);
    const budget = new Budget(bytes.length);
    const reader = new Reader(bytes);
    if (!sameBytes(reader.bytesN(MAGIC.length), MAGIC)) otsFail("not a valid .ots proof: bad magic");
    const major = reader.varuint();
    if (major !== 1n) otsFail(`not a valid .ots proof: version ${major}`);
    const hashTag = budget.tag(reader);
    const lengths = { 0x02: 20, 0x03: 20, 0x08: 32 };
    if (!(hashTag in lengths)) otsFail(`not a valid .ots proof: unknown file hash op 0x${hashTag.toString(16)}`);
    const fileDigest = reader.bytesN(lengths[hashTag]);
    const tree = await readTimestamp(reader, fileDigest, 256, budget);
    reader.eof();
    if (hashTag !== 0x08 || !sameBytes(fileDigest, sealDigest)) {
      otsFail("the proof does not start at sha256 of the seal's signed bytes", `sha256 ${toHex(sealDigest)}`,
        `${HASH_OPS[hashTag][0]} ${toHex(fileDigest)}`);
    }
    return tree;
  }

  function summarize(tree) {
    const pending = new Set();
    const bitcoin = new Map();
    let unknown = 0;
    for (const [msg, attestation] of allAttestations(tree)) {
      if (attestation.kind === "pending") pending.add(attestation.uri);
      else if (attestation.kind === "bitcoin") bitcoin.set(`${attestation.height}:${toHex(msg)}`, { height: attestation.height, digest: msg });
      else unknown++;
    }
    const claims = [...bitcoin.values()].sort((a, b) =>
      a.height < b.height ? -1 : a.height > b.height ? 1 : toHex(a.digest) < toHex(b.digest) ? -1 : toHex(a.digest) > toHex(b.digest) ? 1 : 0);
    const sortedPending = [...pending].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { pending: sortedPending, bitcoin: claims, unknown, status: claims.length ? "confirmed" : "pending_next_stamp" };
  }

  const merkleRootHex = (digest) => toHex(digest.slice().reverse());

  function bitcoinClaims(summary) {
    return summary.bitcoin.map((c) => ({ block_height: new JsonInt(c.height), merkle_root: merkleRootHex(c.digest) }));
  }

  // A block header (80 bytes, 160 hex) as `crovia verify --bitcoin-header` takes it.
  function parseHeader(text) {
    const clean = String(text).trim();
    if (!/^[0-9a-fA-F]{160}$/.test(clean)) throw new Error(`a block header is 160 hex characters (80 bytes), got ${clean.length}`);
    return V.fromHex(clean.toLowerCase());
  }

  function blockTimes(summary, headers) {
    if (!headers.length) return [];
    const times = [];
    for (const claim of summary.bitcoin) {
      for (const header of headers) {
        if (sameBytes(header.slice(36, 68), claim.digest)) {
          const seconds = new DataView(header.buffer, header.byteOffset).getUint32(68, true);
          times.push({ at: new Date(seconds * 1000).toISOString().replace(".000Z", "Z"), source: `Bitcoin block ${claim.height}`, height: String(claim.height) });
        }
      }
    }
    if (!times.length) {
      otsFail("no given block header has the merkle root a Bitcoin attestation requires",
        summary.bitcoin.map((c) => merkleRootHex(c.digest)), headers.map((h) => merkleRootHex(h.slice(36, 68))));
    }
    return times;
  }

  async function checkProof(receipt, headers) {
    const anchor = receipt.bitcoin_anchor;
    if (!Object.prototype.hasOwnProperty.call(anchor, "ots_proof_base64")) {
      if (headers.length) otsFail("a block header was given, but the receipt has no OpenTimestamps proof");
      return { status: plain(anchor.status), checked: false, proof: false };
    }
    const sealDigest = await sha256(stampedBytes(receipt.seal));
    let tree;
    try {
      tree = await loadDetached(b64(anchor.ots_proof_base64, "opentimestamps"), sealDigest);
    } catch (err) {
      if (err instanceof NotChecked) return { status: plain(anchor.status), checked: false, proof: true, why: err.message };
      throw err;
    }
    const summary = summarize(tree);
    const claimed = { status: anchor.status, calendar_attestations: anchor.calendar_attestations, bitcoin_attestations: anchor.bitcoin_attestations };
    const proven = { status: summary.status, calendar_attestations: summary.pending, bitcoin_attestations: bitcoinClaims(summary) };
    if (canonical(claimed) !== canonical(proven)) {
      otsFail("bitcoin_anchor claims what its proof does not attest", plain(proven), plain(claimed));
    }
    // ledger/stamps/ots.py check_submitted_to: pending, then at the calendar the receipt names.
    if (summary.status === "pending_next_stamp" && !summary.pending.includes(anchor.ots_url)) {
      otsFail("the proof is not pending at the calendar the receipt was submitted to (ots_url)", summary.pending, plain(anchor.ots_url));
    }
    return {
      status: summary.status,
      checked: true,
      proof: true,
      calendars: summary.pending,
      bitcoin: summary.bitcoin.map((c) => ({ block_height: String(c.height), merkle_root: merkleRootHex(c.digest) })),
      times: blockTimes(summary, headers),
    };
  }

  // Every stamp of `receipt`: {rfc3161: [...], opentimestamps: {...}, checks: [names]}; raises
  // CheckFailed at the first bad one, RFC 3161 tokens first (as ledger/stamps/check.py).
  async function checkStamps(receipt, { tsaRoots = [], headers = [] } = {}) {
    const tokens = await checkTokens(receipt, tsaRoots);
    const proof = await checkProof(receipt, headers);
    const checks = [];
    if (tokens.some((t) => t.checked)) checks.push("rfc3161");
    if (proof.checked) checks.push("opentimestamps");
    return { rfc3161: tokens, opentimestamps: proof, checks };
  }

  root.CroviaStamps = { checkStamps, checkToken, parseHeader, stampedBytes, NotChecked };
})(globalThis);
