"""`crovia export` of a real ledger (tests/archive/captures.py), run as a user runs it, and its
output checked by the archive tools themselves (`warcio check`, `warcio index`, `wacz validate`)
and by `crovia verify`: the WARC holds exactly the expected records and bytes, every receipt in
the WACZ verifies, and a changed byte in a kept blob refuses the export, naming the blob."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from ledger.records.capture import new_capture_envelope
from ledger.store import BodyStore, Ledger
from tests.archive.captures import ALPHA_HTML, ALPHA_TITLE, RUN, CaptureLedger
from tests.scratch import BIN, PROJECT_ROOT, bare_env

AXIOM_ID = "WARC-Crovia-Axiom-Id"


def run(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """A program of the venv (`crovia`, `warcio`, `wacz`), as a user runs it."""
    return subprocess.run(
        [str(BIN / str(argv[0])), *map(str, argv[1:])],
        cwd=PROJECT_ROOT,
        env=bare_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def export(made: CaptureLedger, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return run("crovia", "export", *args, "--ledger-dir", made.directory)


def sha256_b32(digest_hex: str) -> str:
    """A WARC digest field of the sha256 whose hex is `digest_hex`."""
    return "sha256:" + base64.b32encode(bytes.fromhex(digest_hex)).decode()


@pytest.fixture(scope="module")
def warc(made: CaptureLedger, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("warc") / "captures.warc.gz"
    done = export(made, made.items["A1"], made.items["B"], made.items["C"], "--warc", path)
    assert done.returncode == 0, done.stderr
    assert "WARC of 4 capture record(s), 7 WARC records, 3 page(s)" in done.stdout
    return path


@pytest.fixture(scope="module")
def wacz(made: CaptureLedger, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wacz") / "captures.wacz"
    done = export(made, made.items["A1"], made.items["B"], made.items["C"], "--wacz", path)
    assert done.returncode == 0, done.stderr
    return path


def records(path: Path, *, parse: bool = True) -> list[tuple[object, bytes]]:
    """(record, its payload as stored: not decoded) of each record; with parse=False the payload
    is the whole block (the HTTP head too)."""
    with open(path, "rb") as stream:
        return [
            (record, record.raw_stream.read())
            for record in ArchiveIterator(stream, no_record_parse=not parse)
        ]


def test_warcio_check_and_index_accept_the_warc(warc):
    checked = run("warcio", "check", "-v", warc)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("digest pass") == 7
    indexed = run("warcio", "index", warc)
    assert indexed.returncode == 0, indexed.stderr
    kinds = [json.loads(line)["warc-type"] for line in indexed.stdout.splitlines()]
    assert kinds == ["warcinfo", *["response", "request"] * 2, "metadata", "response"]


def test_the_warc_holds_each_capture_in_leaf_order_with_its_kept_bytes(warc, made):
    found = [
        (r.rec_type, r.rec_headers.get_header(AXIOM_ID), r.rec_headers["WARC-Target-URI"])
        for r, _ in records(warc)
    ]
    ids = {name: made.captures[name]["axiom_id"] for name in made.captures}
    assert found == [
        ("warcinfo", None, None),
        ("response", ids["gzip"], "https://news.example/a"),
        ("request", ids["gzip"], "https://news.example/a"),
        ("response", ids["chunked"], "https://news.example/a"),
        ("request", ids["chunked"], "https://news.example/a"),
        ("metadata", ids["failed"], "https://news.example/b"),
        ("response", ids["pdf"], "https://files.papers.example/c.pdf"),
    ]
    responses = [(r, payload) for r, payload in records(warc) if r.rec_type == "response"]
    for (record, payload), name in zip(responses, ("gzip", "chunked", "pdf"), strict=True):
        body = made.body(name)
        assert payload == made.blobs[body["body_sha256"]]
        assert record.rec_headers["WARC-Payload-Digest"] == sha256_b32(body["body_sha256"])
        assert record.rec_headers["WARC-Crovia-Body-Sha256"] == body["body_sha256"]
        assert record.rec_headers["WARC-Date"] == body["captured_at"]
        assert record.rec_headers.get_header("WARC-IP-Address") == body.get("ip_address")


def test_a_request_record_is_the_kept_request_head_byte_for_byte(warc, made):
    requests = [(r, block) for r, block in records(warc, parse=False) if r.rec_type == "request"]
    for (record, block), name in zip(requests, ("gzip", "chunked"), strict=True):
        head = made.body(name)["request_head_sha256"]
        assert block == made.blobs[head]
        assert record.rec_headers["WARC-Block-Digest"] == sha256_b32(head)
        assert record.rec_headers["WARC-Crovia-Request-Head-Sha256"] == head


def test_a_gzip_response_no_longer_claims_the_coding_its_kept_body_lost(warc, made):
    (record, payload), (chunked, _) = [x for x in records(warc) if x[0].rec_type == "response"][:2]
    kept_head = made.blobs[made.body("gzip")["response_head_sha256"]]
    compressed_length = len(gzip.compress(ALPHA_HTML, mtime=0))
    assert b"Content-Encoding: gzip" in kept_head  # the evidence keeps what the server said
    head = record.http_headers
    assert head.get_header("Content-Encoding") is None
    assert head.get_header("Content-Length") == str(len(ALPHA_HTML)) == str(len(payload))
    assert head.get_header("X-Crovia-Original-Content-Encoding") == "gzip"
    assert head.get_header("X-Crovia-Original-Content-Length") == str(compressed_length)
    assert head.get_header("Vary") == "Accept-Encoding"
    kept_digest = hashlib.sha256(kept_head).hexdigest()
    assert record.rec_headers["WARC-Crovia-Response-Head-Sha256"] == kept_digest
    head, body = chunked.http_headers, made.blobs[made.body("chunked")["body_sha256"]]
    assert head.get_header("Transfer-Encoding") is None
    assert head.get_header("X-Crovia-Original-Transfer-Encoding") == "chunked"
    assert head.get_header("Content-Length") == str(len(body))
    assert head.get_header("X-Crovia-Original-Content-Length") is None  # there was none


def test_a_capture_without_a_response_is_a_metadata_record(warc, made):
    (record, fields), = [x for x in records(warc) if x[0].rec_type == "metadata"]  # fmt: skip
    assert record.rec_headers["Content-Type"] == "application/warc-fields"
    assert record.rec_headers["WARC-Date"] == made.body("failed")["captured_at"]
    assert fields == b"outcome: failed\r\nerror: TimeoutError: took longer than 30 s\r\n\r\n"


def test_wacz_validate_accepts_the_wacz_with_the_evidence_listed(wacz, made):
    done = run("wacz", "validate", "-f", wacz)
    assert done.returncode == 0 and "the passed WACZ is valid" in done.stdout, done.stdout
    with zipfile.ZipFile(wacz) as archive:
        manifest = json.loads(archive.read("datapackage.json"))
        listed = {r["path"]: r for r in manifest["resources"]}
        evidence = [name for name in archive.namelist() if name.startswith("crovia/")]
        assert len(evidence) == 2 * len(made.captures) + 2  # and trust_root.json, rotations.json
        for name in evidence:
            data = archive.read(name)
            assert listed[name]["hash"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert listed[name]["bytes"] == len(data)
        digest = json.loads(archive.read("datapackage-digest.json"))["hash"]
        assert digest == "sha256:" + hashlib.sha256(archive.read("datapackage.json")).hexdigest()


def test_every_receipt_in_the_wacz_is_what_prove_writes_and_verifies(wacz, made, tmp_path):
    with zipfile.ZipFile(wacz) as archive:
        for name, envelope in made.captures.items():
            axiom_id = envelope["axiom_id"]
            receipt, proof = tmp_path / f"{name}.json", tmp_path / f"{name}.tlog-proof"
            done = run("crovia", "prove", axiom_id, "--ledger-dir", made.directory,
                       "--out", receipt, "--tlog-proof", proof)  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert archive.read(f"crovia/{axiom_id}.json") == receipt.read_bytes()
            assert archive.read(f"crovia/{axiom_id}.tlog-proof") == proof.read_bytes()
            packed = tmp_path / f"packed-{name}.json"
            packed.write_bytes(archive.read(f"crovia/{axiom_id}.json"))
            verified = run("crovia", "verify", packed, "--pubkey", made.pubkey)
            assert verified.returncode == 0, verified.stdout + verified.stderr
            assert "verdict: valid" in verified.stdout


def test_pages_name_each_captured_page_with_its_title(wacz, made):
    with zipfile.ZipFile(wacz) as archive:
        header, *pages = map(json.loads, archive.read("pages/pages.jsonl").splitlines())
    assert header["format"] == "json-pages-1.0"
    ids = {name: made.captures[name]["axiom_id"] for name in made.captures}
    by_id = {page["id"]: page for page in pages}
    assert sorted(by_id) == sorted([ids["gzip"], ids["chunked"], ids["pdf"]])
    assert by_id[ids["gzip"]]["title"] == ALPHA_TITLE
    assert by_id[ids["gzip"]]["url"] == "https://news.example/a"
    assert by_id[ids["gzip"]]["ts"] == "2026-06-18T05:00:00Z"


@pytest.mark.parametrize(
    ("select", "expected"),
    [
        (lambda m: [m.items["A1"]], ["gzip", "chunked"]),  # every version's captures
        (lambda m: [m.items["A2"]], ["gzip", "chunked"]),
        (lambda m: [m.captures["pdf"]["axiom_id"]], ["pdf"]),  # a capture record itself
        (lambda m: ["--vendor", "arxiv_cs_ai"], ["gzip", "chunked", "failed"]),
        (lambda m: ["--vendor", "openai_*"], ["pdf"]),
        (lambda m: ["--vendor", "arxiv_cs_ai", "--since", "2026-06-19"], ["chunked"]),
        (lambda m: [m.items["A1"], "--since", "2026-06-18T05:00:00.2Z"], ["chunked"]),
    ],
)
def test_which_captures_are_exported(made, tmp_path, select, expected):
    done = export(made, *select(made), "--warc", tmp_path / "out.warc", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["captures"] == [made.captures[n]["axiom_id"] for n in expected]


@pytest.mark.parametrize("blob", ["body_sha256", "request_head_sha256", "response_head_sha256"])
@pytest.mark.parametrize("kind", ["--warc", "--wacz"])
def test_a_changed_byte_in_a_kept_blob_refuses_the_export_naming_it(copied, tmp_path, blob, kind):
    digest = copied.body("gzip")[blob]
    path = BodyStore(copied.directory).path(digest)
    changed = bytearray(gzip.decompress(path.read_bytes()))
    changed[7] ^= 0x01
    path.write_bytes(gzip.compress(bytes(changed), mtime=0))
    out = tmp_path / "out" / "captures"
    out.parent.mkdir()
    done = export(copied, copied.items["A1"], kind, out)
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert copied.captures["gzip"]["axiom_id"] in line and f"({blob})" in line and digest in line
    assert list(out.parent.iterdir()) == []  # nothing written, no temporary file left


def test_refusals_are_one_line_and_exit_2(copied, tmp_path):
    out = tmp_path / "out.warc"
    refused = {
        "no capture record of vendor 'nobody'": export(copied, "--vendor", "nobody", "--warc", out),
        f"item {copied.items['B']} has no capture record captured at or after": export(
            copied, copied.items["B"], "--since", "2027-01-01", "--warc", out
        ),
        "name the captures": export(copied, "--warc", out),
    }
    out.write_bytes(b"an earlier export")
    refused["exists: refusing to overwrite it"] = export(copied, copied.items["C"], "--warc", out)
    for words, done in refused.items():
        assert done.returncode == 2, (words, done.stderr)
        (line,) = done.stderr.splitlines()
        assert line.startswith("crovia export: error: ") and words in line, line
    assert out.read_bytes() == b"an earlier export"
    forced = export(copied, copied.items["C"], "--warc", out, "--force")
    assert forced.returncode == 0, forced.stderr
    assert out.read_bytes() != b"an earlier export"


def test_a_wacz_needs_its_records_sealed_a_warc_does_not(copied, tmp_path):
    with Ledger.open(copied.directory, signing_key=copied.key) as ledger:
        envelope = new_capture_envelope(
            spider="vendor_press", vendor="openai_news", item=copied.items["C"],
            url="https://papers.example/c", captured_at="2026-06-20T05:00:00.000000Z",
            run_hash=RUN, outcome="failed", error="ConnectionRefusedError",
        )  # fmt: skip
        (issued,) = ledger.issue([envelope])
    refused = export(copied, issued.axiom_id, "--wacz", tmp_path / "out.wacz")
    assert refused.returncode == 2 and "is not sealed yet" in refused.stderr, refused.stderr
    assert not (tmp_path / "out.wacz").exists()
    written = export(copied, issued.axiom_id, "--warc", tmp_path / "out.warc")
    assert written.returncode == 0, written.stderr
