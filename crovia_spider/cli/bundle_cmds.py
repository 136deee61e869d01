"""`crovia bundle`: an evidence bundle per incident, checked whole offline by `crovia verify
--bundle` (docs/watching.md, "Evidence bundles").

`crovia bundle AXIOM_ID... --out case.zip` writes one zip holding, for the records named and the
records they involve (a capture's item; an item's captures of its page):
- `receipts/<axiom_id>.json`: each record's receipt (crovia.axiom_proof.v1, as `crovia prove`);
- `bodies/<sha256>`: every kept blob the records name (page bodies, request and response heads,
  main texts, feed bodies), the exact bytes their digests sign;
- `captures.wacz`: a WACZ of the capture records involved that have a response, made by `crovia
  export --wacz`'s own code (crovia_spider/archive/wacz.py: the WARC, its index and pages, each
  capture's receipt and tlog proof, the trust root);
- `trust_root.json` (the key, its signed rotations, the TSA roots of $CROVIA_TSA_ROOTS) and
  `rotations.json`;
- `tsa_roots/<sha256 of the DER>.pem`: each root certificate of $CROVIA_TSA_ROOTS that an RFC 3161
  stamp of an involved seal chains to (a stamp that chains to none of them is refused);
- `summary.html`: one page for people, what was seen when, each claim beside the record that
  proves it and how to check it, every string from a page escaped, no script;
- `manifest.json`: what the bundle holds, and the sha256 of every other file; `manifest.sha256`
  the sha256 of the manifest.
`crovia verify --bundle case.zip` checks it from the zip alone, nothing else read: each blob
against its name, each receipt pinned to the bundle's trust root, its stamps chained to the
bundle's TSA roots (tsa_roots/, and those only), each blob a record names present, the WACZ
(a zip whose datapackage.json lists each of its files under its sha256 and size, and whose
receipts are the bundle's), the summary as the evidence says it, every file against the
manifest; the first file that fails is named (exit 1). Pin the key you trust with --pubkey (or
--key-id) beside it: the trust root and the TSA roots inside a bundle are the bundle maker's word.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import io
import json
import re
import struct
import zipfile
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from crovia_spider.cli.ledger_args import ledger_dir, print_json, printable, require_ledger

SCHEMA = "crovia.bundle.v1"
MANIFEST = "manifest.json"
MANIFEST_DIGEST = "manifest.sha256"
MAX_ENTRIES = 10_000
MAX_FILE = 64 << 20  # bytes of one file of a bundle, uncompressed
MAX_TOTAL = 1 << 30  # and of all of them
_NAME = re.compile(
    r"manifest\.json|manifest\.sha256|summary\.html|trust_root\.json|rotations\.json|"
    r"receipts/axm_[0-9a-f]{64}\.json|bodies/[0-9a-f]{64}|captures\.wacz|"
    r"tsa_roots/[0-9a-f]{64}\.pem"
)
WACZ = "captures.wacz"
_PEM_NAME = re.compile(r"tsa_roots/([0-9a-f]{64})\.pem")
_EPOCH = (1980, 1, 1, 0, 0, 0)  # every entry's time: the same case makes the same zip


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `bundle`."""
    parser = subparsers.add_parser(
        "bundle",
        help="one zip of an incident's records, receipts, kept bodies and trust root",
        description="Write the receipts of AXIOM_IDs and of the records they involve (a"
        " capture's item, an item's captures), every kept body, head and text they name, a WACZ"
        " of the captures, the trust root with its rotations, the TSA root certificates of"
        " $CROVIA_TSA_ROOTS their seals' stamps chain to, a one-page summary and a manifest,"
        " into one zip that"
        " `crovia verify --bundle` checks offline from the zip alone.",
    )
    parser.add_argument("axiom_ids", nargs="+", metavar="AXIOM_ID")
    parser.add_argument("--out", type=Path, required=True, help="the zip to write")
    ledger_dir(parser)
    parser.set_defaults(handler=cmd_bundle)


