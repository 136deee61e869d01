"""Default paths are taken from the project root (the folder with scrapy.cfg), from anywhere in it.

Each command runs in a subdirectory of a scratch project with no CROVIA_* variable set, and must
read and write the project's own config/ and data/, never a config/ or data/ under the subdirectory.
"""

from __future__ import annotations

import json

import pytest

from crovia_spider.options import project_root, resolve_path
from tests.scratch import FAST, PROJECT_ROOT, run, scratch_project


@pytest.fixture(scope="module")
def crawled(module_feed_server, tmp_path_factory):
    """A scratch project crawled once by `scrapy crawl vendor_press` run from its config/ folder."""
    url = module_feed_server.url("openai_news_rss_prefix.xml")
    root = scratch_project(
        tmp_path_factory.mktemp("p") / "proj", f'[[feeds]]\nvendor = "openai"\nurl = "{url}"\n'
    )
    proc = run(["scrapy", "crawl", "vendor_press", *FAST], cwd=root / "config")
    assert proc.returncode == 0, proc.stderr
    return root


def test_crawl_from_a_subdirectory_writes_the_projects_ledger(crawled):
    assert (crawled / "data" / "ledger" / "axiom_ledger.jsonl").stat().st_size > 0
    assert not (crawled / "config" / "data").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["scrapy", "list"], "vendor_press"),
        (["crovia", "feeds", "list"], "openai  ok  "),
        (["crovia", "audit"], "audit ok"),
        (["crovia", "schedule", "--list"], "arxiv"),
        (["crovia", "seal"], "leaves"),
    ],
)
def test_commands_from_a_subdirectory(crawled, argv, expected):
    proc = run(argv, cwd=crawled / "config")
    assert proc.returncode == 0, proc.stderr
    assert expected in proc.stdout
    assert not (crawled / "config" / "data").exists()


def test_stats_from_a_deeper_subdirectory(crawled):
    deeper = crawled / "config" / "a" / "b"
    deeper.mkdir(parents=True)
    proc = run(["crovia", "stats", "--json"], cwd=deeper)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["leaves"] > 0


def test_relative_environment_paths_are_taken_from_the_root(crawled):
    (crawled / "data" / "ledger").rename(crawled / "data" / "moved")
    try:
        proc = run(
            ["crovia", "stats", "--json"], cwd=crawled / "config", CROVIA_LEDGER_DIR="data/moved"
        )
    finally:
        (crawled / "data" / "moved").rename(crawled / "data" / "ledger")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["directory"] == str(crawled / "data" / "moved")


def test_a_flag_is_taken_from_the_working_directory(crawled):
    # What the user types is theirs: `--ledger-dir ../data/ledger` from config/ is the project's.
    proc = run(["crovia", "stats", "--ledger-dir", "../data/ledger"], cwd=crawled / "config")
    assert proc.returncode == 0, proc.stderr


def test_project_root_walks_up_and_falls_back_to_the_checkout(tmp_path):
    (tmp_path / "scrapy.cfg").write_text("[settings]\n")
    (tmp_path / "x" / "y").mkdir(parents=True)
    assert project_root(tmp_path / "x" / "y") == tmp_path
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    assert project_root(outside) == PROJECT_ROOT


def test_resolve_path_keeps_absolute_paths(tmp_path):
    assert resolve_path(tmp_path) == tmp_path
    assert resolve_path("data/ledger") == project_root() / "data" / "ledger"
