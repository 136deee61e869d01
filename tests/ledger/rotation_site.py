"""A published site whose key was rotated: K1 signed and sealed leaves 0-2 and they were
published; `crovia rotate-key` handed over to K2, which signed leaves 3-4; published again. Used by
the verify, publish and monitor tests of issue 16 (one verdict across rotations)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import nacl.signing

from crovia_spider.cli import main
from ledger.canonical import canonical_json
from ledger.keys import build_rotation, generate_signing_key, key_id
from ledger.store import Ledger, default_origin, note_verifier_key
from tests.vectors.make_vectors import sample_envelope


@dataclass
class Site:
    ledger_dir: Path
    pub: Path
    k1: nacl.signing.SigningKey
    k2: nacl.signing.SigningKey
    k1_file: Path
    k2_file: Path
    old: list[str]  # axiom ids signed and sealed by K1, published before the rotation
    new: list[str]  # signed by K2
    before: dict[str, bytes]  # the published receipt bytes of `old` before the rotation
    record: dict

    def hex(self, key: nacl.signing.SigningKey) -> str:
        return bytes(key.verify_key).hex()

    def kid(self, key: nacl.signing.SigningKey) -> str:
        return key_id(bytes(key.verify_key))

    def receipt(self, axiom_id: str) -> Path:
        return self.pub / "receipts" / f"{axiom_id}.json"

    @property
    def origin(self) -> str:
        return default_origin(bytes(self.k1.verify_key))

    def vkey(self, key: nacl.signing.SigningKey) -> str:
        return note_verifier_key(bytes(key.verify_key), self.origin)

    def publish(self) -> None:
        assert main(["publish", str(self.pub), "--ledger-dir", str(self.ledger_dir)]) == 0

    def grow(self, key: nacl.signing.SigningKey, start: int, count: int) -> list[str]:
        with Ledger.open(self.ledger_dir, signing_key=key) as ledger:
            issued = ledger.issue([sample_envelope(n) for n in range(start, start + count)])
            ledger.seal()
        return [i.axiom_id for i in issued]


def new_site(tmp_path: Path) -> Site:
    """A site with two new key files and no ledger yet: K1 its first key, K2 the next."""
    k1_file, k2_file = tmp_path / "k1.key", tmp_path / "k2.key"
    k1, k2 = generate_signing_key(k1_file), generate_signing_key(k2_file)
    return Site(tmp_path / "ledger", tmp_path / "pub", k1, k2, k1_file, k2_file, [], [], {}, {})


def rotated_site(tmp_path: Path, before_rotation=None) -> Site:
    """`before_rotation(site)`, if given, runs after the first publish (K1's era only)."""
    site = new_site(tmp_path)
    k1, k2, k1_file, k2_file = site.k1, site.k2, site.k1_file, site.k2_file
    site.old = site.grow(k1, 0, 3)
    site.publish()
    site.before = {a: site.receipt(a).read_bytes() for a in site.old}
    if before_rotation is not None:
        before_rotation(site)
    rotate = ["rotate-key", "--new-key", str(k2_file), "--key", str(k1_file)]
    assert main([*rotate, "--ledger-dir", str(site.ledger_dir)]) == 0
    site.record = json.loads((site.ledger_dir / "rotations.jsonl").read_bytes())
    site.new = site.grow(k2, 3, 2)
    site.publish()
    return site


def copy_receipt(site: Site, axiom_id: str, where: Path) -> Path:
    """The published receipt copied out of the site (no rotations.json beside it)."""
    where.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(site.receipt(axiom_id), where / f"{axiom_id}.json"))


def forged_record(
    old: nacl.signing.SigningKey,
    new: nacl.signing.SigningKey,
    *,
    old_signer: nacl.signing.SigningKey | None,
    leaf_count: int = 5,
) -> dict:
    """A hand-over from `old` to `new` whose old_signature is by `old_signer` (None: by `new`
    only, the old signature copied from the new one)."""
    record = build_rotation(old_key=old, new_key=new, leaf_count=leaf_count, prev_seal=None)
    from ledger.keys import rotation_signed_bytes

    signed = rotation_signed_bytes(record)
    signer = new if old_signer is None else old_signer
    record["old_signature"] = signer.sign(signed).signature.hex()
    return record


def write_json(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(canonical_json(value))
    return path
