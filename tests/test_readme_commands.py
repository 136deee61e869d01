"""Every command of README.md and docs/*.md works as written, typed in a new shell of a fresh copy.

What runs: each line of each ```sh block (a line ending in `\\` joins the next), in document order,
README first, then docs/ by name, and then all of it a second time in the same copy: a user goes
through a session more than once, so no line may depend on a file it wrote last time not being
there (issue 17, obs 1). ```text blocks are synopses (`[...]` optional, CAPITALS to fill
in) and other blocks are config or log samples: they are not commands. Each line runs in a new
`bash -c` whose PATH does not hold the venv, preceded by the activation line README documents, so
`crovia: command not found` cannot pass.

Where: a copy of the project's tracked files (what a clone holds: `git ls-files`, never a file a
session left in this checkout) in tmp_path,
with its `.venv` a link to this one, and with no CROVIA_* variable set: default paths resolve
inside the copy. The copy's config/feeds.toml lists the demo feeds, with the ids the commands use
(openai, arxiv_cs_ai, ...), served on 127.0.0.1, so every crawl is real and nothing reaches the
internet, and every other feed of the project's list as it is, disabled: the sample OPML the README
imports (docs/examples/subscriptions.opml, shipped) holds some of those, so the import adds
nothing, as in a clone. CROVIA_POLITE_DELAYS=0 only saves time.

Not run, each for its reason in SKIP: they are left out of the parametrised cases (so nothing is
reported as skipped), and every entry must match a command, so the list cannot rot.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from crovia_spider.demo import DEMO_FEEDS, VENDORS, serve
from tests.scratch import PROJECT_ROOT

ACTIVATE = ". .venv/bin/activate"
# Command (as written, comment included) -> why it cannot run here.
SKIP = {
    "make test": "it is the suite this test belongs to",
    "scrapy crawl vendor_press -a vendor=example_lab": "needs the [[feeds]] entry above added by "
    "hand, and the internet (example.org)",
    "crovia schedule  ": "runs until stopped",
    "crovia schedule --config my.toml": "runs until stopped, and needs the user's my.toml",
    "systemctl ": "installs a system service",
    "flock -w 600 /var/lib/crovia/ledger/ledger.lock": "copies to a backup host",
    "crovia audit --ledger-dir /srv/backups/crovia-ledger": "needs the backup host's copy",
    "python -m http.server -d public 8080": "serves until stopped (publish tests serve it)",
    "crovia serve public/ --port 8000": "serves until stopped (tests/web/test_serve.py runs it)",
    "crovia sequencer --redis": "runs until stopped, on a cluster's Redis (tests/cluster/ runs it"
    " against a Redis of its own)",
    "crovia worker --redis": "runs until stopped, on a cluster's Redis (tests/cluster/)",
    "crovia crawl --redis": "needs a running cluster (tests/cluster/test_cluster_crawl.py)",
    "crovia workers --redis": "reads a cluster's Redis (tests/cluster/ reads its own)",
}
DOCUMENTS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]


def shell_commands(markdown: str) -> list[str]:
    """The command lines of the ```sh blocks of `markdown`, continuation lines joined."""
    commands: list[str] = []
    for block in re.findall(r"^ *```sh\n(.*?)^ *```", markdown, re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip():
                commands.append(line.strip())
    return commands


def skip_reason(command: str) -> str | None:
    return next((why for start, why in SKIP.items() if (command + "  ").startswith(start)), None)


ALL = [(doc, c) for doc in DOCUMENTS for c in shell_commands(doc.read_text(encoding="utf-8"))]
RUN = [(doc, c) for doc, c in ALL if skip_reason(c) is None]


def test_readme_says_how_to_reach_the_commands():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert ACTIVATE in shell_commands(readme)
    assert ".venv/bin/crovia" in readme
    quick_start = readme.split("## Quick start")[1].split("##")[0]
    assert shell_commands(quick_start)[:2] == [
        "make crawl     # harvest every configured feed into data/ledger/ (creates a signing key"
        " on first use)",
        "make test      # the whole test suite, offline",
    ]


def test_every_skip_entry_matches_a_command():
    for start in SKIP:
        assert any((c + "  ").startswith(start) for _, c in ALL), start


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory):
    """A copy of the project as a clone has it, its feed list on a loopback server."""
    root = tmp_path_factory.mktemp("clone") / "crovia-spider"
    for name in _project_files():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT_ROOT / name, root / name)
    (root / ".venv").symlink_to(PROJECT_ROOT / ".venv")
    # make would reinstall (into the shared venv, from the copy) if pyproject.toml or the lock
    # looked newer.
    stamp = (PROJECT_ROOT / ".venv" / ".installed-stamp").stat().st_mtime
    for name in ("pyproject.toml", "requirements.lock"):
        os.utime(root / name, (stamp - 1, stamp - 1))
    server = serve(DEMO_FEEDS)
    port = server.server_address[1]
    feeds = [(vendor, f"http://127.0.0.1:{port}/{name}") for name, vendor in VENDORS.items()]
    served = "".join(f'[[feeds]]\nvendor = "{v}"\nurl = "{u}"\n\n' for v, u in feeds)
    (root / "config" / "feeds.toml").write_text(served + _other_feeds_disabled())
    yield root
    server.shutdown()
    server.server_close()


def _other_feeds_disabled() -> str:
    """The project's feeds the demo does not serve, as [[feeds]] tables with enabled = false."""
    from crovia_spider.config.feeds import load_feeds

    demo = set(VENDORS.values())
    others = [f for f in load_feeds(PROJECT_ROOT / "config" / "feeds.toml") if f.vendor not in demo]
    return "".join(
        f'[[feeds]]\nvendor = "{f.vendor}"\nurl = "{f.url}"\nenabled = false\n\n' for f in others
    )


def _project_files() -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "-z"],
        cwd=PROJECT_ROOT, capture_output=True, check=True,
    )  # fmt: skip
    names = listing.stdout.decode().split("\0")
    return [n for n in names if n and (PROJECT_ROOT / n).is_file()]


def new_shell_env(root: Path) -> dict[str, str]:
    """A new login's environment: no venv on PATH, no CROVIA_* setting, the copy as PYTHONPATH
    (so its code, not this checkout's, is what runs), temporary files inside the test's tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CROVIA_", "VIRTUAL_ENV"))}
    return env | {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(root),
        "TMPDIR": str(root.parent),
        "CROVIA_POLITE_DELAYS": "0",
    }


TWICE = [(n, doc, c) for n in (1, 2) for doc, c in RUN]


@pytest.mark.parametrize(
    ("round_", "document", "command"), TWICE, ids=[f"{n}-{d.name}:{c[:50]}" for n, d, c in TWICE]
)
def test_command_works_as_written(fresh_copy, round_, document, command):
    proc = subprocess.run(
        ["bash", "-c", f"{ACTIVATE}\n{command}"], cwd=fresh_copy, env=new_shell_env(fresh_copy),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    where = f"round {round_}, {document.name}: {command}"
    assert proc.returncode == 0, f"{where}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr


def test_the_sessions_leave_files_only_where_git_ignores_them(fresh_copy):
    """Run after both rounds: a file the commands wrote outside an ignored folder would show in
    `git status` and be copied by a careless `git add .` (a receipt in the root did, obs 1)."""
    assert (fresh_copy / "data" / "demo" / "receipt.json").is_file(), "the sessions ran first"
    tracked = set(_project_files())
    written = sorted(
        str(p.relative_to(fresh_copy))
        for p in fresh_copy.rglob("*")
        if p.is_file() and ".venv" not in p.relative_to(fresh_copy).parts
    )
    new = [name for name in written if name not in tracked]
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"], cwd=PROJECT_ROOT, input="\n".join(new),
        capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    # Written on purpose: the spider `scrapy genspider` makes.
    expected = {"crovia_spider/spiders/lab_notes.py"}
    assert sorted(set(new) - set(ignored) - expected) == []
