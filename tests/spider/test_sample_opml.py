"""The sample OPML the README imports (issue 33, obs 10): it ships with the project, and importing
it into the project's own feed list adds nothing and leaves the file as it was, so the README
session works as typed in a clone and leaves `git status` clean. Before, the README imported a
`subscriptions.opml` the repository does not have.
"""

from __future__ import annotations

import shutil

from crovia_spider.cli import main
from crovia_spider.cli.opml import read_opml
from tests.scratch import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "docs" / "examples" / "subscriptions.opml"
COMMAND = "crovia feeds import-opml docs/examples/subscriptions.opml"


def test_the_readme_imports_the_shipped_sample():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    spider = (PROJECT_ROOT / "docs" / "spider.md").read_text(encoding="utf-8")
    assert COMMAND in readme and COMMAND in spider
    assert "import-opml subscriptions.opml" not in readme + spider
    assert SAMPLE.is_file()


def test_importing_the_sample_into_the_project_list_adds_nothing(tmp_path, capsys):
    feeds = tmp_path / "feeds.toml"
    shutil.copy2(PROJECT_ROOT / "config" / "feeds.toml", feeds)
    before = feeds.read_bytes()
    outlines = read_opml(SAMPLE.read_bytes())
    assert len(outlines) >= 2
    assert main(["feeds", "import-opml", str(SAMPLE), "--feeds-file", str(feeds)]) == 0
    out = capsys.readouterr().out
    assert f"0 added, {len(outlines)} already configured, 0 skipped" in out, out
    assert feeds.read_bytes() == before
    assert not list(tmp_path.glob("*.import"))
