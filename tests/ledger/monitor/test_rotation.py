"""Issue 16, obs 4: `crovia monitor` follows the signed key rotations `crovia publish` publishes
(rotations.json), from scratch and from saved state, and fails, naming the key, on a checkpoint,
seal or entry signed by a key with no signed hand-over from the pinned one, and on a forged
rotation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nacl.signing
import pytest

from crovia_spider.cli import main
from ledger.canonical import canonical_json
from ledger.exceptions import RotationInvalid, UntrustedKey, VerificationError
from ledger.monitor import DirectorySource, MonitorState, monitor
from ledger.publish import publish
from tests.ledger.rotation_site import Site, forged_record, rotated_site, write_json


def run(site: Site, key, state: MonitorState | None = None, pub: Path | None = None):
    state = state or MonitorState.empty(site.origin)
    return monitor(DirectorySource(pub or site.pub), site.vkey(key), state)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return rotated_site(tmp_path_factory.mktemp("rotated"))


@pytest.fixture
def copy(site: Site, tmp_path: Path) -> Path:
    target = tmp_path / "pub"
    shutil.copytree(site.pub, target)
    return target


def test_publish_writes_the_signed_rotations_beside_the_checkpoint(site: Site) -> None:
    data = (site.pub / "rotations.json").read_bytes()
    assert json.loads(data) == [site.record] and data == canonical_json([site.record])


def test_publish_writes_a_rotation_made_after_the_newest_seal(log) -> None:
    """A hand-over with no new seal yet is published too (a monitor learns of it at once)."""
    log.grow(3)
    publish(log.ledger_dir, log.pub)
    assert json.loads((log.pub / "rotations.json").read_bytes()) == []
    from ledger.store import Ledger

    with Ledger.open(log.ledger_dir, signing_key=log.key) as ledger:
        record = ledger.rotate_key(nacl.signing.SigningKey.generate())
    report = publish(log.ledger_dir, log.pub)
    assert "rotations.json" in report.written
    assert json.loads((log.pub / "rotations.json").read_bytes()) == [record]
    assert publish(log.ledger_dir, log.pub).written == ()  # nothing changed since


def test_the_site_trust_root_names_the_new_key_right_after_a_rotation(tmp_path: Path) -> None:
    """`crovia publish` after `rotate-key`, before any new seal: trust_root.json and the page's
    embedded trust root name the new key and the hand-over (K1's receipts stay valid)."""
    from ledger.store import Ledger

    site = rotated_site(tmp_path)
    k3 = nacl.signing.SigningKey.generate()
    with Ledger.open(site.ledger_dir, signing_key=site.k2) as ledger:
        record = ledger.rotate_key(k3)
    site.publish()
    root = json.loads((site.pub / "trust_root.json").read_bytes())
    assert root["public_key_hex"] == site.hex(k3)
    assert root["key_rotations"] == [site.record, record]
    page = (site.pub / "v" / "index.html").read_text()
    assert site.hex(k3) in page and record["new_signature"] in page
    for pinned in (site.k1, site.k2, k3):  # the checkpoint is still K2's; K3 is handed over to
        report, _ = run(site, pinned)
        assert report.size == 5


@pytest.mark.parametrize("pinned", ["k1", "k2"])
def test_the_monitor_follows_a_rotation_from_scratch(site: Site, pinned: str) -> None:
    report, state = run(site, getattr(site, pinned))
    assert (report.size, report.entries, report.seals) == (5, 5, 2)
    assert state.size == 5


def test_the_monitor_follows_a_rotation_from_saved_state(tmp_path: Path) -> None:
    """A monitor pinned to K1 verified the site before the rotation and saved its state; after
    the rotation it follows on, pinned to K1 or to K2."""
    saved: list[MonitorState] = []

    def watch(early: Site) -> None:
        report, state = run(early, early.k1)
        assert (report.size, report.seals) == (3, 1)
        saved.append(state)

    site = rotated_site(tmp_path, before_rotation=watch)
    for pinned in (site.k1, site.k2):
        report, after = run(site, pinned, saved[0])
        assert (report.previous_size, report.size, report.seals) == (3, 5, 1)
        assert after.size == 5
    assert _k1_state(site) == saved[0]


def test_new_vkey_and_old_state_needs_the_signed_hand_over(site: Site, copy: Path) -> None:
    state = _k1_state(site)
    report, _ = run(site, site.k2, state, pub=copy)
    assert report.size == 5
    (copy / "rotations.json").write_bytes(b"[]")  # the hand-over withheld: a takeover
    with pytest.raises(UntrustedKey) as caught:
        run(site, site.k2, state, pub=copy)
    assert site.hex(site.k1) in str(caught.value) or site.kid(site.k1) in str(caught.value)
    (copy / "rotations.json").unlink()
    with pytest.raises(UntrustedKey):
        run(site, site.k2, state, pub=copy)


def _k1_state(site: Site) -> MonitorState:
    """The state a monitor saved after verifying the site at size 3, before the rotation."""
    from ledger.seal import seal_sha256

    first = json.loads((site.ledger_dir / "seals.jsonl").read_bytes().splitlines()[0])
    assert first["leaf_count"] == 3 and first["public_key_hex"] == site.hex(site.k1)
    root = bytes.fromhex(first["rfc6962_root"])
    return MonitorState(site.origin, 3, root, 1, seal_sha256(first), True)


def test_old_vkey_without_the_hand_over_fails_naming_the_new_key(site: Site, copy: Path) -> None:
    (copy / "rotations.json").write_bytes(b"[]")
    with pytest.raises(VerificationError) as caught:
        run(site, site.k1, pub=copy)
    assert caught.value.check == "pinned_key"
    assert "hand-over" in str(caught.value)


def test_a_stranger_vkey_fails_naming_the_pinned_key(site: Site) -> None:
    stranger = nacl.signing.SigningKey.generate()
    with pytest.raises(UntrustedKey) as caught:
        run(site, stranger)
    assert site.hex(stranger) in str(caught.value)


@pytest.mark.parametrize("signer", ["incoming", "outsider"])
def test_a_forged_rotation_fails_naming_it(site: Site, copy: Path, signer: str) -> None:
    outsider = nacl.signing.SigningKey.generate() if signer == "outsider" else None
    forged = forged_record(site.k1, site.k2, old_signer=outsider, leaf_count=3)
    forged["prev_seal_sha256"] = site.record["prev_seal_sha256"]
    forged["rotated_at"] = site.record["rotated_at"]
    from ledger.keys import rotation_signed_bytes

    signed = rotation_signed_bytes(forged)
    forged["new_signature"] = site.k2.sign(signed).signature.hex()
    forged["old_signature"] = (outsider or site.k2).sign(signed).signature.hex()
    write_json(copy / "rotations.json", [forged])
    for key in (site.k1, site.k2):
        with pytest.raises(RotationInvalid, match=r"rotations\.json record 1"):
            run(site, key, pub=copy)


def test_the_cli_follows_and_refuses(site: Site, copy: Path, tmp_path: Path, capsys) -> None:
    state = tmp_path / "state.json"
    args = ["monitor", str(site.pub), "--state", str(state)]
    assert main([*args, "--vkey", site.vkey(site.k1)]) == 0
    assert main([*args, "--vkey", site.vkey(site.k2)]) == 0
    capsys.readouterr()
    (copy / "rotations.json").write_bytes(b"[]")
    code = main(["monitor", str(copy), "--vkey", site.vkey(site.k1), "--json"])
    out = json.loads(capsys.readouterr().out)
    new_key_hash = site.vkey(site.k2).split("+")[1]  # the note key that signed, named
    assert code == 1 and out["check"] == "pinned_key" and new_key_hash in json.dumps(out)


def test_an_entry_signed_by_another_key_than_its_eras_fails_naming_the_key(
    site: Site, copy: Path
) -> None:
    """Leaf 3 is K2's (after the hand-over at 3); the same envelope signed by K1 instead fails at
    that leaf, naming the key it was held to."""
    from ledger.envelope import sign_envelope
    from ledger.exceptions import SignatureInvalid
    from ledger.tlog import tiles

    lines = (site.ledger_dir / "axiom_ledger.jsonl").read_bytes().splitlines()
    envelope = json.loads(lines[3])
    unsigned = {k: v for k, v in envelope.items() if k not in ("signature", "axiom_id")}
    anchors = unsigned.pop("anchors")
    resigned = canonical_json(sign_envelope(unsigned, anchors, site.k1))
    tile = tiles.tile_for(0, 0, 5)
    entries = [*lines[:3], resigned, *lines[4:]]
    (copy / tile.entries_path).write_bytes(b"".join(len(e).to_bytes(2, "big") + e for e in entries))
    with pytest.raises(SignatureInvalid, match="leaf 3") as caught:
        run(site, site.k1, pub=copy)
    assert site.hex(site.k2) in str(caught.value)


@pytest.mark.parametrize(
    "content",
    [b"", b"{", b"null", b"[1]", b"[[]]", b"[" * 100_000, b'[{"schema": 1}]', b"[NaN]"],
)
def test_a_hostile_rotations_json_fails_clearly(
    site: Site, copy: Path, content: bytes, capsys
) -> None:
    (copy / "rotations.json").write_bytes(content)
    with pytest.raises(RotationInvalid, match=r"rotations\.json"):
        run(site, site.k1, pub=copy)
    receipt = str(site.receipt(site.old[0]))
    code = main(["verify", receipt, "--pubkey", site.hex(site.k1), "--json"])
    code_rot = main(
        [
            "verify",
            receipt,
            "--pubkey",
            site.hex(site.k1),
            "--rotations",
            str(copy / "rotations.json"),
            "--json",
        ]
    )
    outs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and outs[0]["verdict"] == "valid"
    assert code_rot == 1 and (outs[1]["verdict"], outs[1]["check"]) == ("invalid", "key_rotation")
