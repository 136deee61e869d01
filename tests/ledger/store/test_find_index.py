"""Issue 19, observation 2: `crovia find` read the whole JSONL for every query (9.8 s at 1M
leaves) though the index holds what it needs. Now it asks index.sqlite (ledger/store/find_index.py)
and reads only the lines that may match; the answer is exactly a full scan's under the documented
rule (titles: whole words, any case)."""

from __future__ import annotations

import shutil
import sqlite3

import orjson
import pytest

import ledger.store.ledger as store_ledger
from crovia_spider.cli import main
from ledger.store import Ledger, find_leaves, parse_since
from ledger.store.find_index import title_words
from tests.crawl import leaves as ledger_leaves
from tests.crawl import run_crawl
from tests.vectors.make_vectors import sample_envelope

FEEDS = (
    ("openai", "openai_news_rss_prefix.xml"),
    ("google_deepmind", "google_deepmind_blog_rss_full.xml"),
    ("huggingface", "huggingface_blog_rss_prefix.xml"),
    ("arxiv_cs_ai", "arxiv_cs_ai_rss2_2026-04-27_trim3.xml"),
    ("arxiv_multi", "arxiv_multi_cs_lg_ai_cl_stat_ml_rss2_2026-09-24_trim4.xml"),
    ("nvidia", "nvidia_newsroom_ipressroom_TRANSCRIBED_trim9.xml"),
)


@pytest.fixture(scope="module")
def crawled(module_feed_server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("find_index")
    feeds = [{"vendor": v, "url": module_feed_server.url(name)} for v, name in FEEDS]
    assert run_crawl(tmp, feeds).returncode == 0
    return tmp / "ledger", ledger_leaves(tmp)  # every leaf, items and fetch records: n is leaf n


def items(leaves: list[dict]) -> list[dict]:
    return [env for env in leaves if env["axiom_type"] == "AX.OBS"]


def item_at_or_after(leaves: list[dict], n: int) -> int:
    """The leaf index of the first item (not a fetch record) at or after leaf `n`."""
    return next(i for i in range(n, len(leaves)) if leaves[i]["axiom_type"] == "AX.OBS")


def queries(leaves):
    """Filters drawn from the crawled items themselves, and some that match nothing."""
    records = [env["body"]["spider_record"] for env in leaves]
    yield {}
    yield {"vendor": "arxiv_*"}
    yield {"vendor": "open?i"}
    yield {"vendor": "[on]*"}  # a pattern GLOB does not share: checked in full, still exact
    yield {"vendor": "nobody"}
    yield {"title": "!!!"}  # no words at all: every title
    yield {"url": "https://nowhere.invalid/"}
    yield {"since": "2999-01-01T00:00:00.000000Z"}
    for env, record in zip(leaves[::3], records[::3], strict=True):
        words = title_words(record["title"])
        yield {"url": record["url"]}
        yield {"url": env["subject"]["target_id"]}
        yield {"title": record["title"].upper()}
        yield {"title": " ".join(reversed(words[:2]))}
        yield {"title": words[-1] if words else "x", "vendor": record["vendor"]}
        yield {"title": (words[0] if words else "x") + " zzzunseen"}
        yield {"since": record["observed_at"]}
        yield {"since": record["observed_at"], "vendor": "arxiv_*", "title": "the"}


def test_the_index_answers_exactly_as_a_full_scan(crawled) -> None:
    ledger, leaves = crawled
    asked = 0
    for query in queries(items(leaves)):
        from_index = list(find_leaves(ledger, **query))
        assert from_index == list(find_leaves(ledger, scan=True, **query)), query
        asked += bool(from_index)
    assert asked > 20


def test_title_words_are_whole_words_in_any_case(crawled) -> None:
    ledger, leaves = crawled
    leaves = items(leaves)
    title = leaves[0]["body"]["spider_record"]["title"]
    word = max(title_words(title), key=len)
    assert leaves[0]["axiom_id"] in [f.axiom_id for f in find_leaves(ledger, title=word.upper())]
    assert leaves[0]["axiom_id"] not in [f.axiom_id for f in find_leaves(ledger, title=word[:-1])]
    assert title_words("GPT-5: OpenAI's Straße") == ["gpt", "5", "openai", "s", "strasse"]


def test_only_the_lines_that_may_match_are_read(crawled, tmp_path) -> None:
    """Every line but the one asked for is made unreadable: a full scan fails on them, the index
    goes straight to the right one."""
    ledger, leaves = crawled
    copy = tmp_path / "ledger"
    shutil.copytree(ledger, copy)
    lines = (copy / "axiom_ledger.jsonl").read_bytes().splitlines(keepends=True)
    wanted = item_at_or_after(leaves, len(lines) // 2)
    garbled = [
        line if n == wanted else b"#" * (len(line) - 1) + b"\n" for n, line in enumerate(lines)
    ]
    (copy / "axiom_ledger.jsonl").write_bytes(b"".join(garbled))
    url = leaves[wanted]["body"]["spider_record"]["url"]
    assert [f.leaf_index for f in find_leaves(copy, url=url)] == [wanted]
    title = leaves[wanted]["body"]["spider_record"]["title"]
    assert wanted in [f.leaf_index for f in find_leaves(copy, title=title)]
    with pytest.raises(orjson.JSONDecodeError):
        list(find_leaves(copy, url=url, scan=True))


def test_leaves_issued_since_the_last_seal_are_found_too(tmp_path, key) -> None:
    directory = tmp_path / "ledger"
    with Ledger.open(directory, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(30)])
        ledger.seal()
        ledger.issue([sample_envelope(n) for n in range(30, 40)])  # no find rows yet
    for query in ({}, {"title": "item"}, {"since": parse_since("2000-01-01")}):
        found = list(find_leaves(directory, **query))
        assert found == list(find_leaves(directory, scan=True, **query))
    assert [f.sealed for f in find_leaves(directory)] == [True] * 30 + [False] * 10


def test_the_rows_a_writer_makes_as_it_writes_are_those_its_lines_give(tmp_path, key) -> None:
    """The writer makes a leaf's find rows from the envelope it has just written (so a seal need
    not read the lines back); they must be the rows the lines themselves give, across seals cut
    inside a batch, a reopen, and a seal whose leaves were partly written by an earlier writer."""
    directory = tmp_path / "ledger"
    with Ledger.open(directory, signing_key=key, seal_every=7) as ledger:
        ledger.issue([sample_envelope(n) for n in range(20)])  # seals at 7 and 14, 6 left over
        ledger.issue([sample_envelope(n) for n in range(20, 23)])
    with Ledger.open(directory, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(23, 30)])
        ledger.seal()
        ledger.issue([sample_envelope(n) for n in range(30, 35)])
        ledger.seal()
    db = sqlite3.connect(directory / "index.sqlite", isolation_level=None)
    queries = (
        "SELECT * FROM find_items ORDER BY leaf_index",
        "SELECT rowid, words FROM find_words ORDER BY rowid",
    )
    written = [db.execute(query).fetchall() for query in queries]
    assert [len(rows) for rows in written] == [35, 35]
    db.execute("BEGIN")
    db.execute("DELETE FROM find_items")
    db.execute("DELETE FROM find_words")
    db.execute("COMMIT")
    db.close()
    with Ledger.open(directory, signing_key=key):  # a writer opening it reads the lines
        pass
    db = sqlite3.connect(directory / "index.sqlite")
    assert [db.execute(query).fetchall() for query in queries] == written
    db.close()


