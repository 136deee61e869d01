"""A key of the rotation chain is trusted only inside its era (docs/format.md, "When a key is
trusted"): from the hand-over to it to the hand-over from it, by leaf count and by time, in
`crovia audit` and `crovia monitor` as in `crovia verify` and the page (whose receipts are cases
of the differential corpus, tests/web/corpus_eras.py).

Here the hand-over is dated before seals the retiring key made: a record whose `rotated_at`
says K1 retired in 2001 while K1's seals say they were made today. Before eras, both whole-log
checks passed it."""

from __future__ import annotations

import json
import shutil

import pytest

from crovia_spider.cli import main
from ledger.canonical import canonical_json
from ledger.exceptions import RotationInvalid
from ledger.keys import rotation_signed_bytes
from ledger.keys.keychain import verify_chain
from ledger.monitor import DirectorySource, MonitorState, monitor
from tests.ledger.rotation_site import Site, rotated_site, write_json

BACKDATED = "2001-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    return rotated_site(tmp_path_factory.mktemp("rotated"))


def backdated(site: Site) -> dict:
    record = dict(site.record, rotated_at=BACKDATED)
    signed = rotation_signed_bytes(record)
    record["old_signature"] = site.k1.sign(signed).signature.hex()
    record["new_signature"] = site.k2.sign(signed).signature.hex()
    return record


def test_the_monitor_refuses_a_seal_made_after_its_keys_hand_over(site: Site, tmp_path) -> None:
    pub = tmp_path / "pub"
    shutil.copytree(site.pub, pub)
    assert monitor(DirectorySource(pub), site.vkey(site.k2), MonitorState.empty(site.origin))
    write_json(pub / "rotations.json", [backdated(site)])
    with pytest.raises(RotationInvalid, match="after the hand-over from its key"):
        monitor(DirectorySource(pub), site.vkey(site.k2), MonitorState.empty(site.origin))


def test_the_audit_refuses_a_seal_made_after_its_keys_hand_over(site: Site, tmp_path, capsys):
    ledger_dir = tmp_path / "ledger"
    shutil.copytree(site.ledger_dir, ledger_dir)
    assert main(["audit", "--ledger-dir", str(ledger_dir)]) == 0
    (ledger_dir / "rotations.jsonl").write_bytes(canonical_json(backdated(site)) + b"\n")
    capsys.readouterr()
    assert main(["audit", "--ledger-dir", str(ledger_dir), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["check"] == "key_rotation" and "seals.jsonl line 1" in json.dumps(out)


def test_an_era_holds_both_ends_inclusive(site: Site) -> None:
    chain = verify_chain(site.hex(site.k1), [site.record])
    count, at = site.record["leaf_count"], site.record["rotated_at"]
    old = {"public_key_hex": site.hex(site.k1), "leaf_count": count, "sealed_at": at}
    new = {"public_key_hex": site.hex(site.k2), "leaf_count": count, "sealed_at": at}
    chain.check_seal_era(old, "old")  # the retiring key's last seal, the second of the hand-over
    chain.check_seal_era(new, "new")  # the new key may seal at once
    for seal, change in (
        (old, {"leaf_count": count + 1}),
        (old, {"sealed_at": "2999-01-01T00:00:00Z"}),
        (new, {"leaf_count": count - 1}),
        (new, {"sealed_at": BACKDATED}),
        (new, {"sealed_at": "2026-06-18T04:43:37.5Z"}),
    ):
        with pytest.raises(RotationInvalid):
            chain.check_seal_era({**seal, **change}, "seal")
    stranger = {"public_key_hex": "ab" * 32, "leaf_count": 10**6, "sealed_at": "x"}
    chain.check_seal_era(stranger, "a key outside the chain has no era here")
