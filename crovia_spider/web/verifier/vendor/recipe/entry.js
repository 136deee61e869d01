// The entry of the vendored bundle: PKI.js and asn1js (RFC 3161 tokens: CMS, X.509, chains) and
// the hashes of @noble/hashes that OpenTimestamps proofs may use and WebCrypto lacks.
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { ripemd160, sha1 } from "@noble/hashes/legacy.js";
import { keccak_256 } from "@noble/hashes/sha3.js";

globalThis.asn1js = asn1js;
globalThis.pkijs = pkijs;
globalThis.nobleHashes = { keccak_256, ripemd160, sha1 };
