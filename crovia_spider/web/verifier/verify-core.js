// The verification core of the browser verifier: the checks of `crovia verify`, in the same order
// and under the same names, over the exact bytes of a receipt. Pure: no DOM, no network. It uses
// WebCrypto for SHA-256 and Ed25519 and nothing from any other origin. page.js renders its report.
//
// A classic script (not a module) so that a copy of the page opened from disk (file://) runs it
// too; it defines one global, CroviaVerify.
"use strict";

(function (root) {
  const MAX_DEPTH = 512;
  const INT_MIN = -(2n ** 63n);
  const INT_MAX = 2n ** 64n - 1n;
  const HEX64 = /^[0-9a-f]{64}$/;
  const HEX128 = /^[0-9a-f]{128}$/;
  const SIGNATURE_PREFIX = "ed25519:";
  const ENVELOPE_SCHEMA = "crovia.axiom.v1";
  const AXIOM_TYPE = "AX.OBS";
  const ANCHOR_CHAIN = "crovia.axiom_ledger";
  const RECEIPT_SCHEMA = "crovia.axiom_proof.v1";
  const CANONICALIZATION = {
    envelope_id: "axm_ + sha256(envelope minus {signature, axiom_id, anchors})",
    envelope_signature: "ed25519(envelope minus {signature, axiom_id})",
    json: "sort_keys=True, separators=(',',':'), ensure_ascii=False, allow_nan=False, utf-8",
    leaf_hash: "sha256(0x00 || canonical_json(envelope_full))",
    seal_signature: "ed25519(seal minus {signature, sig_algorithm})",
  };
  const MERKLE_PROOF_PARAMS = {
    hash_alg: "sha256",
    leaf_prefix: "0x00",
    node_prefix: "0x01",
    odd_leaf_rule: "duplicate_last",
  };

  // -- errors ----------------------------------------------------------------------------------

  class CheckFailed extends Error {
    constructor(check, message, expected, computed) {
      super(message);
      this.check = check;
      this.expected = expected === undefined ? null : expected;
      this.computed = computed === undefined ? null : computed;
    }
  }

  class Unsupported extends Error {}

  // -- strict JSON ------------------------------------------------------------------------------
  // JSON.parse keeps the last of duplicate keys and rounds integers beyond 2^53: a receipt is
  // evidence, so we parse ourselves, refuse duplicates and keep every integer exact (BigInt).

  class JsonInt {
    constructor(big) {
      this.big = big;
    }
  }

  function parseJson(text) {
    let i = 0;
    const fail = (what) => {
      throw new CheckFailed("canonical_bytes", `not JSON: ${what} at character ${i}`);
    };
    const ws = () => {
      while (i < text.length && " \t\n\r".includes(text[i])) i++;
    };
    const value = (depth) => {
      if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
      ws();
      const c = text[i];
      if (c === "{") return object(depth);
      if (c === "[") return array(depth);
      if (c === '"') return string();
      if (c === "-" || (c >= "0" && c <= "9")) return number();
      for (const [word, v] of [["true", true], ["false", false], ["null", null]]) {
        if (text.startsWith(word, i)) {
          i += word.length;
          return v;
        }
      }
      return fail("unexpected character");
    };
    const object = (depth) => {
      const out = Object.create(null);
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected a key");
        const key = string();
        if (Object.prototype.hasOwnProperty.call(out, key)) {
          throw new CheckFailed("canonical_bytes", `duplicate key ${JSON.stringify(key)}`);
        }
        ws();
        if (text[i] !== ":") fail("expected ':'");
        i++;
        out[key] = value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
        } else if (text[i] === "}") {
          i++;
          return out;
        } else {
          fail("expected ',' or '}'");
        }
      }
    };
    const array = (depth) => {
      const out = [];
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return out;
      }
      for (;;) {
        out.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
        } else if (text[i] === "]") {
          i++;
          return out;
        } else {
          fail("expected ',' or ']'");
        }
      }
    };
    const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
    const string = () => {
      let out = "";
      i++;
      for (;;) {
        if (i >= text.length) fail("unterminated string");
        const c = text[i++];
        if (c === '"') return out;
        if (c < " ") fail("control character in a string");
        if (c !== "\\") {
          out += c;
          continue;
        }
        const e = text[i++];
        if (e === "u") {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
        } else if (e in ESCAPES) {
          out += ESCAPES[e];
        } else {
          fail("bad escape");
        }
      }
    };
    const number = () => {
      const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 5000));
      if (!m) fail("bad number");
      i += m[0].length;
      if (m[2] || m[3]) {
        throw new CheckFailed("canonical_bytes", `a float (${m[0]}) in a signed structure`);
      }
      return new JsonInt(BigInt(m[0]));
    };
    const result = value(0);
    ws();
    if (i !== text.length) fail("trailing data");
    return result;
  }

  // -- canonical JSON (docs/format.md) ----------------------------------------------------------
  // Python sorts keys by code point; JavaScript's default sort compares UTF-16 units, which
  // differs for characters above U+FFFF against U+E000..U+FFFF, so we compare code points.

  function compareCodePoints(a, b) {
    const x = Array.from(a);
    const y = Array.from(b);
    for (let k = 0; k < Math.min(x.length, y.length); k++) {
      const d = x[k].codePointAt(0) - y[k].codePointAt(0);
      if (d !== 0) return d;
    }
    return x.length - y.length;
  }

  function encodeString(s) {
    if (!s.isWellFormed()) {
      throw new CheckFailed("canonical_bytes", "a string holds a lone surrogate (not UTF-8)");
    }
    let out = '"';
    for (const ch of s) {
      const code = ch.codePointAt(0);
      if (ch === '"') out += '\\"';
      else if (ch === "\\") out += "\\\\";
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "\t") out += "\\t";
      else if (ch === "\b") out += "\\b";
      else if (ch === "\f") out += "\\f";
      else if (code < 0x20) out += "\\u" + code.toString(16).padStart(4, "0");
      else out += ch;
    }
    return out + '"';
  }

  function canonical(v) {
    if (v === null) return "null";
    if (v === true) return "true";
    if (v === false) return "false";
    if (v instanceof JsonInt) {
      if (v.big < INT_MIN || v.big > INT_MAX) {
        throw new CheckFailed("canonical_bytes", `integer ${v.big} is beyond 64 bits`);
      }
      return v.big.toString();
    }
    if (typeof v === "number") return canonical(new JsonInt(BigInt(v)));
    if (typeof v === "string") return encodeString(v);
    if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
    const keys = Object.keys(v).sort(compareCodePoints);
    return "{" + keys.map((k) => encodeString(k) + ":" + canonical(v[k])).join(",") + "}";
  }

  const encoder = new TextEncoder();
  const canonicalBytes = (v) => encoder.encode(canonical(v));

  function sameBytes(a, b) {
    if (a.length !== b.length) return false;
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
    return true;
  }

  // -- hashes, keys, signatures -----------------------------------------------------------------

  const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const fromHex = (hex) => Uint8Array.from(hex.match(/../g) || [], (h) => parseInt(h, 16));

  async function sha256(bytes) {
    return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  }

  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  async function ed25519Supported() {
    if (!root.crypto || !crypto.subtle) return false;
    try {
      // The Ed25519 base point's encoding: a valid public key.
      const key = fromHex("5866666666666666666666666666666666666666666666666666666666666666");
      await crypto.subtle.importKey("raw", key, { name: "Ed25519" }, false, ["verify"]);
      return true;
    } catch (_) {
      return false;
    }
  }

  async function ed25519Verify(publicKeyHex, signatureHex, message) {
    try {
      const key = await crypto.subtle.importKey(
        "raw",
        fromHex(publicKeyHex),
        { name: "Ed25519" },
        false,
        ["verify"],
      );
      return await crypto.subtle.verify({ name: "Ed25519" }, key, fromHex(signatureHex), message);
    } catch (_) {
      return false; // a key that is not a curve point cannot have signed anything
    }
  }

  const without = (obj, names) => {
    const out = Object.create(null);
    for (const k of Object.keys(obj)) if (!names.includes(k)) out[k] = obj[k];
    return out;
  };

  const num = (v) => (v instanceof JsonInt ? v.big : null);
  const plain = (v) => {
    if (v instanceof JsonInt) return Number.isSafeInteger(Number(v.big)) ? Number(v.big) : String(v.big);
    if (Array.isArray(v)) return v.map(plain);
    if (v && typeof v === "object") {
      const out = {};
      for (const k of Object.keys(v)) out[k] = plain(v[k]);
      return out;
    }
    return v;
  };

  // -- the checks of `crovia verify` (ledger/receipt/verify.py), same order, same names ---------------

  const SEED_SEAL_KEYS = [
    "first_collector_run_id", "first_receipt_hash", "jsonl_path", "key_id",
    "last_collector_run_id", "last_receipt_hash", "leaf_count", "merkle_root", "public_key_hex",
    "run_id", "schema", "seal_family_version", "seal_kind", "sealed_at", "sig_algorithm",
    "signature", "signer_version",
  ];
  const SEAL_KEY_SETS = [SEED_SEAL_KEYS, [...SEED_SEAL_KEYS, "prev_seal_sha256", "rfc6962_root"]];
  // The reference seal's fixed values (ledger/seal.py SEAL_FIXED_VALUES), held at receipt_shape.
  const SEAL_FIXED_VALUES = {
    schema: "crovia.seal.v1",
    seal_kind: "substrate_batch",
    seal_family_version: "crovia-seal-family/1",
  };
  const RECEIPT_SECTIONS = {
    bitcoin_anchor: ["bitcoin_attestations", "calendar_attestations", "ots_url", "stamped_at", "status"],
    ledger: ["leaf_hash", "leaf_index", "ledger_path"],
    merkle_proof: [...Object.keys(MERKLE_PROOF_PARAMS), "path"],
    trust_root: ["key_id", "public_key_hex", "signature_algorithm", "url"],
    verifier: ["spec", "url"],
  };
  const RECEIPT_KEYS = [...Object.keys(RECEIPT_SECTIONS), "seal", "_canonicalization", "axiom_id", "envelope", "schema"];
  const OPTIONAL_KEYS = { receipt: ["key_rotations", "rfc3161_timestamps"], bitcoin_anchor: ["ots_proof_base64"] };
  const UNSTAMPED_STATUSES = ["pending_next_stamp", "not_stamped"];
  const PROVEN_STATUSES = ["pending_next_stamp", "confirmed"];
  const TOKEN_KEYS = ["gen_time", "token_base64", "tsa_url"];
  const TYPES = [
    ["seal", "leaf_count", "int"],
    ["seal", "merkle_root", "str"],
    ["seal", "public_key_hex", "str"],
    ["seal", "key_id", "str"],
    ["seal", "signature", "str"],
    ["seal", "sig_algorithm", "str"],
    ["ledger", "leaf_index", "int"],
    ["ledger", "leaf_hash", "str"],
    ["merkle_proof", "path", "list"],
  ];
  const ENVELOPE_KEYS = [
    "anchors", "axiom_id", "axiom_type", "body", "confidence", "decision", "issued_at", "notes",
    "object", "predecessors", "schema", "signature", "signer", "subject", "tsa", "zk_mode", "zk_proof",
  ];
  const LEGACY_ANCHOR_CHAINS = ["crovia.axiom_graph"];
  const ANCHOR_KEYS = ["chain", "height", "merkle_proof", "root_at_anchor"];
  const REPORTED = [
    ["", "axiom_id"], ["", "issued_at"], ["", "signature"], ["body", "title"], ["body", "vendor"],
    ["object", "captured_by"], ["object", "primary_source_url"], ["subject", "observed_at"],
  ];
  const REPORTED_FETCH = [
    ["", "axiom_id"], ["", "issued_at"], ["", "signature"], ["body", "vendor"], ["body", "feed_url"],
    ["body", "outcome"], ["body", "fetched_at"], ["object", "captured_by"],
    ["object", "primary_source_url"], ["subject", "observed_at"],
  ];
  // An AX.CAPTURE record reports the page, the item it captures and what the capture found.
  const REPORTED_CAPTURE = [
    ["", "axiom_id"], ["", "issued_at"], ["", "signature"], ["body", "vendor"], ["body", "url"],
    ["body", "item"], ["body", "outcome"], ["body", "captured_at"], ["object", "captured_by"],
    ["object", "primary_source_url"], ["subject", "observed_at"],
  ];
  // An AX.COVERAGE record reports the category, the day and when it was computed.
  const REPORTED_COVERAGE = [
    ["", "axiom_id"], ["", "issued_at"], ["", "signature"], ["body", "vendor"], ["body", "category"],
    ["body", "day"], ["body", "computed_at"], ["object", "captured_by"],
    ["object", "primary_source_url"], ["subject", "observed_at"],
  ];
  const REPORTED_BY_TYPE = {
    [AXIOM_TYPE]: REPORTED, "AX.FETCH": REPORTED_FETCH, "AX.CAPTURE": REPORTED_CAPTURE, "AX.COVERAGE": REPORTED_COVERAGE,
  };
  // The reported times and their one form each, ASCII digits only (ledger/records/shape.py TIMES).
  const SECONDS = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/;
  const FRACTION = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$/;
  const MICROS = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$/;
  const TIMES_BY_TYPE = {
    [AXIOM_TYPE]: [["", "issued_at", SECONDS], ["subject", "observed_at", FRACTION]],
    "AX.FETCH": [["", "issued_at", SECONDS], ["subject", "observed_at", FRACTION], ["body", "fetched_at", MICROS]],
    "AX.CAPTURE": [["", "issued_at", SECONDS], ["subject", "observed_at", FRACTION], ["body", "captured_at", MICROS]],
    "AX.COVERAGE": [["", "issued_at", SECONDS], ["subject", "observed_at", FRACTION], ["body", "computed_at", MICROS]],
  };
  const FETCH_OUTCOMES = ["new_body", "unchanged_body", "unreadable_body", "not_modified", "failed"];
  const ROTATION_SCHEMA = "crovia.key_rotation.v1";
  const ROTATION_KEYS = [
    "schema", "old_public_key_hex", "old_key_id", "new_public_key_hex", "new_key_id", "leaf_count",
    "prev_seal_sha256", "rotated_at", "old_signature", "new_signature",
  ];
  const ROTATION_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/;

  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof JsonInt);
  const typeName = (v) =>
    v === null ? "NoneType" : v instanceof JsonInt ? "int" : Array.isArray(v) ? "list"
      : typeof v === "string" ? "str" : typeof v === "boolean" ? "bool" : "dict";
  const sortedKeys = (v) => Object.keys(v).sort(compareCodePoints);
  const sameSet = (a, b) => canonical([...a].sort(compareCodePoints)) === canonical([...b].sort(compareCodePoints));
  const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

  function expectKeys(name, section, keys) {
    const optional = OPTIONAL_KEYS[name] || [];
    const ok = isObject(section) && keys.every((k) => has(section, k)) &&
      Object.keys(section).every((k) => keys.includes(k) || optional.includes(k));
    if (!ok) {
      throw new CheckFailed("receipt_shape", `${name} keys`, [...keys].sort(compareCodePoints),
        isObject(section) ? sortedKeys(section) : typeName(section));
    }
  }

  function checkStampShape(receipt) {
    if (has(receipt, "rfc3161_timestamps")) {
      receipt.rfc3161_timestamps.forEach((token, n) => {
        if (!isObject(token) || !sameSet(Object.keys(token), TOKEN_KEYS)) {
          throw new CheckFailed("receipt_shape", `rfc3161_timestamps[${n}] keys`, TOKEN_KEYS);
        }
        if (!Object.values(token).every((v) => typeof v === "string")) {
          throw new CheckFailed("receipt_shape", `rfc3161_timestamps[${n}] values are strings`);
        }
      });
    }
    const anchor = receipt.bitcoin_anchor;
    if (!has(anchor, "ots_proof_base64")) {
      const claims = truthy(anchor.bitcoin_attestations) || truthy(anchor.calendar_attestations);
      if (claims || !UNSTAMPED_STATUSES.includes(anchor.status)) {
        throw new CheckFailed("bitcoin_anchor", "bitcoin_anchor claims an attestation but carries no proof to check it",
          `no attestations, status in ${UNSTAMPED_STATUSES}`, plain(anchor));
      }
      return;
    }
    if (typeof anchor.ots_proof_base64 !== "string" || !anchor.ots_proof_base64) {
      throw new CheckFailed("receipt_shape", "bitcoin_anchor.ots_proof_base64 is a non-empty string");
    }
    for (const name of ["bitcoin_attestations", "calendar_attestations"]) {
      if (!Array.isArray(anchor[name])) throw new CheckFailed("receipt_shape", `bitcoin_anchor.${name} is a list`);
    }
    if (!PROVEN_STATUSES.includes(anchor.status)) {
      throw new CheckFailed("bitcoin_anchor", "bitcoin_anchor.status with a proof", PROVEN_STATUSES, plain(anchor.status));
    }
  }

  // Python's truth value of a JSON value (the shape check is written `a or b`).
  function truthy(v) {
    if (v === null || v === false || v === "") return false;
    if (v instanceof JsonInt) return v.big !== 0n;
    if (Array.isArray(v)) return v.length > 0;
    if (isObject(v)) return Object.keys(v).length > 0;
    return Boolean(v);
  }

  function checkShape(receipt) {
    if (!isObject(receipt)) throw new CheckFailed("receipt_shape", "a receipt is a JSON object", null, typeName(receipt));
    expectKeys("receipt", receipt, RECEIPT_KEYS);
    for (const [name, keys] of Object.entries(RECEIPT_SECTIONS)) expectKeys(name, receipt[name], keys);
    const seal = receipt.seal;
    if (!isObject(seal) || !SEAL_KEY_SETS.some((keys) => sameSet(Object.keys(seal), keys))) {
      throw new CheckFailed("receipt_shape", "seal keys", SEED_SEAL_KEYS, isObject(seal) ? sortedKeys(seal) : typeName(seal));
    }
    for (const name of OPTIONAL_KEYS.receipt) {
      if (has(receipt, name) && (!Array.isArray(receipt[name]) || !receipt[name].length)) {
        throw new CheckFailed("receipt_shape", `${name}, when present, is a non-empty list`);
      }
    }
    const env = receipt.envelope;
    if (!isObject(env) || !has(env, "axiom_id") || !has(env, "signature")) {
      throw new CheckFailed("receipt_shape", "envelope is an object with axiom_id and signature");
    }
    if (receipt.schema !== RECEIPT_SCHEMA) throw new CheckFailed("receipt_shape", "schema", RECEIPT_SCHEMA, plain(receipt.schema));
    if (canonical(receipt._canonicalization) !== canonical(CANONICALIZATION)) {
      throw new CheckFailed("receipt_shape", "_canonicalization", CANONICALIZATION, plain(receipt._canonicalization));
    }
    for (const [name, value] of Object.entries(SEAL_FIXED_VALUES)) {
      if (seal[name] !== value) throw new CheckFailed("receipt_shape", `seal.${name}`, value, plain(seal[name]));
    }
    for (const [section, name, kind] of TYPES) {
      const got = typeName(receipt[section][name]);
      if (got !== kind) throw new CheckFailed("receipt_shape", `${section}.${name} type`, kind, got);
    }
    if (!ROTATION_TIME.test(seal.sealed_at)) {
      throw new CheckFailed("receipt_shape", "seal.sealed_at is a UTC time in ASCII digits", "YYYY-MM-DDTHH:MM:SSZ", seal.sealed_at);
    }
    checkStampShape(receipt);
    if (!HEX64.test(seal.public_key_hex)) throw new CheckFailed("receipt_shape", "seal.public_key_hex is not 64 hex", "64 hex", seal.public_key_hex);
  }

  // -- key rotations (ledger/keys/rotation.py, ledger/keys/keychain.py) ----------------------------------

  const keyIdOf = async (hex) => toHex(await sha256(fromHex(hex))).slice(0, 16);

  async function checkRotation(record, where) {
    if (!isObject(record) || !sameSet(Object.keys(record), ROTATION_KEYS)) {
      throw new CheckFailed("key_rotation", `${where}: keys`, ROTATION_KEYS, isObject(record) ? sortedKeys(record) : typeName(record));
    }
    if (record.schema !== ROTATION_SCHEMA) throw new CheckFailed("key_rotation", `${where}: schema`, ROTATION_SCHEMA, plain(record.schema));
    if (!(record.leaf_count instanceof JsonInt) || record.leaf_count.big < 0n) {
      throw new CheckFailed("key_rotation", `${where}: leaf_count is a count`, null, plain(record.leaf_count));
    }
    const match = (name, pattern) => {
      if (typeof record[name] !== "string" || !pattern.test(record[name])) {
        throw new CheckFailed("key_rotation", `${where}: ${name}`, String(pattern), plain(record[name]));
      }
    };
    match("old_public_key_hex", HEX64);
    match("new_public_key_hex", HEX64);
    match("rotated_at", ROTATION_TIME);
    if (record.prev_seal_sha256 !== "") match("prev_seal_sha256", HEX64);
    const signed = concat(encoder.encode(ROTATION_SCHEMA + "\n"), canonicalBytes(without(record, ["old_signature", "new_signature"])));
    for (const side of ["old", "new"]) {
      const pub = record[`${side}_public_key_hex`];
      const id = await keyIdOf(pub);
      if (record[`${side}_key_id`] !== id) throw new CheckFailed("key_rotation", `${where}: ${side}_key_id`, id, plain(record[`${side}_key_id`]));
      match(`${side}_signature`, HEX128);
      if (!(await ed25519Verify(pub, record[`${side}_signature`], signed))) {
        throw new CheckFailed("key_rotation", `${where}: ${side}_signature does not verify under ${side}_public_key_hex`,
          "valid ed25519 signature", record[`${side}_signature`]);
      }
    }
  }

  // Checks a list of rotation records, each starting at the key the one before handed over to;
  // returns {keys, records}. `where` names the list in messages.
  async function followRecords(records, where) {
    if (!isObject(records[0])) throw new CheckFailed("key_rotation", `${where} is a non-empty list of rotation records`);
    const keys = [records[0].old_public_key_hex];
    let previous = 0n;
    for (let n = 0; n < records.length; n++) {
      const record = records[n];
      const at = `${where} ${n + 1}`;
      await checkRotation(record, at);
      if (record.old_public_key_hex !== keys[keys.length - 1]) {
        throw new CheckFailed("key_rotation", `${at}: old_public_key_hex`, keys[keys.length - 1], record.old_public_key_hex);
      }
      if (keys.includes(record.new_public_key_hex)) {
        throw new CheckFailed("key_rotation", `${at}: hands over to a key the ledger had before`, null, record.new_public_key_hex);
      }
      if (record.leaf_count.big < previous) {
        throw new CheckFailed("key_rotation", `${at}: leaf_count goes back`, `>= ${previous}`, plain(record.leaf_count));
      }
      keys.push(record.new_public_key_hex);
      previous = record.leaf_count.big;
    }
    return { keys, records };
  }

  // A key of a chain is trusted only inside its era: from the hand-over to it (its record's
  // leaf_count and rotated_at) to the hand-over from it, both inclusive (docs/format.md, "When a
  // key is trusted"); ledger/keys/keychain.py KeyChain.check_seal_era. Both times have the one
  // form ROTATION_TIME (ASCII digits, whole seconds, Z), so they compare as strings.
  function checkSealEra(keys, records, seal, where) {
    const era = keys.indexOf(seal.public_key_hex);
    if (era < 0) return;
    const count = seal.leaf_count.big;
    const sides = [[era > 0 ? records[era - 1] : null, true], [era < records.length ? records[era] : null, false]];
    for (const [record, after] of sides) {
      if (!record) continue;
      if (typeof seal.sealed_at !== "string" || !ROTATION_TIME.test(seal.sealed_at)) {
        throw new CheckFailed("key_rotation", `${where}: seal.sealed_at is not a UTC time to hold against the hand-over`,
          "YYYY-MM-DDTHH:MM:SSZ", plain(seal.sealed_at));
      }
      const bound = after ? ">=" : "<=";
      const inside = after
        ? count >= record.leaf_count.big && seal.sealed_at >= record.rotated_at
        : count <= record.leaf_count.big && seal.sealed_at <= record.rotated_at;
      if (!inside) {
        throw new CheckFailed("key_rotation",
          `${where}: sealed ${after ? "before the hand-over to" : "after the hand-over from"} its key: a key is trusted only inside its era`,
          `leaf_count ${bound} ${record.leaf_count.big} and sealed_at ${bound} ${record.rotated_at}`,
          `leaf_count ${count}, sealed_at ${seal.sealed_at}`);
      }
    }
  }

  // The keys a receipt vouches for: the seal's alone, or key_rotations up to it.
  async function keyChain(receipt) {
    const seal = receipt.seal;
    if (!has(receipt, "key_rotations")) return { keys: [seal.public_key_hex], records: [] };
    const { keys, records } = await followRecords(receipt.key_rotations, "key_rotations");
    if (keys[keys.length - 1] !== seal.public_key_hex) {
      throw new CheckFailed("key_rotation", "key_rotations: last new key = seal.public_key_hex", seal.public_key_hex, keys[keys.length - 1]);
    }
    if (records[records.length - 1].leaf_count.big > seal.leaf_count.big) {
      throw new CheckFailed("key_rotation", "key_rotations: a rotation after the seal", `leaf_count <= ${seal.leaf_count.big}`, plain(records[records.length - 1].leaf_count));
    }
    checkSealEra(keys, records, seal, "key_rotations");
    return { keys, records };
  }

  // The site's trust root (docs/format.md "trust root"), parsed once: the pin, its rotation chain
  // and its TSA roots. Its records are JSON values here, as a receipt's are (JsonInt counts).
  function trustOf(pin) {
    if (!pin || typeof pin.public_key_hex !== "string") return null;
    const records = (Array.isArray(pin.key_rotations) ? pin.key_rotations : []).map((r) => parseJson(JSON.stringify(r)));
    return {
      public_key_hex: pin.public_key_hex,
      key_id: pin.key_id,
      records,
      tsa_roots: Array.isArray(pin.tsa_roots) ? pin.tsa_roots : [],
    };
  }

  // The known chain (the trust root's records) is checked, must end at the pin, and must agree
  // with the receipt's own records: two hand-overs from one key are a fork. Returns its keys.
  async function knownChain(trust, chain, seal) {
    if (!trust || !trust.records.length) return trust ? [trust.public_key_hex] : [];
    const known = await followRecords(trust.records, "the site's key_rotations");
    if (known.keys[known.keys.length - 1] !== trust.public_key_hex) {
      throw new CheckFailed("key_rotation", "the site's key_rotations end at its public_key_hex", trust.public_key_hex, known.keys[known.keys.length - 1]);
    }
    for (const mine of chain.records) {
      for (const theirs of known.records) {
        if (mine.old_public_key_hex === theirs.old_public_key_hex && canonical(mine) !== canonical(theirs)) {
          throw new CheckFailed("key_rotation", "the receipt's key_rotations and the site's hand over from one key twice (a fork)",
            theirs.new_public_key_hex, mine.new_public_key_hex);
        }
      }
    }
    checkSealEra(known.keys, known.records, seal, "known rotation chain");
    return known.keys;
  }

  // Is the seal's key trusted (docs/format.md "When a key is trusted")? Returns null, or how.
  function trustedBy(trust, knownKeys, chain, sealKey) {
    if (!trust) return null;
    const pin = trust.public_key_hex;
    const vouched = (key) => key === pin || (knownKeys.includes(key) && knownKeys.includes(pin));
    if (sealKey === pin) return { how: "site" };
    if (vouched(sealKey)) {
      const handover = trust.records.find((r) => r.old_public_key_hex === sealKey);
      return { how: "previous", record: handover ? plain(handover) : null };
    }
    if (chain.keys.some(vouched)) return { how: "rotation" };
    return null;
  }

  function keyForLeaf(chain, leafIndex) {
    let era = 0;
    while (era < chain.records.length && chain.records[era].leaf_count.big <= leafIndex) era++;
    return chain.keys[era];
  }

  // -- the envelope and the proof ---------------------------------------------------------------

  async function checkAxiomId(receipt) {
    const env = receipt.envelope;
    const core = without(env, ["signature", "axiom_id", "anchors"]);
    const computed = "axm_" + toHex(await sha256(canonicalBytes(core)));
    for (const [where, claimed] of [["envelope.axiom_id", env.axiom_id], ["axiom_id", receipt.axiom_id]]) {
      if (claimed !== computed) throw new CheckFailed("axiom_id", `${where} does not match the envelope`, plain(claimed), computed);
    }
  }

  function checkVerifierUrl(receipt) {
    const expected = `/v/${receipt.axiom_id}`;
    if (receipt.verifier.url !== expected) throw new CheckFailed("verifier_url", "verifier.url", expected, plain(receipt.verifier.url));
  }

  async function checkEnvelopeSignature(env, keyHex) {
    const claimed = env.signature;
    if (typeof claimed !== "string" || !claimed.startsWith(SIGNATURE_PREFIX) || !HEX128.test(claimed.slice(SIGNATURE_PREFIX.length))) {
      throw new CheckFailed("envelope_signature", "envelope.signature is not ed25519:<128 hex>", "ed25519:<hex>", plain(claimed));
    }
    const message = canonicalBytes(without(env, ["signature", "axiom_id"]));
    if (!(await ed25519Verify(keyHex, claimed.slice(SIGNATURE_PREFIX.length), message))) {
      throw new CheckFailed("envelope_signature", "envelope signature does not verify under the key of its leaf", "valid ed25519 signature", claimed);
    }
  }

  function firstAnchor(env) {
    const anchors = env.anchors;
    const first = Array.isArray(anchors) && anchors.length ? anchors[0] : null;
    if (!isObject(first) || !sameSet(Object.keys(first), ANCHOR_KEYS) || typeof first.chain !== "string" || !(first.height instanceof JsonInt)) {
      throw new CheckFailed("envelope_shape", "envelope.anchors[0] is {chain, height, merkle_proof, root_at_anchor}", null, plain(anchors));
    }
    return [first.chain, first.height.big];
  }

  function checkEnvelopeShape(env) {
    if (!sameSet(Object.keys(env), ENVELOPE_KEYS)) {
      throw new CheckFailed("envelope_shape", "envelope keys", ENVELOPE_KEYS, sortedKeys(env));
    }
    if (env.schema !== ENVELOPE_SCHEMA) throw new CheckFailed("envelope_shape", "envelope.schema", ENVELOPE_SCHEMA, plain(env.schema));
    // AX.OBS (an observed item), AX.FETCH (a fetch record) or AX.CAPTURE (a capture of an
    // item's page), as ledger/records/shape.py.
    const reported = typeof env.axiom_type === "string" && Object.hasOwn(REPORTED_BY_TYPE, env.axiom_type) ? REPORTED_BY_TYPE[env.axiom_type] : null;
    if (!reported) throw new CheckFailed("envelope_shape", "envelope.axiom_type", Object.keys(REPORTED_BY_TYPE).sort(), plain(env.axiom_type));
    for (const [section, name] of reported) {
      const holder = section ? env[section] : env;
      if (!isObject(holder) || typeof holder[name] !== "string") {
        throw new CheckFailed("envelope_shape", `envelope.${section ? section + "." : ""}${name} is a string`, "str", plain(holder));
      }
    }
    for (const [section, name, pattern] of TIMES_BY_TYPE[env.axiom_type]) {
      const value = section ? env[section][name] : env[name];
      if (!pattern.test(value)) {
        throw new CheckFailed("envelope_shape", `envelope.${section ? section + "." : ""}${name} is a UTC time in ASCII digits`, String(pattern), value);
      }
    }
    if (reported === REPORTED_FETCH && !FETCH_OUTCOMES.includes(env.body.outcome)) {
      throw new CheckFailed("envelope_shape", "envelope.body.outcome", FETCH_OUTCOMES, plain(env.body.outcome));
    }
    if (reported === REPORTED_FETCH) checkFetchEntries(env.body.entries);
    if (reported === REPORTED_FETCH) checkFetchReading(env.body);
    // A capture's facts are all reported (crovia verify, the page): every one well-formed.
    if (reported === REPORTED_CAPTURE) checkCapture(env.body);
    if (reported === REPORTED_CAPTURE) checkCaptureEnvelope(env);
    // A coverage record's sets are all reported: each well-formed (its digest: checkCoverageDigests).
    if (reported === REPORTED_COVERAGE) checkCoverage(env.body);
    if (reported === REPORTED_COVERAGE) checkCoverageEnvelope(env);
    // Who served the feed, when not the vendor (ledger/records/fetch.py relay_problem): reported,
    // so a non-empty string when present, on an item as on a fetch record.
    if (has(env.body, "relay") && (typeof env.body.relay !== "string" || env.body.relay === "")) {
      throw new CheckFailed("envelope_shape", "envelope.body.relay is a non-empty string", "str", plain(env.body.relay));
    }
    firstAnchor(env);
  }

  // A fetch record's `entries`, as ledger/records/fetch.py entries_problem: the read part alone
  // (records before issue 30) or with the counts of what the body held besides, ints adding up.
  const FETCH_ENTRIES_READ = ["count", "identities_sha256", "limit"];
  const FETCH_ENTRY_COUNTS = ["in_body", "over_limit", "unread"];
  function checkFetchEntries(entries) {
    if (entries === undefined || entries === null) return;
    const fail = (what) => { throw new CheckFailed("envelope_shape", `envelope.body.entries ${what}`, null, plain(entries)); };
    const whole = [...FETCH_ENTRIES_READ, ...FETCH_ENTRY_COUNTS];
    if (!isObject(entries) || !(sameSet(Object.keys(entries), FETCH_ENTRIES_READ) || sameSet(Object.keys(entries), whole))) fail("keys");
    if (typeof entries.identities_sha256 !== "string" || !HEX64.test(entries.identities_sha256)) fail("identities_sha256 is 64 lowercase hex");
    for (const name of ["count", "limit", ...FETCH_ENTRY_COUNTS]) if (has(entries, name) && !(entries[name] instanceof JsonInt)) fail(`${name} is an int`);
    if (!has(entries, "in_body")) return;
    if (FETCH_ENTRY_COUNTS.some((name) => entries[name].big < 0n)) fail("counts are not negative");
    if (entries.in_body.big !== entries.count.big + entries.over_limit.big + entries.unread.big) fail("in_body is count + over_limit + unread");
  }

  // How a fetch record's body is read: its kind, the options it was read with (select) and a
  // sitemap walk's further fetches (parts), as ledger/records/fetch.py reading_problem holds them:
  // both verifiers report all three, so each is well-formed when present.
  const FETCH_SELECT_KEYS = ["selectors", "include", "exclude"];
  const FETCH_PART_KEYS = ["url", "final_url", "status", "body_sha256", "content_type", "error", "loop"];
  const FETCH_MAX_PARTS = 1000;
  function checkFetchReading(body) {
    const fail = (what) => { throw new CheckFailed("envelope_shape", `envelope.body.${what}`, null, null); };
    const strings = (value) => Array.isArray(value) && value.every((v) => typeof v === "string");
    if (has(body, "kind") && (typeof body.kind !== "string" || body.kind === "")) fail("kind is a non-empty string");
    if (has(body, "select")) {
      const select = body.select;
      if (!isObject(select) || !Object.keys(select).every((k) => FETCH_SELECT_KEYS.includes(k))) {
        fail("select is not an object of selectors, include and exclude");
      }
      for (const name of ["include", "exclude"]) if (has(select, name) && !strings(select[name])) fail(`select.${name} is not a list of strings`);
      const selectors = has(select, "selectors") ? select.selectors : {};
      if (!isObject(selectors) || !Object.values(selectors).every((v) => typeof v === "string")) {
        fail("select.selectors is not an object of strings");
      }
    }
    if (!has(body, "parts")) return;
    const parts = body.parts;
    if (!Array.isArray(parts) || parts.length === 0 || parts.length > FETCH_MAX_PARTS) fail(`parts is not a list of 1 to ${FETCH_MAX_PARTS} parts`);
    parts.forEach((part, i) => {
      const where = `parts[${i}]`;
      if (!isObject(part) || !Object.keys(part).every((k) => FETCH_PART_KEYS.includes(k))) fail(`${where} is not an object of ${[...FETCH_PART_KEYS].sort().join(", ")}`);
      if (typeof part.url !== "string") fail(`${where}.url is not a string`);
      for (const name of ["final_url", "content_type", "error"]) if (has(part, name) && typeof part[name] !== "string") fail(`${where}.${name} is not a string`);
      if (has(part, "body_sha256")) {
        if (typeof part.body_sha256 !== "string" || !HEX64.test(part.body_sha256)) fail(`${where}.body_sha256 is not 64 lowercase hex`);
        if (!(part.status instanceof JsonInt) || !has(part, "final_url")) fail(`${where} names a body without its status and final_url`);
      } else if (has(part, "loop")) {
        if (part.loop !== true || Object.keys(part).length !== 2) fail(`${where} is a loop: {url, loop: true} alone`);
      } else if (!has(part, "error")) {
        fail(`${where} names neither a body, an error nor a loop`);
      }
    });
  }

  // A capture record's body, as ledger/records/capture.py capture_problem holds it, rule for rule
  // and in the same order. Lengths are in code points, as Python counts them (a string's
  // `length` here counts UTF-16 units: an emoji is two).
  const CAPTURE_SCHEMA = "crovia.capture.v1";
  const CAPTURE_OUTCOMES = ["first", "unchanged", "edited", "removed", "moved", "failed"];
  const CAPTURE_HEADER_NAMES = ["content_type", "content_encoding", "last_modified", "etag"];
  const CAPTURE_HEADER_CHARS = 1024;
  const CAPTURE_TEXT_KEYS = ["sha256", "length", "extractor"];
  const CAPTURE_MAX_REDIRECTS = 20;
  const CAPTURE_URL_CHARS = 4096;
  const CAPTURE_KEPT_DIGESTS = ["body_sha256", "request_head_sha256", "response_head_sha256"];
  const CAPTURE_BODY_KEYS = [
    "schema", "spider", "vendor", "item", "url", "captured_at", "run", "outcome", "final_url",
    "status", "redirects", "headers", "ip_address", "tls_certificate_sha256", "body_sha256",
    "body_length", "request_head_sha256", "response_head_sha256", "text", "error", "mode", "browser",
  ];
  const AXIOM_ID = /^axm_[0-9a-f]{64}$/;
  const codePoints = (s) => [...s].length;
  const sizedString = (v, most) => typeof v === "string" && v !== "" && codePoints(v) <= most;
  const nonNegativeInt = (v) => v instanceof JsonInt && v.big >= 0n;
  function checkCapture(body) {
    const fail = (what) => { throw new CheckFailed("envelope_shape", `envelope.body.${what}`, null, null); };
    if (body.schema !== CAPTURE_SCHEMA) fail(`schema is not '${CAPTURE_SCHEMA}'`);
    const extra = Object.keys(body).filter((k) => !CAPTURE_BODY_KEYS.includes(k));
    if (extra.length) {
      const named = extra.sort(compareCodePoints).map((k) => `'${k}'`).join(", ");
      throw new CheckFailed("envelope_shape", `envelope.body has keys a capture record does not: [${named}]`, null, null);
    }
    for (const name of ["spider", "vendor", "item", "url", "captured_at", "run", "outcome"]) {
      if (typeof body[name] !== "string" || body[name] === "") fail(`${name} is not a non-empty string`);
    }
    if (!AXIOM_ID.test(body.item)) fail("item is not an axiom_id (axm_ and 64 lowercase hex)");
    if (!MICROS.test(body.captured_at)) fail("captured_at is not UTC with microseconds and Z");
    if (!CAPTURE_OUTCOMES.includes(body.outcome)) fail(`outcome is not one of ${CAPTURE_OUTCOMES.join(", ")}`);
    for (const name of ["url", "final_url"]) {
      if (has(body, name) && !sizedString(body[name], CAPTURE_URL_CHARS)) fail(`${name} is not a string of 1 to ${CAPTURE_URL_CHARS} characters`);
    }
    for (const name of ["ip_address", "error"]) {
      if (has(body, name) && (typeof body[name] !== "string" || body[name] === "")) fail(`${name} is not a non-empty string`);
    }
    for (const name of ["status", "body_length"]) {
      if (has(body, name) && !nonNegativeInt(body[name])) fail(`${name} is not an int of at least 0`);
    }
    for (const name of ["tls_certificate_sha256", ...CAPTURE_KEPT_DIGESTS]) {
      if (has(body, name) && (typeof body[name] !== "string" || !HEX64.test(body[name]))) fail(`${name} is not 64 lowercase hex`);
    }
    const redirects = has(body, "redirects") ? body.redirects : ["(absent)"];
    if (!Array.isArray(redirects) || redirects.length === 0 || redirects.length > CAPTURE_MAX_REDIRECTS || !redirects.every((u) => sizedString(u, CAPTURE_URL_CHARS))) {
      fail(`redirects is not a list of 1 to ${CAPTURE_MAX_REDIRECTS} URLs`);
    }
    const headers = has(body, "headers") ? body.headers : { content_type: "(absent)" };
    if (!isObject(headers) || Object.keys(headers).length === 0 || !Object.keys(headers).every((k) => CAPTURE_HEADER_NAMES.includes(k))) {
      fail(`headers is not an object of ${CAPTURE_HEADER_NAMES.join(", ")}`);
    }
    if (!Object.values(headers).every((v) => sizedString(v, CAPTURE_HEADER_CHARS))) {
      fail(`headers holds a value that is not a string of 1 to ${CAPTURE_HEADER_CHARS} characters`);
    }
    if (has(body, "text")) {
      const text = body.text;
      if (!isObject(text) || !sameSet(Object.keys(text), CAPTURE_TEXT_KEYS)) fail("text is not {sha256, length, extractor}");
      if (typeof text.sha256 !== "string" || !HEX64.test(text.sha256)) fail("text.sha256 is not 64 lowercase hex");
      if (!nonNegativeInt(text.length)) fail("text.length is not an int of at least 0");
      if (typeof text.extractor !== "string" || text.extractor === "") fail("text.extractor is not a non-empty string");
    }
    if (has(body, "body_sha256") && !["body_length", "status", "final_url"].every((k) => has(body, k))) {
      fail("body_sha256 names a body without its body_length, status and final_url");
    }
    if ((has(body, "body_length") || has(body, "text")) && !has(body, "body_sha256")) {
      fail("body_length and body.text are those of a kept body (body_sha256)");
    }
    if (has(body, "status") && !has(body, "final_url")) fail("status is a response's: its final_url is missing");
    if (body.outcome === "failed" && !has(body, "error")) {
      throw new CheckFailed("envelope_shape", "a failed capture says why (body.error)", null, null);
    }
    if (body.outcome !== "failed" && !has(body, "status")) {
      throw new CheckFailed("envelope_shape", `a capture ${body.outcome} names the response's status`, null, null);
    }
    // What each outcome says of the response (ledger/records/capture.py): the outcome reported
    // must be one the facts signed beside it allow.
    const status = has(body, "status") ? body.status.big : null;
    if (body.outcome === "removed" && status !== 404n && status !== 410n) {
      throw new CheckFailed("envelope_shape", "a capture removed has the status 404 or 410", null, null);
    }
    if (["first", "edited", "moved", "unchanged"].includes(body.outcome) && !(status >= 200n && status < 300n)) {
      throw new CheckFailed("envelope_shape", `a capture ${body.outcome} has a 2xx status`, null, null);
    }
    if (body.outcome === "moved" && body.final_url === body.url) {
      throw new CheckFailed("envelope_shape", "a capture moved ends at another URL than body.url", null, null);
    }
    checkBrowserCapture(body);
  }

  // A browser capture's `mode` and `browser`, as ledger/records/capture.py browser_problem holds
  // them, rule for rule: absent mode, a plain capture without `browser`; "browser", its facts
  // well-formed, and only a complete or partial capture a version of the page.
  const BROWSER_KEYS = [
    "verdict", "reasons", "twin", "exchanges_sha256", "requests", "refused", "failed", "screenshot",
    "dom", "software", "viewport", "user_agent", "options",
  ];
  const BROWSER_REQUIRED = [
    "verdict", "exchanges_sha256", "requests", "refused", "failed", "software", "viewport",
    "user_agent", "options",
  ];
  const BROWSER_VERDICTS = ["complete", "partial", "blocked", "failed"];
  const BROWSER_USABLE = ["complete", "partial"];
  const BROWSER_MAX_REASONS = 20;
  const BROWSER_TEXT_CHARS = 1024;
  const BROWSER_MAX_OPTIONS = 20;
  const BROWSER_MAX_PIXELS = 1000000n;
  const OPTION_NAME = /^[a-z][a-z0-9_]{0,63}$/;
  const intWithin = (v, low, high) => v instanceof JsonInt && v.big >= low && (high === null || v.big <= high);
  function checkBrowserCapture(body) {
    const fail = (what) => { throw new CheckFailed("envelope_shape", what, null, null); };
    if (!has(body, "mode")) {
      if (has(body, "browser")) fail("body.browser is a browser capture's: body.mode is missing");
      return;
    }
    if (body.mode !== "browser") fail("body.mode is not 'browser'");
    const browser = body.browser;
    if (!isObject(browser)) fail("body.browser is not an object (a browser capture's)");
    if (!Object.keys(browser).every((k) => BROWSER_KEYS.includes(k))) fail("body.browser has keys a browser capture does not");
    for (const name of BROWSER_REQUIRED) if (!has(browser, name)) fail(`body.browser.${name} is missing`);
    if (!BROWSER_VERDICTS.includes(browser.verdict)) fail(`body.browser.verdict is not one of ${BROWSER_VERDICTS.join(", ")}`);
    if (typeof browser.exchanges_sha256 !== "string" || !HEX64.test(browser.exchanges_sha256)) fail("body.browser.exchanges_sha256 is not 64 lowercase hex");
    for (const name of ["requests", "refused", "failed"]) if (!intWithin(browser[name], 0n, null)) fail(`body.browser.${name} is not an int of at least 0`);
    if (browser.refused.big + browser.failed.big > browser.requests.big) fail("body.browser.refused and failed count more than its requests");
    if (has(browser, "twin") && (typeof browser.twin !== "string" || !AXIOM_ID.test(browser.twin))) fail("body.browser.twin is not an axiom_id");
    if (has(browser, "reasons")) {
      const reasons = browser.reasons;
      if (!Array.isArray(reasons) || reasons.length === 0 || reasons.length > BROWSER_MAX_REASONS) fail(`body.browser.reasons is not a list of 1 to ${BROWSER_MAX_REASONS} strings`);
      if (!reasons.every((r) => sizedString(r, BROWSER_TEXT_CHARS))) fail("body.browser.reasons holds one that is not 1 to 1024 characters");
    }
    const shot = has(browser, "screenshot") ? browser.screenshot : null;
    if (shot !== null) {
      if (!isObject(shot) || !sameSet(Object.keys(shot), ["sha256", "width", "height"])) fail("body.browser.screenshot is not {sha256, width, height}");
      if (typeof shot.sha256 !== "string" || !HEX64.test(shot.sha256)) fail("body.browser.screenshot.sha256 is not 64 lowercase hex");
      if (!intWithin(shot.width, 1n, BROWSER_MAX_PIXELS) || !intWithin(shot.height, 1n, BROWSER_MAX_PIXELS)) fail("body.browser.screenshot width and height are not ints of 1 to 1000000");
    }
    const dom = has(browser, "dom") ? browser.dom : null;
    if (dom !== null) {
      if (!isObject(dom) || !sameSet(Object.keys(dom), ["sha256", "length"])) fail("body.browser.dom is not {sha256, length}");
      if (typeof dom.sha256 !== "string" || !HEX64.test(dom.sha256) || !intWithin(dom.length, 0n, null)) fail("body.browser.dom is not a sha256 and a length");
    }
    const software = browser.software;
    if (!isObject(software) || !sameSet(Object.keys(software), ["browser", "driver"])) fail("body.browser.software is not {browser, driver}");
    if (!Object.values(software).every((v) => sizedString(v, BROWSER_TEXT_CHARS))) fail("body.browser.software holds one that is not 1 to 1024 characters");
    const viewport = browser.viewport;
    if (!isObject(viewport) || !sameSet(Object.keys(viewport), ["width", "height"])) fail("body.browser.viewport is not {width, height}");
    if (!Object.values(viewport).every((v) => intWithin(v, 1n, BROWSER_MAX_PIXELS))) fail("body.browser.viewport width and height are not ints of 1 to 1000000");
    if (!sizedString(browser.user_agent, BROWSER_TEXT_CHARS)) fail("body.browser.user_agent is not 1 to 1024 characters");
    const options = browser.options;
    if (!isObject(options) || Object.keys(options).length > BROWSER_MAX_OPTIONS) fail(`body.browser.options is not an object of at most ${BROWSER_MAX_OPTIONS} options`);
    for (const [name, value] of Object.entries(options)) {
      if (!OPTION_NAME.test(name)) fail("body.browser.options has a name that is not lower-case letters, digits and _");
      if (!(typeof value === "boolean" || value instanceof JsonInt || sizedString(value, BROWSER_TEXT_CHARS))) fail(`body.browser.options.${name} is not a boolean, an int or a string`);
    }
    if (browser.verdict === "complete" && has(browser, "reasons")) fail("a complete browser capture gives no reasons");
    if (browser.verdict !== "complete" && !has(browser, "reasons")) fail(`a ${browser.verdict} browser capture says why (body.browser.reasons)`);
    if (!BROWSER_USABLE.includes(browser.verdict) && body.outcome !== "failed") fail(`a ${browser.verdict} browser capture has the outcome failed`);
  }

  // What ties a capture record's envelope to its body (ledger/records/capture.py
  // capture_envelope_problem): the page reported from object and subject is body.url, and the
  // time observed is body.captured_at cut to seconds.
  function checkCaptureEnvelope(env) {
    const url = env.body.url;
    const fail = (what) => { throw new CheckFailed("envelope_shape", what, null, null); };
    if (env.object.primary_source_url !== url) fail("envelope.object.primary_source_url is not body.url");
    if (env.subject.target_id !== "page:" + url) fail("envelope.subject.target_id is not 'page:' and body.url");
    if (env.subject.observed_at !== env.body.captured_at.slice(0, 19) + "Z") fail("envelope.subject.observed_at is not body.captured_at cut to seconds");
  }

  // A coverage record's body, as ledger/records/coverage.py coverage_problem holds it, rule for
  // rule and in the same order; the digest of each listed set is recomputed by
  // checkCoverageDigests (WebCrypto's hash is asynchronous), within the same check.
  const COVERAGE_SCHEMA = "crovia.coverage.v1";
  const COVERAGE_DIGESTED = ["announced", "harvested", "both"];
  const COVERAGE_LISTED = ["rss_only", "oai_only", "deleted"];
  const COVERAGE_SETS = [...COVERAGE_DIGESTED, ...COVERAGE_LISTED];
  const COVERAGE_KEYS = ["schema", "vendor", "category", "day", "computed_at", "rss", "oai", ...COVERAGE_SETS];
  const COVERAGE_RSS_STATES = ["read", "partial", "not_read"];
  const COVERAGE_OAI_STATES = ["complete", "partial", "not_harvested"];
  const COVERAGE_MAX_LISTED = 1000n;
  const COVERAGE_MAX_FETCHES = 50;
  const COVERAGE_CATEGORY = /^[a-z][a-z-]{0,30}(?:\.[A-Za-z][A-Za-z-]{0,30})?$/;
  const COVERAGE_DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
  const ARXIV_PAPER = /^(?:[0-9]{4}\.[0-9]{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?\/[0-9]{7})$/;
  function checkCoverage(body) {
    const fail = (what) => { throw new CheckFailed("envelope_shape", `envelope.${what}`, null, null); };
    if (!isObject(body) || !sameSet(Object.keys(body), COVERAGE_KEYS)) fail(`body is not an object of ${[...COVERAGE_KEYS].sort().join(", ")}`);
    if (body.schema !== COVERAGE_SCHEMA) fail(`body.schema is not '${COVERAGE_SCHEMA}'`);
    if (body.vendor !== "arxiv") fail("body.vendor is not 'arxiv'");
    if (typeof body.category !== "string" || !COVERAGE_CATEGORY.test(body.category)) fail("body.category is not an arXiv category");
    if (typeof body.day !== "string" || !COVERAGE_DAY.test(body.day)) fail("body.day is not a date YYYY-MM-DD");
    if (typeof body.computed_at !== "string" || !MICROS.test(body.computed_at)) fail("body.computed_at is not UTC with microseconds and Z");
    for (const [name, states] of [["rss", COVERAGE_RSS_STATES], ["oai", COVERAGE_OAI_STATES]]) {
      const read = body[name];
      if (!isObject(read) || !sameSet(Object.keys(read), ["state", "fetches"])) fail(`body.${name} is not {state, fetches}`);
      if (!states.includes(read.state)) fail(`body.${name}.state is not one of ${states.join(", ")}`);
      if (!Array.isArray(read.fetches) || read.fetches.length > COVERAGE_MAX_FETCHES) fail(`body.${name}.fetches is not a list of at most ${COVERAGE_MAX_FETCHES} axiom ids`);
      if (!read.fetches.every((f) => typeof f === "string" && AXIOM_ID.test(f))) fail(`body.${name}.fetches holds one that is not an axiom id`);
      if ((read.state === states[0] || read.state === states[1]) !== (read.fetches.length > 0)) fail(`body.${name}.fetches names the records of a read, and none of no read`);
    }
    for (const name of COVERAGE_SETS) {
      const found = body[name];
      const keys = isObject(found) ? Object.keys(found) : [];
      if (COVERAGE_DIGESTED.includes(name) && (!isObject(found) || !sameSet(keys, ["count", "ids_sha256"]))) fail(`body.${name} is not {count, ids_sha256}`);
      if (!isObject(found) || !(sameSet(keys, ["count", "ids_sha256"]) || sameSet(keys, ["count", "ids_sha256", "ids"]))) {
        fail(`body.${name} is not {count, ids_sha256} or {count, ids_sha256, ids}`);
      }
      if (!nonNegativeInt(found.count)) fail(`body.${name}.count is not an int of at least 0`);
      if (typeof found.ids_sha256 !== "string" || !HEX64.test(found.ids_sha256)) fail(`body.${name}.ids_sha256 is not 64 lowercase hex`);
      const listed = COVERAGE_LISTED.includes(name) && found.count.big <= COVERAGE_MAX_LISTED;
      if (listed !== has(found, "ids")) fail(`body.${name}.ids lists the ids of a difference of at most ${COVERAGE_MAX_LISTED}, and only then`);
      if (!listed) continue;
      const ids = found.ids;
      if (!Array.isArray(ids) || !ids.every((i) => typeof i === "string" && ARXIV_PAPER.test(i))) fail(`body.${name}.ids is not a list of arXiv ids`);
      const ordered = ids.every((id, i) => i === 0 || compareCodePoints(ids[i - 1], id) < 0);
      if (!ordered || BigInt(ids.length) !== found.count.big) fail(`body.${name}.ids is not its count of distinct ids in order`);
    }
    const count = Object.fromEntries(COVERAGE_SETS.map((name) => [name, body[name].count.big]));
    if (count.both + count.rss_only !== count.announced) fail("body.both and body.rss_only do not add up to body.announced");
    if (count.both + count.oai_only !== count.harvested) fail("body.both and body.oai_only do not add up to body.harvested");
    if (body.rss.state === "not_read" && count.announced !== 0n) fail("body.announced is empty when the RSS was not read");
    if (body.oai.state === "not_harvested" && (count.harvested !== 0n || count.deleted !== 0n)) {
      fail("body.harvested and body.deleted are empty when OAI-PMH was not harvested");
    }
  }

  // Each listed set's ids_sha256 is the sha256 of the canonical JSON of its ids (a verifier
  // recomputes what a record says of itself). Runs after checkEnvelopeShape, in the same check.
  async function checkCoverageDigests(env) {
    if (env.axiom_type !== "AX.COVERAGE") return;
    for (const name of COVERAGE_SETS) {
      const found = env.body[name];
      if (!has(found, "ids")) continue;
      const computed = toHex(await sha256(canonicalBytes(found.ids)));
      if (computed !== found.ids_sha256) {
        throw new CheckFailed("envelope_shape", `envelope.body.${name}.ids_sha256 is not the digest of its ids`, found.ids_sha256, computed);
      }
    }
  }

  // What ties a coverage record's envelope to its body (ledger/records/coverage.py
  // coverage_envelope_problem): arXiv's list of the category, the category and day, the time.
  function checkCoverageEnvelope(env) {
    const body = env.body;
    const fail = (what) => { throw new CheckFailed("envelope_shape", what, null, null); };
    if (env.object.primary_source_url !== "https://arxiv.org/list/" + body.category) fail("envelope.object.primary_source_url is not arXiv's list of body.category");
    if (env.subject.target_id !== `coverage:arxiv:${body.category}:${body.day}`) fail("envelope.subject.target_id is not 'coverage:arxiv:' body.category ':' body.day");
    if (env.subject.observed_at !== body.computed_at.slice(0, 19) + "Z") fail("envelope.subject.observed_at is not body.computed_at cut to seconds");
  }

  async function checkLeafHash(receipt) {
    const computed = toHex(await sha256(concat(Uint8Array.of(0), canonicalBytes(receipt.envelope))));
    if (receipt.ledger.leaf_hash !== computed) throw new CheckFailed("leaf_hash", "ledger.leaf_hash", plain(receipt.ledger.leaf_hash), computed);
  }

  function treeHeight(count) {
    let h = 0n;
    while (1n << h < count) h++;
    return h;
  }

  async function checkPath(receipt) {
    const proof = receipt.merkle_proof;
    const index = receipt.ledger.leaf_index.big;
    const count = receipt.seal.leaf_count.big;
    const params = {};
    for (const k of Object.keys(MERKLE_PROOF_PARAMS)) params[k] = proof[k];
    if (canonical(params) !== canonical(MERKLE_PROOF_PARAMS)) {
      throw new CheckFailed("merkle_path", "merkle_proof parameters", MERKLE_PROOF_PARAMS, plain(params));
    }
    if (!(index >= 0n && index < count)) throw new CheckFailed("merkle_path", "leaf_index < leaf_count", `< ${count}`, String(index));
    const height = treeHeight(count);
    const path = proof.path;
    if (BigInt(path.length) !== height) {
      throw new CheckFailed("merkle_path", "path length = ceil(log2 leaf_count)", String(height), path.length);
    }
    // duplicate_last: where the path's node is the last of a level of odd node count, the tree
    // pairs it with itself, so its sibling there is the node itself (ledger/merkle.py
    // duplicated_levels); another hash would commit to more leaves than leaf_count.
    const last = count - 1n;
    let node = fromHex(receipt.ledger.leaf_hash);
    for (let level = 0; level < path.length; level++) {
      const step = path[level];
      const side = (index >> BigInt(level)) & 1n ? "left" : "right";
      if (!isObject(step) || !sameSet(Object.keys(step), ["sibling", "side"])) {
        throw new CheckFailed("merkle_path", `path[${level}] shape`, "{sibling, side}", plain(step));
      }
      if (step.side !== side) throw new CheckFailed("merkle_path", `path[${level}].side = bit ${level} of leaf_index`, side, plain(step.side));
      if (typeof step.sibling !== "string" || !HEX64.test(step.sibling)) {
        throw new CheckFailed("merkle_path", `path[${level}].sibling is 64 hex`, "64 hex", plain(step.sibling));
      }
      const at = index >> BigInt(level);
      if (at === last >> BigInt(level) && (at & 1n) === 0n && step.sibling !== toHex(node)) {
        throw new CheckFailed("merkle_path", `path[${level}].sibling is the node itself: node ${at} is the last of an odd level of a tree of ${count} leaves (duplicate_last)`, toHex(node), step.sibling);
      }
      const sibling = fromHex(step.sibling);
      node = await sha256(side === "left" ? concat(Uint8Array.of(1), sibling, node) : concat(Uint8Array.of(1), node, sibling));
    }
    const computed = toHex(node);
    if (computed !== receipt.seal.merkle_root) {
      throw new CheckFailed("merkle_root", "path does not lead to seal.merkle_root", plain(receipt.seal.merkle_root), computed);
    }
  }

  // Returns false when the anchor is the reference system's placeholder (not compared).
  function checkAnchor(receipt) {
    const [chain, height] = firstAnchor(receipt.envelope);
    if (LEGACY_ANCHOR_CHAINS.includes(chain)) return false;
    if (chain !== ANCHOR_CHAIN) throw new CheckFailed("anchor", "envelope.anchors[0].chain", ANCHOR_CHAIN, chain);
    if (height !== receipt.ledger.leaf_index.big) {
      throw new CheckFailed("anchor", "envelope.anchors[0].height is the leaf index", plain(receipt.ledger.leaf_index), String(height));
    }
    return true;
  }

  async function checkSealSignature(seal) {
    if (seal.sig_algorithm !== "ed25519" || !HEX128.test(seal.signature)) {
      throw new CheckFailed("seal_signature", "seal signature is not ed25519 hex", "ed25519", plain(seal.sig_algorithm));
    }
    const message = canonicalBytes(without(seal, ["signature", "sig_algorithm"]));
    if (!(await ed25519Verify(seal.public_key_hex, seal.signature, message))) {
      throw new CheckFailed("seal_signature", "seal signature does not verify under seal.public_key_hex", "valid ed25519 signature", seal.signature);
    }
    const computed = await keyIdOf(seal.public_key_hex);
    if (seal.key_id !== computed) throw new CheckFailed("key_id", "seal.key_id", plain(seal.key_id), computed);
  }

  function checkTrustRoot(receipt) {
    const trust = receipt.trust_root;
    const seal = receipt.seal;
    for (const [name, sealName] of [["public_key_hex", "public_key_hex"], ["key_id", "key_id"], ["signature_algorithm", "sig_algorithm"]]) {
      if (canonical(trust[name]) !== canonical(seal[sealName])) {
        throw new CheckFailed("trust_root", `trust_root.${name} names another key than the seal's`, plain(seal[sealName]), plain(trust[name]));
      }
    }
  }

  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  // The bytes must be exactly the canonical JSON of what they parse to (ledger/receipt/receipt_bytes.py).
  // One final "\n" or "\r\n" (what editors add on saving) lies outside the value and is read past,
  // as ledger/receipt/receipt_bytes.py does; any other byte after the closing brace is refused.
  function withoutFinalNewline(bytes) {
    const n = bytes.length;
    if (n >= 2 && bytes[n - 2] === 0x0d && bytes[n - 1] === 0x0a) return bytes.subarray(0, n - 2);
    if (n >= 1 && bytes[n - 1] === 0x0a) return bytes.subarray(0, n - 1);
    return bytes;
  }

  function checkCanonicalBytes(given) {
    if (given.length > 16 * 1024 * 1024) throw new CheckFailed("canonical_bytes", "larger than 16 MiB");
    const bytes = withoutFinalNewline(given);
    let text;
    try {
      text = decoder.decode(bytes);
    } catch (_) {
      throw new CheckFailed("canonical_bytes", "the receipt is not valid UTF-8");
    }
    const value = parseJson(text);
    const again = canonicalBytes(value);
    if (!sameBytes(again, bytes)) {
      throw new CheckFailed("canonical_bytes", "the bytes are not the canonical JSON of the receipt (whitespace, key order, an escape, or bytes after the closing brace but one final newline)",
        `${again.length} canonical bytes`, `${bytes.length} bytes given`);
    }
    return value;
  }

  // Runs every check, in the order of docs/format.md "One verdict"; returns {verdict, checks:
  // [{name, ok, message, expected, computed}], failed, receipt, key, previous, stamps}.
  // `verdict` is "valid" (every check passed and the key is trusted), "unpinned" (every check
  // passed but `pinned_key`), "invalid" (`failed` names the first failed check) or "unsupported".
  // `pin` is the site's trust root ({public_key_hex, key_id, key_rotations, tsa_roots}) or null;
  // `options.headers` are 80-byte Bitcoin block headers (Uint8Array) the user gave.
  async function verifyReceiptBytes(bytes, pin, options = {}) {
    const checks = [];
    const report = { verdict: "invalid", checks, failed: null, receipt: null, key: "unpinned", previous: null, stamps: null };
    if (!(await ed25519Supported())) {
      report.verdict = "unsupported";
      return report;
    }
    const trust = trustOf(pin);
    const stampChecker = root.CroviaStamps;
    let receipt = null;
    let chain = null;
    let knownKeys = [];
    const steps = [
      ["canonical_bytes", () => { receipt = checkCanonicalBytes(bytes); }],
      ["receipt_shape", () => checkShape(receipt)],
      ["key_chain", async () => { chain = await keyChain(receipt); }],
      ["axiom_id", () => checkAxiomId(receipt)],
      ["verifier_url", () => checkVerifierUrl(receipt)],
      ["envelope_signature", () => checkEnvelopeSignature(receipt.envelope, keyForLeaf(chain, receipt.ledger.leaf_index.big))],
      ["envelope_shape", async () => { checkEnvelopeShape(receipt.envelope); await checkCoverageDigests(receipt.envelope); }],
      ["leaf_hash", () => checkLeafHash(receipt)],
      ["merkle_path", () => checkPath(receipt)],
      ["anchor", () => checkAnchor(receipt)],
      ["seal_signature", () => checkSealSignature(receipt.seal)],
      ["trust_root", () => checkTrustRoot(receipt)],
      ["stamps", async () => {
        if (!stampChecker) {
          report.stamps = { unavailable: true, rfc3161: [], opentimestamps: { status: plain(receipt.bitcoin_anchor.status), checked: false } };
          return;
        }
        report.stamps = await stampChecker.checkStamps(receipt, { tsaRoots: trust ? trust.tsa_roots : [], headers: options.headers || [] });
      }],
      ["known_chain", async () => { knownKeys = await knownChain(trust, chain, receipt.seal); }],
    ];
    for (const [name, run] of steps) {
      try {
        const ran = await run();
        if (name === "key_chain") continue; // reported as key_rotation below, as crovia verify does
        if (name === "anchor" && ran === false) continue; // the reference system's placeholder
        if (name === "stamps") {
          for (const stamp of report.stamps.checks || []) checks.push({ name: stamp, ok: true });
          continue;
        }
        if (name === "known_chain") {
          // A record in both the receipt's key_rotations and the site's trust root is one record.
          const followed = new Set([...chain.records, ...(trust ? trust.records : [])].map(canonical)).size;
          if (followed) checks.push({ name: "key_rotation", ok: true, message: `${followed} rotation record(s) checked` });
          continue;
        }
        checks.push({ name, ok: true });
      } catch (err) {
        if (!(err instanceof CheckFailed)) throw err;
        checks.push({ name: err.check, ok: false, message: err.message, expected: err.expected, computed: err.computed });
        report.failed = err.check;
        report.receipt = receipt;
        return report;
      }
    }
    report.receipt = receipt;
    const sealKey = receipt.seal.public_key_hex;
    const trusted = trustedBy(trust, knownKeys, chain, sealKey);
    if (trusted) {
      report.verdict = "valid";
      report.key = trusted.how;
      report.previous = trusted.record;
      checks.push({ name: "pinned_key", ok: true, message: trusted.how === "site" ? "signed by this site's key" : "signed by a key of this site's rotation chain" });
      return report;
    }
    report.verdict = "unpinned";
    report.failed = "pinned_key";
    report.key = trust ? "other" : "unpinned";
    checks.push({
      name: "pinned_key",
      ok: false,
      message: trust ? "signed by another key than this site's: not vouched for by this site" : "no key is pinned: not vouched for by this site",
      expected: trust ? trust.public_key_hex : null,
      computed: sealKey,
    });
    return report;
  }

  root.CroviaVerify = {
    CheckFailed,
    Unsupported,
    JsonInt,
    parseJson,
    canonical,
    canonicalBytes,
    compareCodePoints,
    sameBytes,
    sha256,
    concat,
    toHex,
    fromHex,
    ed25519Supported,
    ed25519Verify,
    verifyReceiptBytes,
    without,
    num,
    plain,
    constants: {
      HEX64,
      HEX128,
      SIGNATURE_PREFIX,
      ENVELOPE_SCHEMA,
      AXIOM_TYPE,
      ANCHOR_CHAIN,
      RECEIPT_SCHEMA,
      CANONICALIZATION,
      MERKLE_PROOF_PARAMS,
    },
  };
})(globalThis);
