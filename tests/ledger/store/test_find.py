"""`crovia find`: which axiom ids hold which items, read-only, from a real crawled ledger.

Before, no command listed axiom ids, so `crovia prove AXIOM_ID` had nothing to start from.
"""

from __future__ import annotations

import json
import os

import pytest

from crovia_spider.cli import main
from ledger.store import find_leaves, parse_since
from tests.crawl import envelopes, run_crawl


@pytest.fixture(scope="module")
def crawled(module_feed_server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("find")
    feeds = [
        {"vendor": "openai", "url": module_feed_server.url("openai_news_rss_prefix.xml")},
        {"vendor": "arxiv_cs_ai", "url": module_feed_server.url(
            "arxiv_cs_ai_rss2_2026-04-27_trim3.xml")},
    ]  # fmt: skip
    assert run_crawl(tmp, feeds).returncode == 0
    return tmp / "ledger", envelopes(tmp)


def records(leaves):
    return [env["body"]["spider_record"] for env in leaves]


def find_json(capsys, ledger, *args):
    assert main(["find", "--ledger-dir", str(ledger), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_leaf_by_default_in_leaf_order(crawled, capsys):
    ledger, leaves = crawled
    found = find_json(capsys, ledger)
    assert found["count"] == len(leaves) == len(found["items"]) > 0
    # Items only, at their leaf (each feed's fetch record, AX.FETCH, is a leaf too)
    for item, env in zip(found["items"], leaves, strict=True):
        record = env["body"]["spider_record"]
        assert item == {
            "axiom_id": env["axiom_id"],
            "leaf_index": env["anchors"][0]["height"],
            "vendor": record["vendor"],
            "title": record["title"],
            "url": record["url"],
            "observed_at": record["observed_at"],
            "sealed": True,
        }


def test_filters(crawled, capsys):
    ledger, leaves = crawled
    openai = [r for r in records(leaves) if r["vendor"] == "openai"]
    assert [i["url"] for i in find_json(capsys, ledger, "--vendor", "openai")["items"]] == [
        r["url"] for r in openai
    ]
    assert find_json(capsys, ledger, "--vendor", "arxiv_*")["count"] == len(leaves) - len(openai)
    target = openai[1]
    by_url = find_json(capsys, ledger, "--url", target["url"])["items"]
    assert [i["title"] for i in by_url] == [target["title"]]
    words = target["title"].upper().split()[:2]
    by_title = find_json(capsys, ledger, "--title", " ".join(reversed(words)))["items"]
    assert target["title"] in [i["title"] for i in by_title]
    assert find_json(capsys, ledger, "--since", "2999-01-01")["count"] == 0
    assert find_json(capsys, ledger, "--since", "2000-01-01T00:00:00Z")["count"] == len(leaves)


def test_text_output_names_the_axiom_id_and_item(crawled, capsys):
    ledger, leaves = crawled
    assert main(["find", "--ledger-dir", str(ledger), "--vendor", "openai"]) == 0
    out = capsys.readouterr().out.splitlines()
    env = next(e for e in leaves if e["body"]["vendor"] == "openai")
    index = env["anchors"][0]["height"]
    first = env["body"]["spider_record"]
    assert out[0] == f"{env['axiom_id']} leaf {index} {first['observed_at']} openai"
    assert out[1].strip() == first["title"] and out[2].strip() == first["url"]
    assert out[-1].startswith(f"{sum(r['vendor'] == 'openai' for r in records(leaves))} found")


def test_ids_only(crawled, capsys):
    ledger, leaves = crawled
    assert main(["find", "--ledger-dir", str(ledger), "--ids", "--vendor", "openai"]) == 0
    ids = [e["axiom_id"] for e in leaves if e["body"]["vendor"] == "openai"]
    assert capsys.readouterr().out == "".join(f"{i}\n" for i in ids)


def _files(ledger):
    # index.sqlite-shm is SQLite's shared memory for the write-ahead log: every reader marks in it
    # which snapshot it reads (as `crovia prove` does); it holds no data and is never synced.
    return {
        p.name: (p.stat().st_mtime_ns, p.stat().st_size)
        for p in ledger.iterdir()
        if p.name != "index.sqlite-shm"
    }


def test_find_writes_nothing(crawled, capsys):
    ledger, _ = crawled
    before = _files(ledger)
    find_json(capsys, ledger, "--title", "anything")
    assert before == _files(ledger)


def test_unsealed_leaves_say_so(crawled, tmp_path):
    ledger, leaves = crawled
    copy = tmp_path / "ledger"
    copy.mkdir()
    (copy / "axiom_ledger.jsonl").write_bytes((ledger / "axiom_ledger.jsonl").read_bytes())
    assert [f.sealed for f in find_leaves(copy)] == [False] * len(leaves)


def test_missing_ledger_is_exit_2(tmp_path, capsys):
    assert main(["find", "--ledger-dir", str(tmp_path / "nowhere")]) == 2
    assert "no ledger at" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", ""])
def test_bad_since_is_a_usage_error(text, capsys):
    assert main(["find", "--since", text]) == 2
    assert "--since" in capsys.readouterr().err


def test_since_is_utc():
    assert parse_since("2026-11-29") == "2026-11-29T00:00:00.000000Z"
    assert parse_since("2026-11-29T19:00:00+01:00") == "2026-11-29T18:00:00.000000Z"


def test_no_ledger_dir_flag_uses_the_environment(crawled, capsys, monkeypatch):
    ledger, leaves = crawled
    monkeypatch.setitem(os.environ, "CROVIA_LEDGER_DIR", str(ledger))
    assert main(["find", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == len(leaves)
