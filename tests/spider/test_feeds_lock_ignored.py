"""`crovia feeds add` locks the feed list with `.NAME.lock` beside it (crovia_spider/cli/
feeds_write.py). In a checkout that is `config/.feeds.toml.lock`, which `git status` listed as
untracked after every add (issue 43, obs 11): the repository ignores it."""

from __future__ import annotations

import shutil
import subprocess

from crovia_spider.cli.feeds_write import add_entry
from tests.crawl import PROJECT_ROOT

GIT = shutil.which("git") or "/usr/bin/git"


def ignored(path: str) -> bool:
    """Whether the checkout's .gitignore ignores `path` (relative to it), tracked or not."""
    done = subprocess.run(
        [GIT, "-C", str(PROJECT_ROOT), "check-ignore", "--no-index", "-q", path],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode == 0


def test_the_feed_list_lock_is_ignored_by_git(tmp_path):
    feeds = tmp_path / "feeds.toml"
    add_entry(feeds, {"vendor": "lab", "url": "https://lab.example.org/feed.xml"})
    lock = tmp_path / ".feeds.toml.lock"
    assert lock.exists()  # what add leaves beside the list, here in config/
    assert ignored(f"config/{lock.name}")
    assert ignored("config/sources/.vendors.toml.lock")  # any feed list's lock
    assert not ignored("config/feeds.toml")  # the list itself stays tracked
