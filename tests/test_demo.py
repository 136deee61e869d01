"""`make demo` prints the full public key, its key id, and follow-up commands that work as pasted.

Before, it printed a 16-character prefix of the public key that looked like a key_id but was not
one, and no way on: the ledger's directory was never named in a command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ledger.keys import key_id, load_signing_key
from tests.scratch import PROJECT_ROOT, bare_env


def test_demo_prints_the_key_and_follow_up_commands_that_work(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "crovia_spider.demo"],
        cwd=PROJECT_ROOT,
        env=bare_env(TMPDIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    key_file = Path(re.search(r"signing key in (\S+)", out)[1])
    verify_key = bytes(load_signing_key(key_file).verify_key)
    assert f"   public key: {verify_key.hex()}\n" in out
    assert f"   key id:     {key_id(verify_key)}\n" in out
    commands = [line.strip() for line in out.split("Try, in a new shell here:\n")[1].splitlines()]
    assert [c.split()[:2] for c in commands] == [
        [".venv/bin/crovia", verb] for verb in ("find", "stats", "prove", "verify", "audit")
    ]
    for command in commands:
        if command.split()[1] != "verify":
            assert f"--ledger-dir {tmp_path}" in command
        # A new shell: no CROVIA_* setting of the demo's, so each names what it needs itself.
        pasted = subprocess.run(
            ["bash", "-c", command], cwd=PROJECT_ROOT, env=bare_env(), capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        assert pasted.returncode == 0, (command, pasted.stderr)
        assert "no key was pinned" not in pasted.stdout  # verify and audit were given the key