def test_an_index_from_before_gains_the_rows_when_a_writer_opens_it(crawled, tmp_path) -> None:
    ledger, leaves = crawled
    copy = tmp_path / "ledger"
    shutil.copytree(ledger, copy)
    with sqlite3.connect(copy / "index.sqlite") as db:
        db.execute("DROP TABLE find_items")
        db.execute("DROP TABLE find_words")
    third = item_at_or_after(leaves, 3)
    url = leaves[third]["body"]["spider_record"]["url"]
    assert [f.leaf_index for f in find_leaves(copy, url=url)] == [third]  # read from the JSONL
    with Ledger.open(copy, writer=True):  # the migration: recovery adds the rows
        pass
    with sqlite3.connect(copy / "index.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM find_items").fetchone()[0] == len(leaves)
        assert db.execute("SELECT COUNT(*) FROM find_words").fetchone()[0] == len(leaves)
    assert [f.leaf_index for f in find_leaves(copy, url=url)] == [third]


def test_a_rebuilt_index_rebuilds_the_rows(crawled, tmp_path, capsys) -> None:
    ledger, leaves = crawled
    copy = tmp_path / "ledger"
    shutil.copytree(ledger, copy)
    assert main(["reindex", "--ledger-dir", str(copy)]) == 0
    capsys.readouterr()
    with sqlite3.connect(copy / "index.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM find_items").fetchone()[0] == len(leaves)
    assert list(find_leaves(copy, title="the")) == list(find_leaves(copy, title="the", scan=True))


def test_leaves_that_observe_no_item_are_not_listed(tmp_path, key) -> None:
    """A fetch record (issue 18's AX.FETCH) keeps its find row like every leaf but is never
    listed, from the index or from a scan."""
    from ledger.canonical import canonical_json

    directory = tmp_path / "ledger"
    with Ledger.open(directory, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(5)])
        ledger.seal()
    lines = (directory / "axiom_ledger.jsonl").read_bytes().splitlines(keepends=True)
    fetch = orjson.loads(lines[2])
    fetch["axiom_type"] = "AX.FETCH"  # not signed again: find reads, the audit judges
    lines[2] = canonical_json(fetch) + b"\n"
    (directory / "axiom_ledger.jsonl").write_bytes(b"".join(lines))
    with Ledger.open(directory, writer=True):  # reindex the edited line
        pass
    for scan in (False, True):
        assert [f.leaf_index for f in find_leaves(directory, scan=scan)] == [0, 1, 3, 4]


def test_past_the_rows_held_the_seal_reads_the_lines(tmp_path, key, monkeypatch) -> None:
    """A writer holds at most _FIND_ROWS_HELD leaves' fields for the next seal (here 10, as a
    ledger sealed rarely would pass 100,000); past it the seal reads the lines, with the same rows,
    and holding starts again after that seal."""
    monkeypatch.setattr(store_ledger, "_FIND_ROWS_HELD", 10)
    directory = tmp_path / "ledger"
    with Ledger.open(directory, signing_key=key) as ledger:
        ledger.issue([sample_envelope(n) for n in range(6)])
        ledger.issue([sample_envelope(n) for n in range(6, 12)])  # 12 > 10: dropped
        ledger.seal()
        ledger.issue([sample_envelope(n) for n in range(12, 15)])  # held again
        ledger.seal()
    assert [(f.leaf_index, f.url) for f in find_leaves(directory)] == [
        (n, sample_envelope(n)["body"]["spider_record"]["url"]) for n in range(15)
    ]
    db = sqlite3.connect(directory / "index.sqlite")
    assert db.execute("SELECT COUNT(*) FROM find_items").fetchone() == (15,)
    db.close()
