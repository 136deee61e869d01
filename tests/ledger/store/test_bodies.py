"""Kept fetch bodies: content-addressed, compressed, verified on the way out, checked by audit.

Real files in a real ledger directory; the envelopes citing bodies are really signed and issued.
"""

from __future__ import annotations

import gzip
import hashlib

import pytest

from crovia_spider.cli import main
from ledger.audit import audit
from ledger.envelope import new_envelope
from ledger.exceptions import BodyMismatch
from ledger.store import BodyStore, Ledger, check_cited
from tests.vectors.make_vectors import sample_record

FEED = b'<?xml version="1.0"?><rss version="2.0"><channel><title>\xc3\xa9</title></channel></rss>'


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cites(number: int, body: bytes, **fetch) -> dict:
    """A real envelope whose object.fetch cites `body`."""
    evidence = {
        "body_sha256": sha(body),
        "fetched_at": "2026-06-18T04:43:37.000001Z",
        "final_url": "https://lab.example.org/feed.xml",
        "status": 200,
        **fetch,
    }
    return new_envelope(sample_record(number), object_extra={"fetch": evidence})


# -- the store ------------------------------------------------------------------------------------


def test_put_keeps_the_exact_bytes_compressed_under_their_sha256(tmp_path):
    store = BodyStore(tmp_path)
    digest = store.put(FEED)
    assert digest == sha(FEED)
    path = tmp_path / "bodies" / digest[:2] / f"{digest}.gz"
    assert store.path(digest) == path
    assert gzip.decompress(path.read_bytes()) == FEED  # any gunzip reads it
    assert store.get(digest) == FEED


def test_put_is_idempotent_and_leaves_no_temporary_files(tmp_path):
    store = BodyStore(tmp_path)
    assert store.put(FEED) == store.put(FEED)
    assert store.put(b"") == sha(b"")
    files = sorted(p.name for p in (tmp_path / "bodies").rglob("*") if p.is_file())
    assert files == sorted([f"{sha(FEED)}.gz", f"{sha(b'')}.gz"])


def test_a_compressed_copy_is_the_same_for_the_same_bytes(tmp_path):
    # No timestamp in the gzip header: two ledgers keeping one body hold the same file.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, two = BodyStore(tmp_path / "a"), BodyStore(tmp_path / "b")
    digest = one.put(FEED)
    two.put(FEED)
    assert one.path(digest).read_bytes() == two.path(digest).read_bytes()


def test_get_refuses_a_missing_body(tmp_path):
    with pytest.raises(BodyMismatch, match=f"body {sha(FEED)} is missing"):
        BodyStore(tmp_path).get(sha(FEED))


def test_get_refuses_a_body_whose_bytes_changed(tmp_path):
    store = BodyStore(tmp_path)
    digest = store.put(FEED)
    store.path(digest).write_bytes(gzip.compress(FEED.replace(b"rss", b"RSS")))
    with pytest.raises(BodyMismatch) as failed:
        store.get(digest)
    assert failed.value.check == "fetch_body"
    assert failed.value.expected == digest
    assert failed.value.computed == sha(FEED.replace(b"rss", b"RSS"))


