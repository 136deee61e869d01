"""A bundle's trust root is the ledger's, after a rotation too: its note verifier key is named by
the origin of the ledger's checkpoints (the first key's), as `crovia publish` and the bundle's own
WACZ name it, not by a name derived from the current key (crovia_spider/cli/bundle_cmds.py)."""

from __future__ import annotations

import io
import json
import zipfile

import nacl.signing

from crovia_spider.cli.bundle_cmds import WACZ, build, verify_bundle
from ledger.store import CheckpointStore, Ledger
from tests.archive.captures import build as capture_ledger

NEW_KEY = nacl.signing.SigningKey(b"\x07" * 32)


def test_a_bundle_after_a_rotation_names_the_logs_origin(tmp_path):
    made = capture_ledger(tmp_path / "ledger")
    with Ledger.open(made.directory, signing_key=made.key) as ledger:
        ledger.rotate_key(NEW_KEY)
    with Ledger.open(made.directory, signing_key=NEW_KEY) as ledger:
        ledger.seal()
    files = build(made.directory, [next(iter(made.captures.values()))["axiom_id"]])
    root = json.loads(files["trust_root.json"])
    origin = CheckpointStore(made.directory).origin()
    assert origin and root["note_verifier_key"].startswith(origin + "+")
    assert root["public_key_hex"] == bytes(NEW_KEY.verify_key).hex()
    with zipfile.ZipFile(io.BytesIO(files[WACZ])) as wacz:
        assert wacz.read("crovia/trust_root.json") == files["trust_root.json"]
        assert wacz.read("crovia/rotations.json") == files["rotations.json"]
    case = io.BytesIO()
    with zipfile.ZipFile(case, "w") as archive:
        for name, data in sorted(files.items()):
            archive.writestr(name, data)
    assert verify_bundle(case.getvalue(), None, None)["receipts"] == 2
