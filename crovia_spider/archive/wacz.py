"""A WACZ of capture records: the WARC, packaged by the `wacz` tool, plus each record's evidence
(docs/archives.md, "What the WACZ holds").

`wacz create` indexes the WARC (indexes/), writes pages/pages.jsonl from the pages we name (one
per capture with a response, its id the capture record's axiom_id, its title the page's) and the
manifest. Then every entry is copied as it is into the final zip beside, for each capture record,
its receipt (`crovia/<axiom_id>.json`, the bytes `crovia prove` writes) and its c2sp.org
tlog-proof (`crovia/<axiom_id>.tlog-proof`, those of `crovia prove --tlog-proof`), then the
ledger's trust root and key rotations at the export (`crovia/trust_root.json`,
`crovia/rotations.json`, as `crovia publish` writes them), so a receipt sealed by a key that was
since rotated away verifies from the WACZ alone under the new key. wacz's own WACZIndexer lists
every entry again in datapackage.json (path, sha256, size) and hashes that into
datapackage-digest.json, so `wacz validate` checks our files like its own. The evidence lies one
directory deep: wacz 0.6's validator names a file by its last two path parts, so a deeper one
would not be found in the manifest.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from crovia_spider.archive.pages import pages_jsonl
from crovia_spider.archive.warc import WarcWritten, write_warc
from crovia_spider.exceptions import ExportRefused

EVIDENCE_DIR = "crovia"
WARC_NAME = "data.warc.gz"  # archive/<name>: gzip, so .warc.gz (WACZ 1.1.1, "archive")
HASH_TYPE = "sha256"
MANIFEST = "datapackage.json"
MANIFEST_DIGEST = "datapackage-digest.json"
TRUST_ROOT = "trust_root.json"  # crovia/<name>: the names `crovia publish` gives them on a site
ROTATIONS = "rotations.json"


def evidence(reader: Any, captures: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, bytes]]:
    """(path in the WACZ, bytes) of each capture record's receipt and tlog-proof, from `reader`
    (a ledger.store.Ledger), made one at a time as the WACZ is written, then the trust root and
    rotations (`trust_files`, read now). Raises at once, before anything is written: NotSealed
    when a record is not sealed yet, NoCheckpoint when the newest seal has no checkpoint (the
    captures are in leaf order and a seal covers a prefix of the ledger, so the last one tells)."""
    if captures:
        _receipt_and_proof(reader, captures[-1]["axiom_id"])
    receipts = (
        (f"{EVIDENCE_DIR}/{envelope['axiom_id']}{suffix}", data)
        for envelope in captures
        for suffix, data in zip(
            (".json", ".tlog-proof"), _receipt_and_proof(reader, envelope["axiom_id"]), strict=True
        )
    )
    return itertools.chain(receipts, trust_files(reader))


def trust_files(reader: Any) -> list[tuple[str, bytes]]:
    """`crovia/trust_root.json` and `crovia/rotations.json` of the ledger `reader` reads, as
    `crovia publish` writes them on the site (docs/format.md, "This project: trust root" and
    "rotation publication"): every record of rotations.jsonl (canonical JSON, `[]` when the key
    was never rotated), and the trust root of the current key (the newest key of those records,
    else the newest seal's) with those records and the TSA roots of $CROVIA_TSA_ROOTS, its note
    verifier key under the origin of the ledger's checkpoints (those of the tlog-proofs).

    A receipt the WACZ holds is sealed by the key of its seal's era; after a rotation the
    operator's key is another one, and these records are what leads a verifier pinning it back
    to the old one (`crovia verify --pubkey NEW --rotations crovia/rotations.json`). None of it
    is a pin: the records are signed by both keys of each hand-over, and the trust root's key is
    only what the exporter says until compared with the operator's. [] for a ledger with no seal
    (`evidence` refuses its records first)."""
    from crovia_spider.config.trust_roots import trust_root, trust_root_text
    from crovia_spider.options import env_default
    from ledger.canonical import canonical_json
    from ledger.store import CheckpointStore, log_origin

    rotations = reader.rotations()
    seal = reader.last_seal()
    if rotations:
        current = rotations[-1]["new_public_key_hex"]
    elif seal is not None:
        current = seal["public_key_hex"]
    else:
        return []
    first = bytes.fromhex(rotations[0]["old_public_key_hex"] if rotations else current)
    stored = CheckpointStore(reader.directory).origin()
    origin = log_origin(stored or env_default("CROVIA_LOG_ORIGIN") or None, first)
    root = trust_root(bytes.fromhex(current), origin, rotations)
    return [
        (f"{EVIDENCE_DIR}/{TRUST_ROOT}", trust_root_text(root).encode("utf-8")),
        (f"{EVIDENCE_DIR}/{ROTATIONS}", canonical_json(rotations)),
    ]


def _receipt_and_proof(reader: Any, axiom_id: str) -> tuple[bytes, bytes]:
    """The bytes `crovia prove AXIOM_ID` writes, and those of its `--tlog-proof`."""
    from ledger.canonical import canonical_json
    from ledger.store import tlog_proof_for

    receipt = reader.receipt(axiom_id)
    leaf_index, leaf_count = receipt["ledger"]["leaf_index"], receipt["seal"]["leaf_count"]
    return canonical_json(receipt), tlog_proof_for(reader, leaf_index, leaf_count)


def write_wacz(
    out: BinaryIO,
    captures: Sequence[Mapping[str, Any]],
    store: Any,
    files: Iterable[tuple[str, bytes]],
    *,
    info: Mapping[str, str],
    title: str,
    description: str,
    workdir: Path | None = None,
) -> WarcWritten:
    """Write the WACZ of `captures` to `out` (a file open for reading and writing): their WARC
    (see write_warc, which raises for a bad blob), its pages, and `files` (from `evidence`).
    The WARC and wacz's first package are made in a temporary directory in `workdir`. Raises
    ExportRefused when no capture has a response (a WACZ replays pages) or when `wacz create`
    refuses."""
    with tempfile.TemporaryDirectory(prefix=".crovia-wacz-", dir=workdir) as tmp:
        warc = Path(tmp) / WARC_NAME
        with open(warc, "wb") as handle:
            written = write_warc(handle, captures, store, filename=WARC_NAME, info=info)
        if not written.pages:
            raise ExportRefused(
                f"none of the {len(captures)} capture records has a response to replay: a WACZ"
                " lists pages; export them with --warc"
            )
        pages = Path(tmp) / "pages.jsonl"
        pages.write_bytes(pages_jsonl(written.pages, title))
        created = Path(tmp) / "created.wacz"
        _create(warc, pages, created, title, description)
        _repack(created, out, files, argparse.Namespace(title=title, desc=description, date=None))
    return written


def _create(warc: Path, pages: Path, out: Path, title: str, description: str) -> None:
    """`wacz create` (its CLI entry point, in this process); what it prints is kept for an error."""
    from wacz.main import main as wacz_main

    argv = ["create", "-o", str(out), "--pages", str(pages), "--hash-type", HASH_TYPE]
    argv += ["--title", title, "--desc", description, str(warc)]
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        code = wacz_main(argv)
    if code != 0:
        last = (said.getvalue().strip().splitlines() or ["(nothing said)"])[-1]
        raise ExportRefused(f"wacz create refused the WARC (exit {code}): {last}")


def _repack(
    created: Path, out: BinaryIO, files: Iterable[tuple[str, bytes]], res: argparse.Namespace
) -> None:
    """Copy `created`'s entries (its manifest aside) into `out`, add `files`, then write the
    manifest over them all with wacz's WACZIndexer, as `wacz create` writes it."""
    from wacz.util import now

    with zipfile.ZipFile(created) as source, zipfile.ZipFile(out, "w") as wacz:
        for entry in source.infolist():
            if entry.filename in (MANIFEST, MANIFEST_DIGEST):
                continue
            copy = zipfile.ZipInfo(entry.filename, entry.date_time)
            copy.compress_type, copy.external_attr = entry.compress_type, entry.external_attr
            large = entry.file_size >= zipfile.ZIP64_LIMIT
            with source.open(entry) as src, wacz.open(copy, "w", force_zip64=large) as dst:
                shutil.copyfileobj(src, dst)
        for path, data in files:
            entry = zipfile.ZipInfo(path, now())
            entry.compress_type = zipfile.ZIP_DEFLATED  # JSON and text: the spec allows either
            wacz.writestr(entry, data)
        _write_manifest(wacz, res)


def _write_manifest(wacz: zipfile.ZipFile, res: argparse.Namespace) -> None:
    from wacz.util import now
    from wacz.waczindexer import WACZIndexer

    indexer = WACZIndexer(io.StringIO(), [], hash_type=HASH_TYPE, main_url=None)
    manifest = indexer.generate_datapackage(res, wacz).encode("utf-8")
    digest = indexer.generate_datapackage_digest(manifest).encode("utf-8")
    for name, data in ((MANIFEST, manifest), (MANIFEST_DIGEST, digest)):
        entry = zipfile.ZipInfo(name, now())
        entry.compress_type = zipfile.ZIP_DEFLATED
        wacz.writestr(entry, data)