def cmd_bundle(args: argparse.Namespace) -> int:
    require_ledger(args.ledger_dir)
    files = build(args.ledger_dir, args.axiom_ids)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            archive.writestr(zipfile.ZipInfo(name, _EPOCH), files[name], zipfile.ZIP_DEFLATED)
    args.out.write_bytes(buffer.getvalue())
    receipts = sum(1 for name in files if name.startswith("receipts/"))
    bodies = sum(1 for name in files if name.startswith("bodies/"))
    roots = sum(1 for name in files if name.startswith("tsa_roots/"))
    wacz = ", a WACZ of the captures" if WACZ in files else ""
    print(
        f"{args.out}: {receipts} receipts, {bodies} kept bodies{wacz}, {roots} TSA roots,"
        " trust root, summary"
    )
    print(f"check it anywhere: crovia verify --bundle {args.out}")
    return 0


def build(directory: Path, axiom_ids: list[str]) -> dict[str, bytes]:
    """The files of the bundle of `axiom_ids` (module docstring), by name."""
    from crovia_spider.archive.wacz import trust_files
    from ledger.canonical import canonical_json
    from ledger.store import BodyStore, Ledger

    files: dict[str, bytes] = {}
    with Ledger.open(directory) as reader:
        chosen = _involved(reader, axiom_ids)
        receipts = {axiom_id: reader.receipt(axiom_id) for axiom_id in chosen}
        store = BodyStore(directory)
        wacz = _wacz(reader, store, receipts)
        # trust_root.json and rotations.json as the WACZ and `crovia publish` hold them: the
        # note verifier key under the origin of the ledger's checkpoints
        files.update((name.rsplit("/", 1)[-1], data) for name, data in trust_files(reader))
    if wacz is not None:
        files[WACZ] = wacz
    files.update(tsa_root_files(receipts))
    for axiom_id, receipt in receipts.items():
        files[f"receipts/{axiom_id}.json"] = canonical_json(receipt)
        for digest in blobs_of(receipt["envelope"]):
            files[f"bodies/{digest}"] = store.get(digest)
    files["summary.html"] = summary(receipts, sorted(files))
    files[MANIFEST] = manifest(axiom_ids, receipts, files)
    files[MANIFEST_DIGEST] = (hashlib.sha256(files[MANIFEST]).hexdigest() + "\n").encode()
    return files


def replayable(envelope: dict[str, Any]) -> bool:
    """A capture record a WACZ replays: one with a response (crovia_spider/archive/warc.py)."""
    body = envelope.get("body") or {}
    return (
        envelope.get("axiom_type") == "AX.CAPTURE"
        and "status" in body
        and "response_head_sha256" in body
    )


def _wacz(reader: Any, store: Any, receipts: dict[str, Any]) -> bytes | None:
    """The WACZ of the capture records among `receipts`, as `crovia export --wacz` writes it;
    None when none of them has a response to replay."""
    from crovia_spider.archive.wacz import evidence, write_wacz
    from crovia_spider.archive.warc import warcinfo
    from crovia_spider.cli.export_cmds import DESCRIPTION

    ordered = sorted(receipts.values(), key=lambda r: r["ledger"]["leaf_index"])
    captures = [r["envelope"] for r in ordered if r["envelope"].get("axiom_type") == "AX.CAPTURE"]
    if not any(replayable(e) for e in captures):
        return None
    out = io.BytesIO()
    title = f"crovia bundle: {len(captures)} captures"
    write_wacz(
        out, captures, store, evidence(reader, captures), info=warcinfo(DESCRIPTION),
        title=title, description=DESCRIPTION,
    )  # fmt: skip
    return out.getvalue()


def _stamp_tokens(receipt: dict[str, Any]) -> list[tuple[str, bytes]]:
    """(TSA URL, token DER) of each RFC 3161 stamp of a receipt's seal."""
    import base64
    import binascii

    tokens = []
    for entry in receipt.get("rfc3161_timestamps") or ():
        try:
            tokens.append((str(entry["tsa_url"]), base64.b64decode(entry["token_base64"])))
        except (KeyError, TypeError, binascii.Error):
            continue  # not a stamp: the receipt's own check says so
    return tokens