def test_get_refuses_a_body_that_is_not_gzip_any_more(tmp_path):
    store = BodyStore(tmp_path)
    digest = store.put(FEED)
    data = bytearray(store.path(digest).read_bytes())
    data[len(data) // 2] ^= 0x01
    store.path(digest).write_bytes(bytes(data))
    with pytest.raises(BodyMismatch, match=digest):
        store.get(digest)


@pytest.mark.parametrize("name", ["../../etc/passwd", "AB" * 32, "ab" * 31, 7, None])
def test_a_name_that_is_not_a_sha256_is_refused(tmp_path, name):
    with pytest.raises(BodyMismatch, match="not a sha256"):
        BodyStore(tmp_path).get(name)


# -- what envelopes cite --------------------------------------------------------------------------


def test_check_cited_passes_a_kept_body_and_an_envelope_citing_none(tmp_path):
    BodyStore(tmp_path).put(FEED)
    check_cited(cites(1, FEED), tmp_path, 3)
    check_cited(new_envelope(sample_record(2)), tmp_path, 4)  # older envelopes carry no fetch


def test_check_cited_names_the_leaf_and_the_missing_body(tmp_path):
    with pytest.raises(BodyMismatch, match=f"leaf 3: kept body {sha(FEED)} is missing"):
        check_cited(cites(1, FEED), tmp_path, 3)


def test_check_cited_refuses_a_fetch_block_without_a_body_sha(tmp_path):
    envelope = cites(1, FEED)
    del envelope["object"]["fetch"]["body_sha256"]
    with pytest.raises(BodyMismatch, match=r"leaf 0: .*not a sha256"):
        check_cited(envelope, tmp_path, 0)


@pytest.fixture
def kept(tmp_path, key):
    """A sealed ledger of three envelopes citing two kept bodies."""
    other = FEED.replace(b"\xc3\xa9", b"e")
    directory = tmp_path / "ledger"
    with Ledger.open(directory, signing_key=key) as ledger:
        store = BodyStore(directory)
        store.put(FEED)
        store.put(other)
        issued = ledger.issue([cites(1, FEED), cites(2, FEED), cites(3, other)])
        ledger.seal()
    return directory, [item.axiom_id for item in issued], other


def test_audit_passes_when_every_cited_body_is_kept(kept, key):
    directory, _, _ = kept
    assert audit(directory, pubkey_hex=bytes(key.verify_key).hex()).leaves == 3


def test_a_changed_byte_in_a_kept_body_fails_the_audit_naming_it(kept, capsys):
    directory, _, other = kept
    path = BodyStore(directory).path(sha(other))
    path.write_bytes(gzip.compress(other.replace(b"rss", b"rsS")))
    assert main(["audit", "--ledger-dir", str(directory)]) == 1
    err = capsys.readouterr().err
    assert f"leaf 2: kept body {sha(other)}" in err and "check fetch_body failed" in err


def test_a_missing_body_fails_the_audit(kept):
    directory, _, _ = kept
    BodyStore(directory).path(sha(FEED)).unlink()
    with pytest.raises(BodyMismatch, match=f"leaf 0: kept body {sha(FEED)} is missing"):
        audit(directory)


# -- crovia body ----------------------------------------------------------------------------------


def test_crovia_body_writes_the_exact_bytes_to_stdout(kept, capsysbinary):
    directory, ids, _ = kept
    assert main(["body", ids[0], "--ledger-dir", str(directory)]) == 0
    assert capsysbinary.readouterr().out == FEED


def test_crovia_body_writes_a_file_and_never_overwrites_one(kept, tmp_path, capsys):
    directory, ids, other = kept
    out = tmp_path / "body.xml"
    assert main(["body", ids[2], "--ledger-dir", str(directory), "--out", str(out)]) == 0
    assert out.read_bytes() == other
    out.write_bytes(b"mine")
    assert main(["body", ids[0], "--ledger-dir", str(directory), "--out", str(out)]) == 2
    assert out.read_bytes() == b"mine" and "--force" in capsys.readouterr().err
    argv = ["body", ids[0], "--ledger-dir", str(directory), "--out", str(out), "--force"]
    assert main(argv) == 0
    assert out.read_bytes() == FEED


def test_crovia_body_exits_1_naming_a_body_that_does_not_match(kept, tmp_path, capsys):
    directory, ids, _ = kept
    BodyStore(directory).path(sha(FEED)).write_bytes(gzip.compress(b"not what was served"))
    out = tmp_path / "body.xml"
    assert main(["body", ids[1], "--ledger-dir", str(directory), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert sha(FEED) in err and "check fetch_body failed" in err


def test_crovia_body_of_an_envelope_without_fetch_evidence_is_a_usage_error(tmp_path, key, capsys):
    directory = tmp_path / "ledger"
    with Ledger.open(directory, signing_key=key) as ledger:
        [item] = ledger.issue([new_envelope(sample_record(1))])
    assert main(["body", item.axiom_id, "--ledger-dir", str(directory)]) == 2
    assert "cites no fetched body" in capsys.readouterr().err


def test_crovia_body_of_an_unknown_axiom_is_a_usage_error(kept, capsys):
    directory, _, _ = kept
    assert main(["body", "axm_" + "0" * 64, "--ledger-dir", str(directory)]) == 2


# -- issue 19 obs 9: checked while streaming, renamed only on a match, capped ----------------------


def test_a_swapped_body_leaves_no_output_file(kept, tmp_path, capsys):
    directory, ids, _ = kept
    BodyStore(directory).path(sha(FEED)).write_bytes(gzip.compress(b"not what was served"))
    out = tmp_path / "out"
    out.mkdir()
    assert main(["body", ids[1], "--ledger-dir", str(directory), "--out", str(out / "b")]) == 1
    assert "check fetch_body failed" in capsys.readouterr().err
    assert list(out.iterdir()) == []  # no output file, no temporary file left behind


def test_a_swapped_body_leaves_an_existing_file_as_it_was_even_with_force(kept, tmp_path):
    directory, ids, _ = kept
    BodyStore(directory).path(sha(FEED)).write_bytes(gzip.compress(b"not what was served"))
    out = tmp_path / "body.xml"
    out.write_bytes(b"mine")
    argv = ["body", ids[1], "--ledger-dir", str(directory), "--out", str(out), "--force"]
    assert main(argv) == 1
    assert out.read_bytes() == b"mine"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_swapped_body_writes_nothing_to_stdout(kept, capsysbinary):
    directory, ids, _ = kept
    BodyStore(directory).path(sha(FEED)).write_bytes(gzip.compress(b"not what was served"))
    assert main(["body", ids[1], "--ledger-dir", str(directory)]) == 1
    assert capsysbinary.readouterr().out == b""


def test_a_gzip_bomb_stops_at_the_download_limit(kept, tmp_path, capsys):
    from crovia_spider.settings import DOWNLOAD_MAXSIZE
    from ledger.store import MAX_BODY_BYTES

    assert MAX_BODY_BYTES == DOWNLOAD_MAXSIZE  # the crawl never kept a longer body
    directory, ids, _ = kept
    bomb = gzip.compress(b"\x00" * (MAX_BODY_BYTES * 4), compresslevel=9)
    BodyStore(directory).path(sha(FEED)).write_bytes(bomb)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["body", ids[1], "--ledger-dir", str(directory), "--out", str(out / "b")]) == 1
    err = capsys.readouterr().err
    assert f"longer than the {MAX_BODY_BYTES}-byte limit" in err
    assert list(out.iterdir()) == []


def test_copy_to_stops_at_its_limit_without_reading_the_rest(tmp_path):
    store = BodyStore(tmp_path)
    digest = store.put(FEED)
    with pytest.raises(BodyMismatch, match="longer than the 10-byte limit"):
        store.copy_to(digest, __import__("io").BytesIO(), max_size=10)
