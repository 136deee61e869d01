"""`crovia rotate-key` leaves the operator a trust root that works: the new key with the whole
signed chain and the note key named after the log's origin (not after the new key), written by
`--trust-root` or by the exact command it prints. Pinned, receipts from before the hand-over stay
valid and `crovia monitor` follows the log. (Its earlier hint, `crovia pubkey --key FILE
--trust-root OUT`, read no rotation and named the note key after the new key: old receipts became
"unpinned" and the monitor exited 1.)"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from crovia_spider.cli import main
from tests.ledger.rotation_site import Site, new_site


@pytest.fixture
def site(tmp_path: Path) -> Site:
    site = new_site(tmp_path)
    site.old = site.grow(site.k1, 0, 3)
    site.publish()
    site.before = {a: site.receipt(a).read_bytes() for a in site.old}
    return site


def rotate(site: Site, *extra: str) -> None:
    args = ["rotate-key", "--new-key", str(site.k2_file), "--key", str(site.k1_file)]
    assert main([*args, "--ledger-dir", str(site.ledger_dir), *extra]) == 0
    site.record = json.loads((site.ledger_dir / "rotations.jsonl").read_bytes())
    site.new = site.grow(site.k2, 3, 2)
    site.publish()


def check_root(site: Site, root_file: Path, tmp_path: Path, capsys) -> None:
    root = json.loads(root_file.read_bytes())
    assert root["public_key_hex"] == site.hex(site.k2)
    assert root["key_rotations"] == [site.record]
    assert root["note_verifier_key"] == site.vkey(site.k2)  # the log's origin, K1's default
    old = tmp_path / "old.json"
    old.write_bytes(site.before[site.old[0]])
    capsys.readouterr()
    assert main(["verify", str(old), "--trust-root", str(root_file)]) == 0
    assert main(["verify", str(site.receipt(site.new[0])), "--trust-root", str(root_file)]) == 0
    assert main(["monitor", str(site.pub), "--vkey", root["note_verifier_key"]]) == 0


def test_rotate_key_writes_the_trust_root(site: Site, tmp_path: Path, capsys) -> None:
    root_file = tmp_path / "root.json"
    rotate(site, "--trust-root", str(root_file))
    assert str(root_file) in capsys.readouterr().out
    check_root(site, root_file, tmp_path, capsys)


def test_the_command_rotate_key_prints_writes_the_same_trust_root(
    site: Site, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the hint's command is typed in another folder than the ledger's
    rotate(site)
    out = capsys.readouterr().out
    hint = next(line for line in out.splitlines() if "written again at any time by: " in line)
    command = shlex.split(hint.split("written again at any time by: ")[1])
    assert command[:2] == ["crovia", "pubkey"] and command[-1] == "OUT.json"
    assert main(command[1:]) == 0
    check_root(site, tmp_path / "OUT.json", tmp_path, capsys)


def test_a_trust_root_refused_before_the_hand_over(site: Site, tmp_path: Path, capsys) -> None:
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    args = ["rotate-key", "--new-key", str(site.k2_file), "--key", str(site.k1_file)]
    code = main([*args, "--ledger-dir", str(site.ledger_dir), "--trust-root", str(taken)])
    assert code == 2 and not (site.ledger_dir / "rotations.jsonl").exists()