def tsa_root_files(receipts: dict[str, Any]) -> dict[str, bytes]:
    """`tsa_roots/<sha256 of the DER>.pem` of each root of $CROVIA_TSA_ROOTS that a stamp of a
    seal of `receipts` chains to. Raises LedgerError for a stamp that chains to none of them
    while some are set (verify would refuse it), and when none is set returns none."""
    from crovia_spider.config.trust_roots import tsa_root_pems
    from ledger.exceptions import LedgerError

    pems = tsa_root_pems()
    stamped = [(r, t) for r in receipts.values() for t in _stamp_tokens(r)]
    if not pems or not stamped:
        return {}
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    from ledger.exceptions import Rfc3161Invalid
    from ledger.stamps import stamped_bytes
    from ledger.stamps.tst import check_token

    roots = [x509.load_pem_x509_certificate(pem.encode("ascii")) for pem in pems]
    # Every receipt is bound to the newest seal covering it: most share one seal, and so its
    # stamps. Each (seal, stamp) is chained once, not once per receipt.
    unique = {(stamped_bytes(r["seal"]), token): (url, r) for r, (url, token) in stamped}
    out: dict[str, bytes] = {}
    for (data, token), (url, receipt) in unique.items():
        chained = []
        for root in roots:
            try:
                check_token(token, data, [root])
            except Rfc3161Invalid:
                continue
            chained.append(root)
        if not chained:
            raise LedgerError(
                f"the RFC 3161 stamp from {url} of the seal of leaf"
                f" {receipt['seal'].get('leaf_count')} chains to none of CROVIA_TSA_ROOTS: set"
                " the root it chains to"
            )
        for root in chained:
            der = root.public_bytes(Encoding.DER)
            out[f"tsa_roots/{hashlib.sha256(der).hexdigest()}.pem"] = root.public_bytes(
                Encoding.PEM
            )
    return out


def _involved(reader: Any, axiom_ids: list[str]) -> list[str]:
    """`axiom_ids` and the records they involve, each once: a capture's item, an item's page
    captures (UnknownAxiom for an id the ledger does not hold)."""
    from ledger.store import page_history

    found = dict.fromkeys(axiom_ids)
    for axiom_id in axiom_ids:
        envelope = reader.envelope_of(axiom_id)
        if envelope.get("axiom_type") == "AX.CAPTURE":
            found[reader.envelope_of(envelope["body"]["item"])["axiom_id"]] = None
        elif envelope.get("axiom_type") == "AX.OBS":
            identity = (envelope.get("object") or {}).get("identity")
            if isinstance(identity, dict):
                for capture in page_history(reader.directory, identity).captures:
                    found[capture.axiom_id] = None
    return list(found)


def blobs_of(envelope: dict[str, Any]) -> list[str]:
    """The digests of the kept blobs a record names: a capture's body, heads and main text, an
    item's feed body, a fetch record's body."""
    body = envelope.get("body") or {}
    out: list[str] = []
    if envelope.get("axiom_type") == "AX.CAPTURE":
        out += [
            body[k]
            for k in ("body_sha256", "request_head_sha256", "response_head_sha256")
            if k in body
        ]
        if isinstance(body.get("text"), dict):
            out.append(body["text"]["sha256"])
    elif envelope.get("axiom_type") == "AX.FETCH" and body.get("body_sha256"):
        out.append(body["body_sha256"])
    else:
        fetch = (envelope.get("object") or {}).get("fetch") or {}
        if fetch.get("body_sha256"):
            out.append(fetch["body_sha256"])
    return [d for d in out if isinstance(d, str) and re.fullmatch(r"[0-9a-f]{64}", d)]


