"""Issue 10's acceptance with real crawls: seal, publish, crawl more, seal, publish; `crovia
monitor` passes both increments from the directory and over HTTP, and exits 1 without touching its
state for a re-signed edited leaf, a dropped seal replaced by another history, and a changed tile.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from ledger.envelope import sign_envelope
from ledger.keys import load_signing_key
from ledger.store import Ledger
from ledger.tlog import tiles
from tests.crawl import crovia, run_crawl
from tests.feedserver import FeedServer
from tests.vectors.make_vectors import sample_envelope

pytestmark = pytest.mark.slow

FIRST = {"openai": "openai_news_rss_prefix.xml", "bair": "bair_blog_rss_trim3.xml"}
SECOND = {
    "huggingface": "huggingface_blog_rss_prefix.xml",
    "arxiv_cs_ai": "arxiv_cs_ai_rss2_2026-04-27_trim3.xml",
}


def monitor(tmp: Path, source: str, vkey: str, state: Path):
    return crovia(tmp, "monitor", source, "--vkey", vkey, "--state", str(state))


@pytest.fixture(scope="module")
def published(tmp_path_factory, module_feed_server):
    """Two crawls, each sealed and published, each increment monitored from the directory and
    over HTTP; returns (tmp, vkey, sizes, states after the first and the second increment)."""
    tmp = tmp_path_factory.mktemp("tlog")
    pub, sizes, states = tmp / "pub", [], {}
    vkey = None
    with FeedServer(pub.parent) as static:
        for number, feeds in enumerate((FIRST, SECOND), start=1):
            listed = [{"vendor": v, "url": module_feed_server.url(n)} for v, n in feeds.items()]
            assert run_crawl(tmp, listed).returncode == 0  # a crawl seals at its end
            assert (
                crovia(tmp, "publish", str(pub), "--ledger-dir", str(tmp / "ledger")).returncode
                == 0
            )
            vkey = vkey or json.loads(crovia(tmp, "pubkey", "--json").stdout)["note_verifier_key"]
            size = len((tmp / "ledger" / "axiom_ledger.jsonl").read_bytes().splitlines())
            for where, source in (("dir", str(pub)), ("http", static.url("pub/"))):
                done = monitor(tmp, source, vkey, tmp / f"state-{where}.json")
                assert done.returncode == 0, done.stderr
                added = size - (sizes[-1] if sizes else 0)
                assert done.stdout.splitlines()[0] == f"size {size}: +{added} entries verified"
                states[number, where] = (tmp / f"state-{where}.json").read_bytes()
            sizes.append(size)
    assert sizes[0] > 0 and sizes[1] > sizes[0]
    return tmp, vkey, sizes, states


def attacked(published, name: str) -> Path:
    """A copy of the crawled ledger, its key and its publish directory, to attack."""
    tmp = published[0]
    copy = tmp.parent / f"{tmp.name}-{name}"
    for part in ("ledger", "pub", "keys"):
        shutil.copytree(tmp / part, copy / part)
    return copy


def rebuild(ledger_dir: Path) -> None:
    """Remove everything derived, so the next writer rebuilds it from the JSONL."""
    for derived in ("index.sqlite", "tree", "tlog", "seals.jsonl"):
        target = ledger_dir / derived
        shutil.rmtree(target) if target.is_dir() else target.unlink()


def refused(published, copy: Path, state_after: int, check: str) -> None:
    """The monitor, from the directory and over HTTP, exits 1 naming `check`; state untouched."""
    _, vkey, _, states = published
    with FeedServer(copy) as static:
        for where, source in (("dir", str(copy / "pub")), ("http", static.url("pub/"))):
            state = copy / f"state-{where}.json"
            state.write_bytes(states[state_after, where])
            done = monitor(copy, source, vkey, state)
            assert done.returncode == 1, (where, done.stdout, done.stderr)
            assert f"check {check} failed" in done.stderr, done.stderr
            assert state.read_bytes() == states[state_after, where]


def test_both_increments_passed(published) -> None:
    _, _, sizes, states = published
    assert json.loads(states[2, "dir"])["size"] == sizes[1]
    assert json.loads(states[2, "http"]) == json.loads(states[2, "dir"])


def test_a_leaf_edited_and_re_signed_with_the_right_key(published) -> None:
    copy = attacked(published, "edited")
    ledger_file = copy / "ledger" / "axiom_ledger.jsonl"
    key = load_signing_key(copy / "keys" / "signing.key")
    lines = ledger_file.read_bytes().splitlines()
    envelope = orjson.loads(lines[1])
    anchors = envelope.pop("anchors")
    envelope.pop("axiom_id"), envelope.pop("signature")
    envelope["body"]["title"] = "Not what was published"
    lines[1] = orjson.dumps(sign_envelope(envelope, anchors, key), option=orjson.OPT_SORT_KEYS)
    ledger_file.write_bytes(b"".join(line + b"\n" for line in lines))
    rebuild(copy / "ledger")
    with Ledger.open(copy / "ledger", signing_key=key) as ledger:
        ledger.seal()
    assert (
        crovia(
            copy, "publish", str(copy / "pub"), "--ledger-dir", str(copy / "ledger"), "--full"
        ).returncode
        == 0
    )
    refused(published, copy, 2, "fork")


def test_the_newest_seal_dropped_and_another_history_sealed_at_its_size(published) -> None:
    _, _, sizes, _ = published
    copy = attacked(published, "dropped")
    ledger_file = copy / "ledger" / "axiom_ledger.jsonl"
    key = load_signing_key(copy / "keys" / "signing.key")
    lines = ledger_file.read_bytes().splitlines()
    ledger_file.write_bytes(b"".join(line + b"\n" for line in lines[: sizes[0]]))
    rebuild(copy / "ledger")
    with Ledger.open(copy / "ledger", signing_key=key) as ledger:
        ledger.seal()  # the first seal again: the attacker can sign anything
        ledger.issue([sample_envelope(n) for n in range(sizes[1] - sizes[0])])
        ledger.seal()
        assert ledger.leaf_count == sizes[1]
    assert (
        crovia(
            copy, "publish", str(copy / "pub"), "--ledger-dir", str(copy / "ledger"), "--full"
        ).returncode
        == 0
    )
    refused(published, copy, 2, "fork")


def test_a_tile_changed(published) -> None:
    copy = attacked(published, "tile")
    _, _, sizes, _ = published
    tile = copy / "pub" / tiles.tile_for(0, (sizes[1] - 1) // 256, sizes[1]).path
    data = bytearray(tile.read_bytes())
    data[-1] ^= 0x80
    tile.write_bytes(bytes(data))
    refused(published, copy, 1, "tile")
