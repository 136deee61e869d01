"""Every key file the docs tell you to create lands where git ignores it (issue 33, obs 10).

Before, docs/ledger.md said `crovia keygen --out witness.key` in the project root, which
.gitignore did not cover: a careless `git add .` would publish a private key.
"""

from __future__ import annotations

import re
import subprocess

from tests.scratch import PROJECT_ROOT

DOCUMENTS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
# A key file a command writes: `--out X.key` (keygen), and `--new-key X.key` (rotate-key's).
CREATED = re.compile(r"--(?:out|new-key)[ =]([^\s`'\"]+\.(?:key|pem))")


def created_key_paths() -> dict[str, str]:
    """Relative path -> the document that creates it (absolute paths are the operator's own)."""
    found: dict[str, str] = {}
    for doc in DOCUMENTS:
        for path in CREATED.findall(doc.read_text(encoding="utf-8")):
            if not path.startswith(("/", "$", "~")) and path.upper() != path:
                found.setdefault(path, doc.name)
    return found


def test_the_docs_create_keys():
    assert "data/keys/signing.key" in created_key_paths()


def test_every_key_the_docs_create_is_ignored_by_git():
    paths = created_key_paths()
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"], cwd=PROJECT_ROOT,
        input="\n".join(paths), capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    assert {p: doc for p, doc in paths.items() if p not in ignored} == {}


def test_a_key_made_in_the_project_root_is_ignored_too():
    probe = "\n".join(["witness.key", "my-signing.key"])
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"], cwd=PROJECT_ROOT, input=probe,
        capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    assert ignored == ["witness.key", "my-signing.key"]
