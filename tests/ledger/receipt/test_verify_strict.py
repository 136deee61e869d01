"""`crovia verify` vouches for exactly the bytes a person reads (issue 9).

A receipt whose bytes are not exactly canonical_json of what they parse to is refused with the
check `canonical_bytes`, whatever the difference (a duplicate key, a BOM, another encoding, an
escape, any whitespace); malformed input of any size or depth exits 1 without a traceback; on
success the verifier says what it vouches for.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.exceptions import ReceiptBytesInvalid
from ledger.receipt import verify_receipt_bytes
from tests.vectors.make_vectors import SEED_RECEIPT

SEED_BYTES = SEED_RECEIPT.read_bytes()
SEED = json.loads(SEED_BYTES)
SEED_KEY = SEED["seal"]["public_key_hex"]
TITLE = SEED["envelope"]["body"]["title"].encode()


def _forged_title_first() -> bytes:
    """The seed with a forged body title placed before the real one: a last-wins parser shows
    the forged one to a reader and verifies the real one."""
    spider_record_title = SEED_BYTES.index(b'"title":"' + TITLE)
    body_title = SEED_BYTES.index(b'"title":"' + TITLE, spider_record_title + 1)
    forged = b'"title":"Vendor admits everything",'
    return SEED_BYTES[:body_title] + forged + SEED_BYTES[body_title:]


NON_CANONICAL = {
    "duplicate key, forged title first": (_forged_title_first(), "duplicate key 'title'"),
    "pretty-printed": (
        json.dumps(SEED, indent=2, sort_keys=True, ensure_ascii=False).encode(),
        "not canonical",
    ),
    "\\u-escaped ASCII": (
        SEED_BYTES.replace(
            b'"schema":"crovia.axiom_proof.v1"', b'"schem\\u0061":"crovia.axiom_proof.v1"'
        ),
        "not canonical",
    ),
    "escaped slash": (SEED_BYTES.replace(b"https://", b"https:\\/\\/", 1), "not canonical"),
    "BOM": (b"\xef\xbb\xbf" + SEED_BYTES, "byte order mark"),
    "UTF-16": (SEED_BYTES.decode().encode("utf-16"), "byte order mark"),
    "UTF-16 without BOM": (SEED_BYTES.decode().encode("utf-16-le"), "not JSON"),
    "invalid UTF-8": (SEED_BYTES.replace(TITLE, TITLE + b"\xff"), "not UTF-8"),
    "two trailing newlines": (SEED_BYTES + b"\n\n", "not canonical"),  # one is read past
    "a newline after a space": (SEED_BYTES + b" \n", "not canonical"),
    "leading space": (b" " + SEED_BYTES, "not canonical"),
    "unsorted keys": (
        json.dumps(
            dict(reversed(SEED.items())), separators=(",", ":"), ensure_ascii=False
        ).encode(),
        "not canonical",
    ),
    "an int written as 2.33395e5": (
        SEED_BYTES.replace(b'"leaf_index":233395', b'"leaf_index":2.33395e5'),
        "number",
    ),
}


def test_the_seed_verifies_byte_for_byte() -> None:
    verdict = verify_receipt_bytes(SEED_BYTES, pubkey_hex=SEED_KEY)
    assert verdict.key_pinned and verdict.title == TITLE.decode()


@pytest.mark.parametrize("name", sorted(NON_CANONICAL))
def test_non_canonical_bytes_are_refused_naming_why(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    data, reason = NON_CANONICAL[name]
    with pytest.raises(ReceiptBytesInvalid, match=reason) as caught:
        verify_receipt_bytes(data, pubkey_hex=SEED_KEY)
    assert caught.value.check == "canonical_bytes"
    path = tmp_path / "receipt.json"
    path.write_bytes(data)
    assert main(["verify", str(path), "--pubkey", SEED_KEY]) == 1
    assert "check canonical_bytes failed" in capsys.readouterr().err
    assert main(["verify", str(path), "--pubkey", SEED_KEY, "--json"]) == 1
    failure = json.loads(capsys.readouterr().out)
    assert failure["ok"] is False and failure["check"] == "canonical_bytes"
    assert reason in failure["message"]


def test_the_duplicate_key_names_where_the_bytes_differ() -> None:
    with pytest.raises(ReceiptBytesInvalid, match=r"envelope\.body") as caught:
        verify_receipt_bytes(_forged_title_first())
    assert "Vendor admits everything" in str(caught.value.computed)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (SEED_BYTES, 0),
        (SEED_BYTES + b"\n", 0),
        (SEED_BYTES + b"\r\n", 0),
        (SEED_BYTES + b"\n\n", 1),
    ],
)
def test_stdin_is_held_to_the_same_bytes(data: bytes, code: int, monkeypatch, capsys) -> None:
    """One final newline (an editor's, a shell's) is not part of the receipt and is read past; a
    second is refused (docs/format.md, check canonical_bytes)."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["verify", "-", "--any-key", "--json"]) == code
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is (code == 0)
    if code:
        assert "trailing" in result["message"]


def test_success_says_what_it_vouches_for(capsys: pytest.CaptureFixture) -> None:
    assert main(["verify", str(SEED_RECEIPT), "--key-id", SEED["seal"]["key_id"]]) == 0
    out = capsys.readouterr().out
    envelope, seal = SEED["envelope"], SEED["seal"]
    for text in (
        envelope["body"]["vendor"],
        envelope["body"]["title"],
        envelope["object"]["primary_source_url"],
        envelope["subject"]["observed_at"],
        envelope["issued_at"],
        "leaf 233395 of 234491",
        seal["sealed_at"],
        seal["key_id"],
        "pinned",
    ):
        assert text in out, text
    assert "no key was pinned" not in out
    assert main(["verify", str(SEED_RECEIPT), "--any-key", "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict == {
        **verdict,
        "ok": True,
        "verdict": "unpinned",
        "any_key": True,
        "vendor": "arxiv_cs_ai",
        "title": envelope["body"]["title"],
        "url": "https://arxiv.org/abs/2606.19004",
        "observed_at": "2026-06-18T04:43:37Z",
        "issued_at": "2026-06-18T04:43:37Z",
        "leaf_index": 233395,
        "leaf_count": 234491,
        "sealed_at": seal["sealed_at"],
        "key_id": seal["key_id"],
        "key_pinned": False,
    }


def test_control_characters_in_vouched_text_reach_no_terminal(tmp_path, capsys) -> None:
    """Untrusted text is printed escaped: a title cannot move the cursor or recolour the line."""
    from ledger.canonical import canonical_json
    from ledger.store import Ledger
    from tests.vectors.make_vectors import TEST_KEY, sample_envelope

    envelope = sample_envelope(0)
    envelope["body"]["title"] = "fine\x1b[2K\rOK: forged\u202e"
    with Ledger.open(tmp_path / "ledger", signing_key=TEST_KEY) as ledger:
        issued = ledger.issue([envelope])
        ledger.seal()
        receipt = ledger.receipt(issued[0].axiom_id)
    path = tmp_path / "receipt.json"
    path.write_bytes(canonical_json(receipt))
    assert main(["verify", str(path), "--any-key"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "fine\\x1b[2K\\rOK: forged\\u202e" in out
