"""`crovia feeds list` on a ledger directory that is not there is an error, not "never crawled"."""

from __future__ import annotations

from crovia_spider.cli import main

FEEDS = '[[feeds]]\nvendor = "openai"\nurl = "https://openai.com/news/rss.xml"\n'


def test_missing_ledger_directory_is_an_error(tmp_path, capsys):
    (tmp_path / "feeds.toml").write_text(FEEDS)
    argv = ["feeds", "list", "--feeds-file", str(tmp_path / "feeds.toml")]
    assert main([*argv, "--ledger-dir", str(tmp_path / "nowhere")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"no ledger directory at {tmp_path / 'nowhere'}" in captured.err


def test_a_ledger_directory_without_crawls_lists_never_fetched(tmp_path, capsys):
    (tmp_path / "feeds.toml").write_text(FEEDS)
    (tmp_path / "ledger").mkdir()
    argv = ["feeds", "list", "--feeds-file", str(tmp_path / "feeds.toml")]
    assert main([*argv, "--ledger-dir", str(tmp_path / "ledger")]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[:3] == ["openai", "never", "fetched"]
