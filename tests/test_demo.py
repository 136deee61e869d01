"""`make demo` prints the full public key, its key id, and follow-up commands that work as pasted;
it stamps its seal at a local OpenSSL TSA, so trusted time can be seen working.

Before, it printed a 16-character prefix of the public key that looked like a key_id but was not
one, and no way on: the ledger's directory was never named in a command. It showed "stamps: none":
no receipt of it carried a third party's time (issue 17, obs 7).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ledger.keys import key_id, load_signing_key
from tests.scratch import PROJECT_ROOT, bare_env

PINNED_TIME = "earliest time vouched for by a pinned third party: "


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, str]:
    """`python -m crovia_spider.demo --dir DIR`, as `make demo` runs it; (DIR, its stdout)."""
    tmp_path = tmp_path_factory.mktemp("demo")
    work = tmp_path / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "crovia_spider.demo", "--dir", str(work)],
        cwd=PROJECT_ROOT, env=bare_env(TMPDIR=str(tmp_path)), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return work, proc.stdout


def test_demo_prints_the_key_and_follow_up_commands_that_work(demo):
    work, out = demo
    key_file = Path(re.search(r"signing key in (\S+)", out)[1])
    verify_key = bytes(load_signing_key(key_file).verify_key)
    assert f"   public key: {verify_key.hex()}\n" in out
    assert f"   key id:     {key_id(verify_key)}\n" in out
    assert (work / "public_key.hex").read_text() == f"{verify_key.hex()}\n"  # README's session
    commands = [line.strip() for line in out.split("Try, in a new shell here:\n")[1].splitlines()]
    assert [c.split()[:2] for c in commands] == [
        [".venv/bin/crovia", verb] for verb in ("find", "stats", "prove", "verify", "audit")
    ]
    for command in commands:
        if command.split()[1] != "verify":
            assert f"--ledger-dir {work}" in command
        # A new shell: no CROVIA_* setting of the demo's, so each names what it needs itself.
        pasted = subprocess.run(
            ["bash", "-c", command], cwd=PROJECT_ROOT, env=bare_env(), capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        assert pasted.returncode == 0, (command, pasted.stderr)
        assert "no key was pinned" not in pasted.stdout  # verify and audit were given the key


def test_demo_ends_with_a_receipt_whose_stamp_verify_checks_with_the_tsa_root(demo):
    work, out = demo
    receipt = json.loads((work / "receipt.json").read_bytes())
    (token,) = receipt["rfc3161_timestamps"]
    assert token["tsa_url"].startswith("http://127.0.0.1:")
    assert f"   {PINNED_TIME}{token['gen_time']}" in out
    (verify,) = [
        c.strip() for c in out.splitlines() if c.strip().startswith(".venv/bin/crovia verify")
    ]
    assert f"--tsa-root {work / 'tsa' / 'ca.pem'}" in verify
    pasted = subprocess.run(
        ["bash", "-c", verify], cwd=PROJECT_ROOT, env=bare_env(), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert pasted.returncode == 0, pasted.stderr
    assert "chained to a pinned root" in pasted.stdout
    assert f"{PINNED_TIME}{token['gen_time']}" in pasted.stdout
    # Without the TSA's root the receipt has no pinned third-party time: the pin is what counts.
    unpinned = subprocess.run(
        ["bash", "-c", verify.split(" --tsa-root")[0]], cwd=PROJECT_ROOT, env=bare_env(),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert PINNED_TIME not in unpinned.stdout


def test_demo_runs_twice_into_the_same_folder(demo, tmp_path):
    """`make demo` twice in a row (the README session does): the second run starts afresh."""
    work, _ = demo
    again = subprocess.run(
        [sys.executable, "-m", "crovia_spider.demo", "--dir", str(work)],
        cwd=PROJECT_ROOT, env=bare_env(TMPDIR=str(tmp_path)), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert (work / "receipt.json").is_file()
