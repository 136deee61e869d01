"""A scratch project for tests that run commands as a user would: no CROVIA_* in the environment.

    root = scratch_project(tmp_path / "proj", feeds_toml)
    proc = run(["scrapy", "list"], cwd=root / "config")

The scratch project holds a copy of this project's scrapy.cfg and config/ (with the given feed
list), and a signing key at the default place (data/keys/signing.key), so default paths, which are
taken from the project root, all point inside it. Commands run from the venv's bin directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ledger.keys import generate_signing_key

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def scratch_project(root: Path, feeds_toml: str) -> Path:
    """Make a project at `root` with `feeds_toml` as config/feeds.toml; returns `root`."""
    (root / "config").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "scrapy.cfg", root / "scrapy.cfg")
    for name in ("classify.toml", "schedule.toml"):
        shutil.copy(PROJECT_ROOT / "config" / name, root / "config" / name)
    (root / "config" / "feeds.toml").write_text(feeds_toml, encoding="utf-8")
    generate_signing_key(root / "data" / "keys" / "signing.key")
    return root


def bare_env(**extra: str) -> dict[str, str]:
    """This environment without any CROVIA_* setting (so defaults apply), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CROVIA_")}
    return {**env, **extra}


def run(argv: list[str], cwd: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """Run `argv` (its first word a program of the venv) in `cwd` with `bare_env(**extra_env)`."""
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=cwd,
        env=bare_env(**extra_env),
        capture_output=True,
        text=True,
        timeout=120,
    )


FAST = ["-s", "CROVIA_POLITE_DELAYS=0", "-s", "DOWNLOAD_DELAY=0", "-s", "RETRY_BACKOFF_BASE=0"]
