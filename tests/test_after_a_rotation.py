"""What outlives a key rotation (issue 43, obs 10), on a real ledger: crawled with page captures by
key K1 (`scrapy crawl` against a site on 127.0.0.1), stamped by OpenSSL's own TSA, a WACZ exported,
the key rotated to K2 (`crovia rotate-key`), a WACZ exported again, the pages captured once more
by K2 and stamped.

- A restore from exactly the list docs/operations.md ("Backups") says to keep audits (`crovia
  reindex`, `crovia audit`), and proves the same receipts and tlog proofs as the ledger; the old
  list (no rotations.jsonl, bodies/, tlog/, stamps/) fails the audit. Every file the ledger holds
  is either kept or said to be rebuilt, and every file docs/ledger.md calls truth is kept.
- A WACZ carries the trust root and rotations.json of its export: exported after the rotation, its
  receipts (sealed by K1) verify from the WACZ alone with K2 pinned; exported before it, they
  verify with K2 pinned and the chain the operator publishes after it (docs/archives.md).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from crovia_spider.demo_tsa import OpenSslTsa, TestPki
from ledger.keys import generate_signing_key
from tests.capture.pages import script_site
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, leaves, run_crawl
from tests.feedserver import FeedServer

DOCS = PROJECT_ROOT / "docs"
FAST = ["-s", "CROVIA_POLITE_DELAYS=0", "-s", "DOWNLOAD_DELAY=0", "-s", "RETRY_BACKOFF_BASE=0"]


@dataclass
class Rotated:
    base: Path  # crawl_env's tree: ledger/, keys/, feeds.toml
    k1: str  # public key hex
    k2: str
    before: Path  # the WACZ exported before the rotation
    after: Path  # the WACZ exported after it, before K2 sealed anything
    trust_root: Path  # what the operator publishes after the rotation (`crovia pubkey --key K2`)

    @property
    def ledger(self) -> Path:
        return self.base / "ledger"


def crovia(base: Path, *args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "crovia"), *map(str, args)],
        cwd=PROJECT_ROOT,
        env=crawl_env(base, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def public_hex(base: Path, key: Path) -> str:
    return json.loads(ok(crovia(base, "pubkey", "--key", key, "--json")).stdout)["public_key_hex"]


@pytest.fixture(scope="module")
def rotated(tmp_path_factory: pytest.TempPathFactory) -> Rotated:
    base = tmp_path_factory.mktemp("rotated")
    pki = TestPki(base / "pki")
    k1_file, k2_file = base / "keys" / "signing.key", base / "keys" / "k2.key"
    with FeedServer() as server:
        crawled = run_crawl(base, script_site(server), *FAST)  # K1 (crawl_env makes it)
        assert crawled.returncode == 0, crawled.stderr[-2000:]
        with OpenSslTsa(pki) as tsa:
            ok(crovia(base, "stamp", CROVIA_TSA_URLS=tsa.url))
        before, after = base / "before.wacz", base / "after.wacz"
        ok(crovia(base, "export", "--vendor", "lab", "--wacz", before))
        generate_signing_key(k2_file)
        ok(crovia(base, "rotate-key", "--key", k1_file, "--new-key", k2_file))
        ok(crovia(base, "export", "--vendor", "lab", "--wacz", after))
        trust_root = base / "published_trust_root.json"
        ok(crovia(base, "pubkey", "--key", k2_file, "--trust-root", trust_root))
        k2_env = {"CROVIA_SIGNING_KEY_FILE": str(k2_file)}
        ok(crovia(base, "capture", "--all", *FAST, **k2_env))
        with OpenSslTsa(pki) as tsa:
            ok(crovia(base, "stamp", CROVIA_TSA_URLS=tsa.url, **k2_env))
    return Rotated(
        base, public_hex(base, k1_file), public_hex(base, k2_file), before, after, trust_root
    )


def _section(doc: Path, heading: str) -> str:
    text = doc.read_text(encoding="utf-8")
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def _tables(section: str) -> dict[str, list[list[str]]]:
    """Each markdown table of `section`: its first header cell -> the paths (backquoted) named in
    the first cell of each row."""
    tables: dict[str, list[list[str]]] = {}
    for block in re.findall(r"(?:^\|.*\n)+", section, re.M):
        rows = [line.split("|")[1].strip() for line in block.splitlines()]
        tables[rows[0]] = [re.findall(r"`([^`]+)`", cell) for cell in rows[2:]]
    return tables


def backup_list() -> tuple[list[str], set[str]]:
    """(the paths docs/operations.md says to keep, those it says are rebuilt)."""
    tables = _tables(_section(DOCS / "operations.md", "## Backups"))
    keep = [paths[0] for paths in tables["keep"]]
    rebuilt = {path for paths in tables["rebuilt"] for path in paths}
    assert keep and rebuilt, "docs/operations.md, Backups: a `keep` table and a `rebuilt` table"
    return keep, rebuilt


def restore(ledger: Path, paths: list[str], into: Path) -> Path:
    """Copy `paths` (those of them this ledger has) of `ledger` into the empty `into`."""
    into.mkdir()
    for path in paths:
        source = ledger / path.rstrip("/")
        if source.is_dir():
            shutil.copytree(source, into / path.rstrip("/"))
        elif source.exists():
            shutil.copy2(source, into / path)
    return into


def test_the_ledger_holds_what_the_backups_must_cover(rotated):
    """The ledger below is the case the old list failed: a rotation, kept bodies, stamps and
    checkpoints, each era sealed."""
    rotations = (rotated.ledger / "rotations.jsonl").read_text().splitlines()
    assert len(rotations) == 1
    assert any((rotated.ledger / "stamps").rglob("*")) and any(
        (rotated.ledger / "bodies").iterdir()
    )
    assert (rotated.ledger / "tlog" / "checkpoints.jsonl").stat().st_size > 0
    seals = [json.loads(line) for line in (rotated.ledger / "seals.jsonl").read_text().splitlines()]
    assert {s["public_key_hex"] for s in seals} == {rotated.k1, rotated.k2}
    captures = [e for e in leaves(rotated.base) if e["axiom_type"] == "AX.CAPTURE"]
    assert len(captures) == 6  # three pages, captured by each key


def test_a_restore_from_the_old_list_fails_the_audit(rotated, tmp_path):
    old = ["axiom_ledger.jsonl", "seals.jsonl", "runs.jsonl", "quarantine/"]
    restored = restore(rotated.ledger, old, tmp_path / "restored")
    ok(crovia(rotated.base, "reindex", "--ledger-dir", restored))
    audited = crovia(rotated.base, "audit", "--ledger-dir", restored)
    assert audited.returncode == 1
    assert "with no rotation to it" in audited.stderr


def test_a_restore_from_the_documented_list_audits_and_proves_the_same(rotated, tmp_path):
    keep, _ = backup_list()
    restored = restore(rotated.ledger, keep, tmp_path / "restored")
    ok(crovia(rotated.base, "reindex", "--ledger-dir", restored))
    audited = ok(
        crovia(rotated.base, "audit", "--ledger-dir", restored, "--pubkey", rotated.k1, "--bodies")
    )
    assert "followed 1 key rotation(s)" in audited.stdout
    # What the audit does not read is restored too: the stamps and checkpoints in each receipt
    # and tlog proof, of either key's era.
    ids = [e["axiom_id"] for e in leaves(rotated.base) if e["axiom_type"] == "AX.CAPTURE"]
    for axiom_id in (ids[0], ids[-1]):
        proofs = []
        for where in (rotated.ledger, restored):
            receipt, proof = tmp_path / "receipt.json", tmp_path / "proof"
            ok(crovia(rotated.base, "prove", axiom_id, "--ledger-dir", where, "--out", receipt,
                      "--tlog-proof", proof, "--force"))  # fmt: skip
            proofs.append((receipt.read_bytes(), proof.read_bytes()))
        assert proofs[0] == proofs[1]
        assert json.loads(proofs[1][0])["rfc3161_timestamps"], "the seal's stamp came back"


def test_every_file_of_the_ledger_is_kept_or_rebuilt(rotated):
    keep, rebuilt = backup_list()
    named = {p.rstrip("/") for p in [*keep, *rebuilt]}
    found = {p.name for p in rotated.ledger.iterdir()}
    assert found - named == set(), "docs/operations.md, Backups: neither kept nor rebuilt"
    assert {"rotations.jsonl", "stamps/", "bodies/", "tlog/"} <= set(keep)
    # docs/ledger.md's storage layout: every file it calls truth (or kept) is in the backup list.
    layout = _section(DOCS / "ledger.md", "## Storage layout (one directory, `CROVIA_LEDGER_DIR`)")
    truth = {
        re.match(r"[^/]+/?", path)[0]
        for path, kind in re.findall(r"^\| `([^`]+)` \| (\w+) \|", layout, re.M)
        if kind in ("truth", "kept")
    }
    assert truth and truth <= set(keep), truth - set(keep)


def _unzip_evidence(wacz: Path, into: Path) -> Path:
    with zipfile.ZipFile(wacz) as archive:
        archive.extractall(into, [n for n in archive.namelist() if n.startswith("crovia/")])
    return into / "crovia"


def _receipts(evidence: Path) -> list[Path]:
    receipts = sorted(evidence.glob("axm_*.json"))
    assert len(receipts) == 3
    return receipts


def verify(rotated: Rotated, receipt: Path, *pins: str | Path) -> subprocess.CompletedProcess[str]:
    return crovia(rotated.base, "verify", receipt, *pins)


def test_a_wacz_exported_after_a_rotation_verifies_alone_with_the_new_key_pinned(rotated, tmp_path):
    evidence = _unzip_evidence(rotated.after, tmp_path)
    # What the operator publishes after the rotation, byte for byte.
    assert (evidence / "trust_root.json").read_bytes() == rotated.trust_root.read_bytes()
    assert json.loads((evidence / "trust_root.json").read_bytes())["public_key_hex"] == rotated.k2
    rotations = json.loads((evidence / "rotations.json").read_bytes())
    assert [(r["old_public_key_hex"], r["new_public_key_hex"]) for r in rotations] == [
        (rotated.k1, rotated.k2)
    ]
    for receipt in _receipts(evidence):
        assert json.loads(receipt.read_bytes())["seal"]["public_key_hex"] == rotated.k1
        alone = verify(rotated, receipt, "--pubkey", rotated.k2)
        assert alone.returncode == 1 and "--rotations FILE" in alone.stderr, alone.stderr
        for pins in (
            ["--pubkey", rotated.k2, "--rotations", evidence / "rotations.json"],
            ["--trust-root", evidence / "trust_root.json"],
        ):
            done = ok(verify(rotated, receipt, *pins))
            assert "verdict: valid" in done.stdout, done.stdout
    checked = subprocess.run(
        [str(BIN / "wacz"), "validate", "-f", str(rotated.after)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0 and "the passed WACZ is valid" in checked.stdout


def test_a_wacz_exported_before_a_rotation_verifies_with_the_chain_published_after(
    rotated, tmp_path
):
    evidence = _unzip_evidence(rotated.before, tmp_path / "before")
    assert json.loads((evidence / "trust_root.json").read_bytes())["public_key_hex"] == rotated.k1
    assert (evidence / "rotations.json").read_bytes() == b"[]"
    # The operator's rotations.json after the rotation (a later WACZ's, or the site's).
    published = _unzip_evidence(rotated.after, tmp_path / "after") / "rotations.json"
    for receipt in _receipts(evidence):
        ok(verify(rotated, receipt, "--trust-root", evidence / "trust_root.json"))
        # K2 did not exist when it was exported: nothing in it can lead there.
        own = ["--pubkey", rotated.k2, "--rotations", evidence / "rotations.json"]
        refused = verify(rotated, receipt, *own)
        assert refused.returncode == 1 and "verdict: unpinned" in refused.stderr
        for pins in (
            ["--pubkey", rotated.k2, "--rotations", published],
            ["--trust-root", rotated.trust_root],
        ):
            done = ok(verify(rotated, receipt, *pins))
            assert "verdict: valid" in done.stdout, done.stdout
