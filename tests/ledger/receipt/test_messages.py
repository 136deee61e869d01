"""Issue 33, observations 3 and 4: what `crovia prove` and `crovia verify` tell a user works as
printed and says in words what failed.

- `crovia prove --out FILE` prints a `crovia verify` command that, run as printed, exits 0 (it
  used to print one without a pin, which exits 1, unpinned);
- `crovia verify OLD --pubkey NEW` after a key rotation, with no chain at hand, names
  `--rotations FILE` and `--trust-root FILE`;
- another site's stamped receipt under my trust root is refused in words ("does not chain to a
  pinned root: no pinned TSA root issued it"), never with OpenSSL's error stack; and no token
  with a flipped byte gets a library's dump for a message.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import warnings
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.utils import CryptographyDeprecationWarning

from crovia_spider.cli import main
from crovia_spider.demo_tsa import OPENSSL, OpenSslTsa, TestPki
from ledger.exceptions import Rfc3161Invalid
from ledger.keys import generate_signing_key
from ledger.stamps.tst import check_token
from tests.crawl import BIN, PROJECT_ROOT
from tests.ledger.rotation_site import copy_receipt, rotated_site
from tests.vectors.make_vectors import TEST_KEY, build_ledger
from tests.web import corpus as c

DUMPS = ("ErrorStack", "code:", "library:", "ParseError", "<TagSet", "object at 0x")


def run_as_printed(line: str) -> subprocess.CompletedProcess[str]:
    """The `crovia verify ...` command at the end of `line`, run as a shell would split it."""
    command = shlex.split(line[line.index("crovia verify ") :])
    assert command[0] == "crovia"
    return subprocess.run(
        [str(BIN / "crovia"), *command[1:]],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def prove_hint(capsys: pytest.CaptureFixture, ledger_dir: Path, axiom_id: str, out: Path) -> str:
    assert main(["prove", axiom_id, "--ledger-dir", str(ledger_dir), "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    hints = [line for line in lines if "crovia verify " in line]
    assert len(hints) == 1, lines
    return hints[0]


# -- observation 3: hints that work as printed ----------------------------------------------------


def test_proves_hint_runs_as_printed_and_exits_0(tmp_path: Path, capsys) -> None:
    receipts = build_ledger(tmp_path / "ledger", 3)
    out = tmp_path / "my receipts" / "leaf 1.json"  # a space: the path is quoted
    out.parent.mkdir()
    hint = prove_hint(capsys, tmp_path / "ledger", receipts[1]["axiom_id"], out)
    assert f"--pubkey {bytes(TEST_KEY.verify_key).hex()}" in hint
    done = run_as_printed(hint)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verdict: valid" in done.stdout


def test_proves_hint_after_key_rotations_runs_as_printed(tmp_path: Path, capsys) -> None:
    site = rotated_site(tmp_path / "site")
    for axiom_id in (site.old[0], site.new[0]):  # sealed by K2 either way: its newest seal
        hint = prove_hint(capsys, site.ledger_dir, axiom_id, tmp_path / f"{axiom_id}.json")
        done = run_as_printed(hint)
        assert done.returncode == 0, (hint, done.stdout + done.stderr)
    k3 = tmp_path / "k3.key"
    generate_signing_key(k3)
    rotate = ["rotate-key", "--new-key", str(k3), "--key", str(site.k2_file)]
    assert main([*rotate, "--ledger-dir", str(site.ledger_dir)]) == 0
    capsys.readouterr()
    hint = prove_hint(capsys, site.ledger_dir, site.new[0], tmp_path / "after-k3.json")
    assert "rotated to" in hint  # the seal's key is no longer the ledger's, and it says so
    done = run_as_printed(hint)
    assert done.returncode == 0, (hint, done.stdout + done.stderr)


def test_verify_with_the_new_key_names_how_to_give_the_chain(tmp_path: Path, capsys) -> None:
    site = rotated_site(tmp_path / "site")
    old = copy_receipt(site, site.old[0], tmp_path / "alone")  # no rotations.json beside it
    assert main(["verify", str(old), "--pubkey", site.hex(site.k2)]) == 1
    err = capsys.readouterr().err
    assert "verdict: unpinned (check pinned_key)" in err
    assert "--rotations FILE" in err and "--trust-root FILE" in err
    assert main(["verify", str(old), "--pubkey", site.hex(site.k2), "--json"]) == 1
    message = json.loads(capsys.readouterr().out)["message"]
    assert "--rotations FILE" in message and "--trust-root FILE" in message
    rotations = site.pub / "rotations.json"
    pinned = ["--pubkey", site.hex(site.k2), "--rotations", str(rotations)]
    assert main(["verify", str(old), *pinned]) == 0  # the way it names works


# -- observation 4: what failed, in words ---------------------------------------------------------


@pytest.fixture(scope="module")
def two_sites(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Another site's receipt stamped by its TSA, and my trust root naming my TSA root only."""
    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    work = tmp_path_factory.mktemp("two-sites")
    theirs, mine = TestPki(work / "theirs", name="Theirs"), TestPki(work / "mine", name="Mine")
    receipt = build_ledger(work / "ledger", 3)[0]
    data = c.seal_bytes(receipt)
    with OpenSslTsa(theirs) as tsa:
        token = c.der_token(c.tsa_token(tsa, data))
        stamped = c.with_token(receipt, token, c.gen_time_of(token, data), tsa.url)
    path = work / "receipt.json"
    path.write_bytes(c.receipt_bytes(stamped))
    trust = work / "trust_root.json"
    trust.write_text(json.dumps(c.trust_root(TEST_KEY, tsa_roots=c.tsa_roots_pem(mine))))
    return path, trust, mine.root


def test_another_sites_stamp_under_my_trust_root_is_refused_in_words(two_sites) -> None:
    receipt, trust, _root = two_sites
    for extra in ([], ["--json"]):
        done = subprocess.run(
            [str(BIN / "crovia"), "verify", str(receipt), "--trust-root", str(trust), *extra],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1, done.stdout + done.stderr
        said = done.stdout + done.stderr
        assert "does not chain to a pinned root: no pinned TSA root issued it" in said, said
        assert "unable to get local issuer certificate" in said  # OpenSSL's phrase, as a value
        assert not [dump for dump in DUMPS if dump in said], said


def test_no_flipped_byte_of_a_token_gets_a_librarys_dump(tmp_path: Path, pki_root) -> None:
    """Every byte of a genuine token flipped: each refusal is a sentence, not a repr."""
    token, data, roots = pki_root
    dumped = []
    for position in range(len(token)):
        changed = bytearray(token)
        changed[position] ^= 0x01
        try:
            with warnings.catch_warnings():  # a flipped serial number: cryptography warns of it
                warnings.simplefilter("ignore", CryptographyDeprecationWarning)
                check_token(bytes(changed), data, roots)
        except Rfc3161Invalid as refused:
            said = f"{refused} {refused.computed}"
            if any(dump in said for dump in DUMPS) or len(said) > 600:
                dumped.append((position, said[:300]))
    assert not dumped, (len(dumped), dumped[:5])


@pytest.fixture(scope="module")
def pki_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes, list]:
    assert OPENSSL, "openssl is missing: apt-get install -y openssl"
    work = tmp_path_factory.mktemp("flips")
    pki = TestPki(work / "pki")
    data = c.seal_bytes(build_ledger(work / "ledger", 2)[0])
    with OpenSslTsa(pki) as tsa:
        token = c.der_token(c.tsa_token(tsa, data))
    return token, data, [x509.load_pem_x509_certificate(pki.root.read_bytes())]