def summary(receipts: dict[str, dict[str, Any]], names: list[str] = ()) -> bytes:
    """The one page for people: each record, oldest first, what it says beside its receipt and
    its kept files, and how to check the bundle. Made only of the receipts and the bundle's file
    `names` (it names the WACZ and the TSA roots it holds): `verify --bundle` makes it again and
    compares. Text only: every string from a record is escaped, the page loads and runs
    nothing."""
    e = html.escape
    rows = []
    ordered = sorted(receipts.values(), key=lambda r: r["ledger"]["leaf_index"])
    for receipt in ordered:
        envelope = receipt["envelope"]
        body = envelope.get("body") or {}
        when = (
            body.get("captured_at")
            or body.get("fetched_at")
            or envelope["subject"].get("observed_at", "")
        )
        if envelope["axiom_type"] == "AX.CAPTURE":
            status = body.get("status", "-")
            what = f"capture of {body.get('url')}: {body.get('outcome')}, HTTP {status}"
        elif envelope["axiom_type"] == "AX.FETCH":
            what = f"fetch of {body.get('feed_url')}: {body.get('outcome')}"
        else:
            what = (
                f"item {body.get('title')!s} ({(body.get('spider_record') or {}).get('url', '')})"
            )
        kept = ", ".join(f"bodies/{d}" for d in blobs_of(envelope)) or "none"
        rows.append(
            f"<tr><td>{e(str(when))}</td><td>{e(envelope['axiom_type'])}</td><td>{e(what)}</td>"
            f"<td>receipts/{e(envelope['axiom_id'])}.json (leaf"
            f" {receipt['ledger']['leaf_index']})</td><td>{e(kept)}</td></tr>"
        )
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\';'
        " style-src 'unsafe-inline'\"><title>Evidence bundle</title>"
        "<style>body{font:15px/1.4 system-ui,sans-serif;margin:1.5em}td{border-top:1px solid #ccc;"
        "padding:4px 8px;vertical-align:top;word-break:break-all}</style></head><body>"
        "<h1>Evidence bundle</h1><p>What was seen when, each claim beside the signed record that"
        " proves it. Check it with nothing but this zip: <code>crovia verify --bundle"
        " FILE.zip --pubkey HEX</code> (the key you trust), or open each receipt in the verifier"
        " page.</p><table><tr><th>when</th><th>record</th><th>what it says</th><th>proof</th>"
        f"<th>kept files</th></tr>{''.join(rows)}</table>{_also(names)}</body></html>\n"
    )
    return page.encode("utf-8", "replace")


def _also(names: list[str]) -> str:
    """The summary's lines on the WACZ and the TSA roots of the bundle."""
    e = html.escape
    out = ""
    if WACZ in names:
        out += (
            f"<p>The captured pages as a web archive: {WACZ} (open it in a WACZ player such as"
            " ReplayWeb.page; <code>wacz validate -f</code> checks it).</p>"
        )
    roots = [name for name in names if _PEM_NAME.fullmatch(name)]
    if roots:
        out += (
            "<p>The RFC 3161 stamps of these records' seals chain to the TSA root certificates "
            f"{e(', '.join(roots))}; <code>crovia verify --bundle</code> checks them against"
            " those alone.</p>"
        )
    return out


def manifest(requested: list[str], receipts: dict[str, Any], files: dict[str, bytes]) -> bytes:
    records = [
        {
            "axiom_id": axiom_id,
            "axiom_type": receipt["envelope"]["axiom_type"],
            "leaf_index": receipt["ledger"]["leaf_index"],
            "receipt": f"receipts/{axiom_id}.json",
            "bodies": [f"bodies/{d}" for d in blobs_of(receipt["envelope"])],
        }
        for axiom_id, receipt in sorted(
            receipts.items(), key=lambda kv: kv[1]["ledger"]["leaf_index"]
        )
    ]
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}
    document = {
        "schema": SCHEMA,
        "requested": requested,
        "records": records,
        "wacz": WACZ if WACZ in files else None,
        "tsa_roots": sorted(name for name in files if _PEM_NAME.fullmatch(name)),
        "files": digests,
    }
    return (json.dumps(document, indent=1, sort_keys=True) + "\n").encode()


class BundleInvalid(Exception):
    """A bundle that does not hold: `file` names the file, the message says why."""

    def __init__(self, file: str, why: str) -> None:
        super().__init__(f"{file}: {why}")
        self.file = file


