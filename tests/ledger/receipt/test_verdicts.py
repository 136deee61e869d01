"""Issue 16: one verdict (valid, unpinned, invalid) from `crovia verify`; pinning from a trust
root; receipts published before a key rotation stay valid; forged rotations are invalid.
docs/format.md, "This project: one verdict"."""

from __future__ import annotations

import json
from pathlib import Path

import nacl.signing
import pytest

from crovia_spider.cli import main
from ledger.canonical import canonical_json
from ledger.receipt import verify_receipt
from tests.ledger.rotation_site import (
    Site,
    copy_receipt,
    forged_record,
    rotated_site,
    write_json,
)
from tests.vectors.make_vectors import SEED_RECEIPT

SEED_KEY = "cf742e26f75669dc673cb5c0786a1ae23ae8ca19c347317192ce40c28a7ff25c"
SHARED_SEED = Path(__file__).parents[4] / "shared" / "spec" / "seed_axiom_proof.json"
INDEPENDENT_SEED = Path(__file__).parents[2] / "independent" / "seed_axiom_proof.json"


def verify_json(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, dict]:
    code = main(["verify", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return rotated_site(tmp_path_factory.mktemp("rotated"))


# obs 5: no pin exits 1 naming pinned_key; --any-key is the explicit opt-in


def test_no_pin_is_unpinned_and_exits_1_naming_pinned_key(capsys: pytest.CaptureFixture) -> None:
    assert main(["verify", str(SEED_RECEIPT)]) == 1
    captured = capsys.readouterr()
    assert "pinned_key" in captured.err and "verdict: unpinned" in captured.err
    assert "OK" not in captured.out
    code, out = verify_json(capsys, str(SEED_RECEIPT))
    assert code == 1 and out["ok"] is False
    assert (out["verdict"], out["check"], out["computed"]) == ("unpinned", "pinned_key", SEED_KEY)


def test_any_key_accepts_any_key_and_says_so(capsys: pytest.CaptureFixture) -> None:
    assert main(["verify", str(SEED_RECEIPT), "--any-key"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK (--any-key)") and "any key accepted" in out
    assert "NOT pinned" in out
    code, verdict = verify_json(capsys, str(SEED_RECEIPT), "--any-key")
    assert code == 0 and verdict["ok"] and verdict["any_key"]
    assert verdict["verdict"] == "unpinned" and verdict["key_pinned"] is False


def test_any_key_and_a_pin_together_are_a_usage_error(capsys: pytest.CaptureFixture) -> None:
    assert main(["verify", str(SEED_RECEIPT), "--any-key", "--pubkey", SEED_KEY]) == 2
    assert "not allowed with" in capsys.readouterr().err


def test_the_reference_receipt_is_valid_with_its_key_pinned_byte_for_byte(
    capsys: pytest.CaptureFixture,
) -> None:
    assert SEED_RECEIPT.read_bytes() == INDEPENDENT_SEED.read_bytes()
    if SHARED_SEED.exists():
        assert SEED_RECEIPT.read_bytes() == SHARED_SEED.read_bytes()
    seed_key_id = json.loads(SEED_RECEIPT.read_bytes())["seal"]["key_id"]
    for pin in (["--pubkey", SEED_KEY], ["--key-id", seed_key_id]):
        code, verdict = verify_json(capsys, str(INDEPENDENT_SEED), *pin)
        assert code == 0 and verdict["verdict"] == "valid" and verdict["key_pinned"]
        assert verdict["checks"][-1] == "pinned_key"


def test_another_key_pinned_is_unpinned_not_invalid(capsys: pytest.CaptureFixture) -> None:
    code, out = verify_json(capsys, str(SEED_RECEIPT), "--pubkey", "ab" * 32)
    assert code == 1 and (out["verdict"], out["check"]) == ("unpinned", "pinned_key")


def test_a_broken_receipt_is_invalid_whatever_the_pin(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    receipt = json.loads(SEED_RECEIPT.read_bytes())
    receipt["seal"]["merkle_root"] = "00" * 32
    path = write_json(tmp_path / "bad.json", receipt)
    for pin in ([], ["--any-key"], ["--pubkey", "ab" * 32], ["--pubkey", SEED_KEY]):
        code, out = verify_json(capsys, str(path), *pin)
        assert code == 1 and (out["verdict"], out["check"]) == ("invalid", "merkle_root")


# obs 5: --trust-root pins the key (and its chain, and its TSA roots: tests/ledger/stamps)


def test_trust_root_from_keygen_and_pubkey_pins_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture, site: Site
) -> None:
    for command in (
        ["pubkey", "--key", str(site.k2_file), "--ledger-dir", str(site.ledger_dir)],
        ["keygen", "--out", str(tmp_path / "other.key")],
    ):
        root = tmp_path / f"{command[0]}_trust_root.json"
        assert main([*command, "--trust-root", str(root)]) == 0
    capsys.readouterr()
    pubkey_root = json.loads((tmp_path / "pubkey_trust_root.json").read_bytes())
    assert pubkey_root["key_rotations"] == [site.record] and pubkey_root["tsa_roots"] == []
    assert pubkey_root["public_key_hex"] == site.hex(site.k2)
    keygen_root = json.loads((tmp_path / "keygen_trust_root.json").read_bytes())
    assert keygen_root["key_rotations"] == [] and keygen_root["tsa_roots"] == []
    receipt = str(copy_receipt(site, site.new[0], tmp_path / "loose"))
    code, out = verify_json(
        capsys, receipt, "--trust-root", str(tmp_path / "pubkey_trust_root.json")
    )
    assert code == 0 and out["verdict"] == "valid"
    code, out = verify_json(
        capsys, receipt, "--trust-root", str(tmp_path / "keygen_trust_root.json")
    )
    assert code == 1 and (out["verdict"], out["check"]) == ("unpinned", "pinned_key")


def test_pubkey_trust_root_refuses_a_key_outside_the_ledgers_chain(
    tmp_path: Path, site: Site, capsys: pytest.CaptureFixture
) -> None:
    stranger = tmp_path / "stranger.key"
    assert main(["keygen", "--out", str(stranger)]) == 0
    args = ["pubkey", "--key", str(stranger), "--ledger-dir", str(site.ledger_dir)]
    assert main([*args, "--trust-root", str(tmp_path / "tr.json")]) == 2
    assert "is not a key of the ledger" in capsys.readouterr().err
    assert not (tmp_path / "tr.json").exists()


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b'{"public_key_hex": "00"}',
        b'{"key_id": "0000000000000000", "public_key_hex": "' + b"ab" * 32 + b'",'
        b' "signature_algorithm": "ed25519"}',
    ],
)
def test_a_file_that_is_not_a_trust_root_is_a_usage_error(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "trust_root.json"
    path.write_bytes(content)
    code, out = verify_json(capsys, str(SEED_RECEIPT), "--trust-root", str(path))
    assert code == 2 and "trust root" in out["message"] and "verdict" not in out


# obs 3: receipts published before a rotation stay valid, and are not rewritten


def test_published_receipts_are_not_rewritten_by_a_rotation(site: Site) -> None:
    for axiom_id, data in site.before.items():
        assert site.receipt(axiom_id).read_bytes() == data
        assert "key_rotations" not in json.loads(data)


def test_a_receipt_from_before_the_rotation_is_valid_with_the_sites_trust_root(
    site: Site, capsys: pytest.CaptureFixture
) -> None:
    trust_root = str(site.pub / "trust_root.json")
    published = json.loads((site.pub / "trust_root.json").read_bytes())
    assert published["public_key_hex"] == site.hex(site.k2)
    assert published["key_rotations"] == [site.record]
    for axiom_id in site.old:
        assert main(["verify", str(site.receipt(axiom_id)), "--trust-root", trust_root]) == 0
        out = capsys.readouterr().out
        expected = (
            f"this site's previous key {site.kid(site.k1)}, handed over to {site.kid(site.k2)}"
            f" at {site.record['rotated_at']}"
        )
        assert expected in out
        code, verdict = verify_json(capsys, str(site.receipt(axiom_id)), "--trust-root", trust_root)
        assert code == 0 and verdict["verdict"] == "valid"
        assert verdict["previous_key"]["handed_over_to"] == site.hex(site.k2)
    for axiom_id in site.new:
        code, verdict = verify_json(capsys, str(site.receipt(axiom_id)), "--trust-root", trust_root)
        assert code == 0 and verdict["verdict"] == "valid" and verdict["previous_key"] is None


def test_pubkey_newkey_finds_the_published_chain(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    new_key = site.hex(site.k2)
    for axiom_id in site.old:
        code, verdict = verify_json(capsys, str(site.receipt(axiom_id)), "--pubkey", new_key)
        assert code == 0 and verdict["verdict"] == "valid"
        assert verdict["chain_source"] == [str(site.pub / "rotations.json")]
    loose = str(copy_receipt(site, site.old[0], tmp_path / "loose"))
    code, out = verify_json(capsys, loose, "--pubkey", new_key)  # no chain to follow
    assert code == 1 and (out["verdict"], out["check"]) == ("unpinned", "pinned_key")
    rotations = str(site.pub / "rotations.json")
    code, verdict = verify_json(capsys, loose, "--pubkey", new_key, "--rotations", rotations)
    assert code == 0 and verdict["verdict"] == "valid"
    code, verdict = verify_json(
        capsys, loose, "--key-id", site.kid(site.k2), "--rotations", rotations
    )
    assert code == 0 and verdict["verdict"] == "valid"


def test_the_old_key_pinned_trusts_the_new_keys_receipts(
    site: Site, capsys: pytest.CaptureFixture
) -> None:
    for axiom_id in site.new:  # they carry key_rotations from K1
        code, verdict = verify_json(
            capsys, str(site.receipt(axiom_id)), "--pubkey", site.hex(site.k1)
        )
        assert code == 0 and verdict["verdict"] == "valid" and verdict["key_rotations"] == 1


# obs 4 (verify side): a forged rotation is invalid


def _forged_trust_root(site: Site, tmp_path: Path, record: dict, key) -> Path:
    root = json.loads((site.pub / "trust_root.json").read_bytes())
    root.update(
        key_rotations=[record],
        public_key_hex=bytes(key.verify_key).hex(),
        key_id=site.kid(key),
    )
    path = tmp_path / "forged_trust_root.json"
    path.write_text(json.dumps(root))
    return path


@pytest.mark.parametrize("signer", ["incoming", "outsider"])
def test_a_forged_rotation_in_rotations_json_or_a_trust_root_is_invalid(
    site: Site, tmp_path: Path, signer: str, capsys: pytest.CaptureFixture
) -> None:
    attacker = nacl.signing.SigningKey.generate()
    outsider = nacl.signing.SigningKey.generate() if signer == "outsider" else None
    record = forged_record(site.k1, attacker, old_signer=outsider)
    receipt = str(site.receipt(site.old[0]))
    rotations = write_json(tmp_path / "rotations.json", [record])
    code, out = verify_json(
        capsys, receipt, "--pubkey", site.hex(attacker), "--rotations", str(rotations)
    )
    assert code == 1 and (out["verdict"], out["check"]) == ("invalid", "key_rotation")
    assert "old_signature" in out["message"]
    trust_root = _forged_trust_root(site, tmp_path, record, attacker)
    code, out = verify_json(capsys, receipt, "--trust-root", str(trust_root))
    assert code == 1 and (out["verdict"], out["check"]) == ("invalid", "key_rotation")


def test_a_receipt_with_a_forged_rotation_is_invalid(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """An attacker's receipt claims a hand-over from the site's key K2 that K2 never signed."""
    attacker = nacl.signing.SigningKey.generate()
    receipt = json.loads(site.receipt(site.new[0]).read_bytes())
    receipt["key_rotations"].append(forged_record(site.k2, attacker, old_signer=None))
    path = write_json(tmp_path / "forged.json", receipt)
    trust_root = str(site.pub / "trust_root.json")
    for pin in (["--trust-root", trust_root], ["--any-key"], ["--pubkey", site.hex(attacker)]):
        code, out = verify_json(capsys, str(path), *pin)
        assert code == 1 and (out["verdict"], out["check"]) == ("invalid", "key_rotation")


def test_a_fork_signed_with_a_stolen_old_key_is_invalid_against_the_trust_root(
    site: Site,
) -> None:
    """K1 is stolen after the rotation: a rival hand-over K1 -> attacker, signed by both, is
    self-consistent, but the site's trust root knows K1 handed over to K2."""
    from ledger.exceptions import RotationInvalid
    from ledger.keys import parse_trust_root

    attacker = nacl.signing.SigningKey.generate()
    rival = forged_record(site.k1, attacker, old_signer=site.k1)
    trust = parse_trust_root((site.pub / "trust_root.json").read_bytes())
    receipt = json.loads(site.receipt(site.old[0]).read_bytes())
    verify_receipt(receipt, trust_root=trust)  # genuine: valid
    with pytest.raises(RotationInvalid, match="fork"):
        verify_receipt(receipt, trust_root=trust, known_rotations=[rival])
    # Without knowing the site's chain, pinning the stolen K1 trusts what K1 signs: documented.
    chained = verify_receipt(receipt, pubkey_hex=site.hex(attacker), known_rotations=[rival])
    assert chained.verdict == "valid"


def test_an_unpinned_verdict_from_the_library_and_the_order_of_checks(site: Site) -> None:
    receipt = json.loads(site.receipt(site.old[0]).read_bytes())
    verdict = verify_receipt(receipt)
    assert (verdict.verdict, verdict.key_pinned) == ("unpinned", False)
    assert "pinned_key" not in verdict.checks
    pinned = verify_receipt(receipt, pubkey_hex=site.hex(site.k1))
    assert pinned.verdict == "valid" and pinned.checks[-1] == "pinned_key"
    assert canonical_json(receipt) == site.before[site.old[0]]


def test_a_stale_trust_root_follows_newer_published_rotations(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The user kept the trust root from before the rotation (K1, no records); the site's
    rotations.json leads on to K2, signed by K1: the K2 receipts are valid, named as such."""
    stale = tmp_path / "stale_trust_root.json"
    assert main(["keygen", "--out", str(tmp_path / "unused.key")]) == 0
    root = json.loads((site.pub / "trust_root.json").read_bytes())
    root.update(key_rotations=[], public_key_hex=site.hex(site.k1), key_id=site.kid(site.k1))
    stale.write_text(json.dumps(root))
    capsys.readouterr()
    loose = str(copy_receipt(site, site.new[0], tmp_path / "loose"))
    rotations = str(site.pub / "rotations.json")
    code, verdict = verify_json(capsys, loose, "--trust-root", str(stale), "--rotations", rotations)
    assert code == 0 and verdict["verdict"] == "valid"
    code, verdict = verify_json(capsys, str(site.receipt(site.old[0])), "--trust-root", str(stale))
    assert code == 0 and verdict["verdict"] == "valid"  # its own key, the site's chain beside it


def test_receipt_verdict_is_the_clis_verdict(site: Site) -> None:
    from ledger.keys import parse_trust_root
    from ledger.receipt import receipt_verdict

    seed = SEED_RECEIPT.read_bytes()
    assert receipt_verdict(seed) == ("unpinned", "pinned_key")
    assert receipt_verdict(seed, pubkey_hex=SEED_KEY) == ("valid", None)
    assert receipt_verdict(seed, pubkey_hex="ab" * 32) == ("unpinned", "pinned_key")
    assert receipt_verdict(seed[:-1]) == ("invalid", "canonical_bytes")
    trust = parse_trust_root((site.pub / "trust_root.json").read_bytes())
    old = site.receipt(site.old[0]).read_bytes()
    assert receipt_verdict(old, trust_root=trust) == ("valid", None)
    assert receipt_verdict(seed, trust_root=trust) == ("unpinned", "pinned_key")