# What zipfile raises for a damaged or hostile archive (a bad header, a method it lacks, an
# encrypted member, a stream that ends or inflates wrong).
_ZIP_ERRORS = (
    OSError, zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, ValueError,
    EOFError, struct.error, OverflowError, UnicodeDecodeError,
)  # fmt: skip


def read_bundle(path: Path | bytes) -> dict[str, bytes]:
    """The files of the zip at `path` (or in these bytes), read within bounds; BundleInvalid
    for a name outside the layout, too many entries, a file too large, or a zip that cannot be
    read."""
    return read_zip(path, "the zip" if isinstance(path, bytes) else str(path), _NAME)


def read_zip(path: Path | bytes, where: str, names: re.Pattern[str] | None) -> dict[str, bytes]:
    """`read_bundle` of any zip, its names held to `names` when given (and never twice)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(path) if isinstance(path, bytes) else path)
    except _ZIP_ERRORS as exc:
        raise BundleInvalid(where, f"not a zip that can be read ({exc})") from None
    files: dict[str, bytes] = {}
    total = 0
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise BundleInvalid(where, f"{len(infos)} entries, more than {MAX_ENTRIES}")
        for info in infos:
            allowed = names is None or names.fullmatch(info.filename)
            if not allowed or info.filename in files:
                raise BundleInvalid(info.filename, "not a file a bundle holds (or twice)")
            if info.file_size > MAX_FILE or total + info.file_size > MAX_TOTAL:
                raise BundleInvalid(info.filename, "larger than a bundle's files may be")
            try:
                with archive.open(info) as member:
                    data = member.read(MAX_FILE + 1)
            except _ZIP_ERRORS as exc:
                raise BundleInvalid(info.filename, f"cannot be read from the zip ({exc})") from None
            if len(data) > MAX_FILE:
                raise BundleInvalid(info.filename, "larger than a bundle's files may be")
            total += len(data)
            files[info.filename] = data
    return files


def verify_bundle(path: Path | bytes, pubkey: str | None, key_id: str | None) -> dict[str, Any]:
    """Check the bundle at `path` whole (module docstring); BundleInvalid naming the first file
    that fails. Returns what it vouches for.

    The manifest is checked first against `manifest.sha256`, then every other file against the
    manifest, so one changed byte anywhere names its file; then what the files say is checked
    for itself: each blob against its name, each receipt pinned, each blob a record names
    present, the summary as the records say it."""
    from ledger.exceptions import LedgerError, VerificationError
    from ledger.keys import parse_trust_root
    from ledger.receipt import verify_receipt_bytes

    files = read_bundle(path)
    listed = _checked_manifest(files)
    for name, data in sorted(files.items()):
        if name in (MANIFEST, MANIFEST_DIGEST):
            continue
        if name not in listed:
            raise BundleInvalid(name, "not listed in manifest.json")
        if listed[name] != hashlib.sha256(data).hexdigest():
            raise BundleInvalid(name, "its bytes are not the ones manifest.json lists")
    for name in listed:
        if name not in files:
            raise BundleInvalid(name, "listed in manifest.json but missing")
    for name in ("trust_root.json", "rotations.json", "summary.html"):
        if name not in files:
            raise BundleInvalid(name, "missing")
    for name, data in files.items():
        if name.startswith("bodies/") and hashlib.sha256(data).hexdigest() != name[7:]:
            raise BundleInvalid(name, "holds other bytes than its digest names")
    try:
        trust = parse_trust_root(files["trust_root.json"], "trust_root.json")
    except LedgerError as exc:
        raise BundleInvalid("trust_root.json", str(exc)) from None
    try:
        rotations = json.loads(files["rotations.json"])
        if not isinstance(rotations, list) or not all(isinstance(r, dict) for r in rotations):
            raise ValueError("not a list of rotation records")
    except (ValueError, RecursionError) as exc:
        raise BundleInvalid("rotations.json", f"not JSON rotations ({exc})") from None
    roots = _tsa_roots(files)
    # The stamps are chained to the bundle's TSA roots alone (tsa_roots/), not to the trust
    # root's list; a key pinned by hand takes the trust root's place as the pin, its rotation
    # records still followed.
    pin: dict[str, Any] = {"trust_root": replace(trust, tsa_roots=())}
    if pubkey is not None or key_id is not None:
        pin = {"pubkey_hex": pubkey, "key_id": key_id}
        rotations = [*trust.key_rotations, *rotations]
    receipts: dict[str, Any] = {}
    for name, data in sorted(files.items()):
        if not name.startswith("receipts/"):
            continue
        try:
            verdict = verify_receipt_bytes(data, tsa_roots=roots, known_rotations=rotations, **pin)
        except VerificationError as exc:
            raise BundleInvalid(name, f"invalid receipt: {exc}") from None
        if verdict.verdict != "valid" or f"receipts/{verdict.axiom_id}.json" != name:
            raise BundleInvalid(name, f"not valid under the pinned key ({verdict.verdict})")
        receipts[verdict.axiom_id] = json.loads(data)
    if not receipts:
        raise BundleInvalid("receipts/", "no receipt")
    for axiom_id, receipt in receipts.items():
        for digest in blobs_of(receipt["envelope"]):
            if f"bodies/{digest}" not in files:
                raise BundleInvalid(f"bodies/{digest}", f"missing (named by {axiom_id})")
    _check_wacz_present(files, receipts)
    if files["summary.html"] != summary(receipts, sorted(files)):
        raise BundleInvalid("summary.html", "is not what the records say")
    return {
        "receipts": len(receipts),
        "files": len(files),
        "key": trust.public_key_hex if "trust_root" in pin else (pubkey or key_id),
        "wacz": WACZ in files,
        "tsa_roots": len(roots),
    }


def _tsa_roots(files: dict[str, bytes]) -> list[Any]:
    """The certificates of the bundle's tsa_roots/*.pem: each one PEM certificate whose DER's
    sha256 is its name."""
    names = [name for name in sorted(files) if _PEM_NAME.fullmatch(name)]
    if not names:
        return []
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    roots = []
    for name in names:
        try:
            (root,) = x509.load_pem_x509_certificates(files[name])
        except ValueError as exc:
            raise BundleInvalid(name, f"not one PEM certificate ({exc})") from None
        digest = hashlib.sha256(root.public_bytes(Encoding.DER)).hexdigest()
        if _PEM_NAME.fullmatch(name).group(1) != digest:  # type: ignore[union-attr]
            raise BundleInvalid(name, f"holds the certificate of sha256 {digest}, not its name's")
        roots.append(root)
    return roots


def _check_wacz_present(files: dict[str, bytes], receipts: dict[str, Any]) -> None:
    """A WACZ exactly when a capture record has a response, and then `check_wacz`."""
    captures = {
        axiom_id: receipt
        for axiom_id, receipt in receipts.items()
        if receipt["envelope"].get("axiom_type") == "AX.CAPTURE"
    }
    wanted = any(replayable(r["envelope"]) for r in captures.values())
    if wanted and WACZ not in files:
        raise BundleInvalid(WACZ, "missing: the bundle holds captures with a response")
    if WACZ in files:
        if not wanted:
            raise BundleInvalid(WACZ, "a WACZ of no capture with a response")
        check_wacz(files[WACZ], {a: files[f"receipts/{a}.json"] for a in captures})


def check_wacz(data: bytes, receipts: dict[str, bytes]) -> None:
    """The checks of `wacz validate` that need no network, in memory and bounded: a zip whose
    datapackage.json lists every other file under its sha256 and size (and no file it lacks),
    whose datapackage-digest.json names datapackage.json's sha256, with a WARC in archive/, an
    index in indexes/ and pages/pages.jsonl; its crovia/<axiom_id>.json receipts are exactly the
    bundle's receipts of the captures (`receipts`, their bytes), so the WACZ is of this case.
    BundleInvalid naming captures.wacz and saying why."""
    from crovia_spider.archive.wacz import EVIDENCE_DIR

    def bad(why: str) -> BundleInvalid:
        return BundleInvalid(WACZ, why)

    try:
        inner = read_zip(data, WACZ, None)
    except BundleInvalid as exc:
        raise bad(str(exc).split(": ", 1)[-1]) from None
    for name in ("datapackage.json", "datapackage-digest.json", "pages/pages.jsonl"):
        if name not in inner:
            raise bad(f"holds no {name}")
    try:
        package = json.loads(inner["datapackage.json"])
        listed = {r["path"]: (r["hash"], r["bytes"]) for r in package["resources"]}
        digest = json.loads(inner["datapackage-digest.json"])["hash"]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise bad(
            f"its datapackage.json or datapackage-digest.json cannot be read ({exc!r})"
        ) from None
    if digest != "sha256:" + hashlib.sha256(inner["datapackage.json"]).hexdigest():
        raise bad("datapackage-digest.json does not name datapackage.json's sha256")
    for name, content in sorted(inner.items()):
        if name in ("datapackage.json", "datapackage-digest.json"):
            continue
        if name not in listed:
            raise bad(f"{printable(name)} is not listed in its datapackage.json")
        if listed[name] != ("sha256:" + hashlib.sha256(content).hexdigest(), len(content)):
            raise bad(f"{printable(name)} is not the file its datapackage.json lists")
    for name in listed:
        if name not in inner:
            raise bad(f"{printable(str(name))} is listed in its datapackage.json but missing")
    if not any(re.fullmatch(r"archive/[^/]+\.warc(\.gz)?", n) for n in inner):
        raise bad("holds no WARC in archive/")
    if not any(n.startswith("indexes/") for n in inner):
        raise bad("holds no index in indexes/")
    held = {
        n[len(EVIDENCE_DIR) + 1 : -5]: content
        for n, content in inner.items()
        if re.fullmatch(EVIDENCE_DIR + r"/axm_[0-9a-f]{64}\.json", n)
    }
    if held != receipts:
        raise bad("its receipts are not those of the bundle's captures")


def _checked_manifest(files: dict[str, bytes]) -> dict[str, str]:
    """The manifest's file digests, once manifest.json is the file manifest.sha256 names (the
    one of the two that changed is named)."""
    for name in (MANIFEST, MANIFEST_DIGEST):
        if name not in files:
            raise BundleInvalid(name, "missing")
    digest = files[MANIFEST_DIGEST].decode("ascii", "replace").strip()
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise BundleInvalid(MANIFEST_DIGEST, "is not a sha256 (64 lowercase hex)")
    try:
        listed = json.loads(files[MANIFEST])["files"]
        if not isinstance(listed, dict):
            raise TypeError("files is not an object")
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise BundleInvalid(MANIFEST, f"not a bundle manifest ({exc})") from None
    if hashlib.sha256(files[MANIFEST]).hexdigest() != digest:
        agrees = all(
            listed.get(name) == hashlib.sha256(data).hexdigest()
            for name, data in files.items()
            if name not in (MANIFEST, MANIFEST_DIGEST)
        )
        raise BundleInvalid(
            MANIFEST_DIGEST if agrees else MANIFEST, "manifest.json is not the file it names"
        )
    return listed


def cmd_verify_bundle(args: argparse.Namespace) -> int:
    """`crovia verify --bundle ZIP`: exit 0 valid, 1 naming the file that fails."""
    from crovia_spider.cli import EXIT_CHECK_FAILED

    try:
        found = verify_bundle(args.bundle, args.pubkey, args.key_id)
    except BundleInvalid as exc:
        if args.json:
            print_json({"ok": False, "exit_code": 1, "error": "check_failed", "file": exc.file,
                        "message": str(exc)})  # fmt: skip
        else:
            print(f"INVALID bundle: {printable(str(exc))}")
        return EXIT_CHECK_FAILED
    if args.json:
        print_json({"ok": True, "verdict": "valid", **found})
    else:
        print(
            f"OK: bundle {args.bundle} valid: {found['receipts']} receipts, {found['files']}"
            f" files, each checked; signed by {found['key']}"
        )
    return 0
