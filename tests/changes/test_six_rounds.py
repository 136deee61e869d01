"""Issue 44, change events: a vendor with a feed and a watched usage policy, six real crawls.

The rounds are tests/changes/vendor.py's: a new feed item and an edited sentence in round 2, a bot
wall (403, `cf-mitigated: challenge`) in round 3, 410 Gone in rounds 4 and 5, 200 again in round 6.
`crovia changes --json` must list exactly new, edited, unreachable, removed (at round 5 only, two
captures in a row at least CROVIA_REMOVAL_SPAN apart) and returned, each naming the signed records
that prove it, which are the ledger's own leaves.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.changes.receiver import Answer, Receiver, Unverified, verify
from tests.changes.vendor import (
    NEW_SENTENCE,
    OLD_SENTENCE,
    POSTS,
    script_vendor,
    until_due_again,
)
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, leaves, run_crawl
from tests.feedserver import FeedServer

pytestmark = pytest.mark.slow
RULE = {"CROVIA_REMOVAL_SPAN": "1s", "CROVIA_REMOVAL_CAPTURES": "2"}
EXPECTED = ["new", "edited", "unreachable", "removed", "returned"]


def environment(tmp_path: Path, **env: str) -> dict[str, str]:
    """The crawls' and commands' environment: the removal rule, the notify config and key in
    `tmp_path`, short waits between a webhook's attempts."""
    mine = {
        **RULE,
        "CROVIA_NOTIFY_FILE": str(tmp_path / "notify.toml"),
        "CROVIA_NOTIFY_KEY_FILE": str(tmp_path / "keys" / "notify.key"),
        "CROVIA_NOTIFY_RETRIES": "1s,2s,3s",
        "CROVIA_NOTIFY_TIMEOUT": "5",
    }
    return crawl_env(tmp_path, **{**mine, **env})


def crovia(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "crovia"), *args],
        cwd=PROJECT_ROOT,
        env=environment(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def changes(tmp_path: Path, *args: str) -> list[dict]:
    shown = crovia(tmp_path, "changes", "--json", *args)
    assert shown.returncode == 0, shown.stderr[-2000:]
    return json.loads(shown.stdout)["events"]


def notify_toml(good: Receiver, flaky: Receiver, gone: Receiver, edits: Receiver,
                people: Receiver) -> str:  # fmt: skip
    people_url = people.url.replace("http://", "json://").replace("/hook", "/people")
    return (  # top-level keys first: after a [[webhooks]] header, keys are that table's
        f'apprise = ["{people_url}"]\napprise_events = ["edited"]\n'
        'allow_private = ["127.0.0.1"]\n\n'
        f'[[webhooks]]\nurl = "{good.url}"\n\n[[webhooks]]\nurl = "{flaky.url}"\n\n'
        f'[[webhooks]]\nurl = "{gone.url}"\n\n'
        f'[[webhooks]]\nurl = "{edits.url}"\nevents = ["edited"]\nvendors = ["lab_policies"]\n'
    )


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Six crawls, each delivering to five receivers at its end: one that answers 200, one that
    answers 500 once, one that answers 410, one told of edits only, and a person (Apprise)."""
    tmp_path = tmp_path_factory.mktemp("six")
    seen: dict = {"tmp": tmp_path, "after": {}}
    with (
        FeedServer() as server,
        Receiver() as good,
        Receiver([Answer(500), Answer(200)]) as flaky,
        Receiver([Answer(410)]) as gone,
        Receiver() as edits,
        Receiver() as people,
    ):
        feeds = script_vendor(server)
        (tmp_path / "notify.toml").write_text(notify_toml(good, flaky, gone, edits, people))
        for number in range(1, 7):
            if number > 1:
                until_due_again()
            crawled = run_crawl(tmp_path, feeds, env=environment(tmp_path))
            assert crawled.returncode == 0, crawled.stderr[-3000:]
            seen["after"][number] = [e["kind"] for e in changes(tmp_path)]
            (tmp_path / f"crawl{number}.log").write_text(crawled.stderr)
        seen["requests"] = len(server.requests_for("policies/usage"))
        seen["url"] = server.url("policies/usage")
        seen["base"] = server.base
        seen["receivers"] = {
            "good": good.deliveries, "flaky": flaky.deliveries, "gone": gone.deliveries,
            "edits": edits.deliveries, "people": people.deliveries,
        }  # fmt: skip
    return seen


def captures(tmp_path: Path) -> list[tuple[int, dict]]:
    return [(n, e) for n, e in enumerate(leaves(tmp_path)) if e["axiom_type"] == "AX.CAPTURE"]


def test_exactly_the_scripted_changes_round_by_round(rounds):
    after = rounds["after"]
    assert after[1] == []
    assert after[2] == ["new", "edited"]
    assert after[3] == ["new", "edited", "unreachable"]
    assert after[4] == after[3]  # one 410 is no removal
    assert after[5] == EXPECTED[:4]
    assert after[6] == EXPECTED
    assert rounds["requests"] == 6  # the watched page was captured at every crawl (every = 1s)


def test_each_event_names_the_records_that_prove_it(rounds):
    tmp_path = rounds["tmp"]
    by_leaf = dict(enumerate(leaves(tmp_path)))
    shots = captures(tmp_path)
    assert [e["body"]["status"] for _, e in shots] == [200, 200, 403, 410, 410, 200]
    events = {e["kind"]: e for e in changes(tmp_path)}
    for event in events.values():
        for ref in event["records"]:
            assert by_leaf[ref["leaf_index"]]["axiom_id"] == ref["axiom_id"]
        assert event["leaf_index"] == event["records"][-1]["leaf_index"]
        assert event["id"].startswith("chg_")
    c1, c2, c3, c4, c5, c6 = (envelope for _, envelope in shots)

    edited = events["edited"]
    assert [r["axiom_id"] for r in edited["records"]] == [c1["axiom_id"], c2["axiom_id"]]
    assert edited["after"]["axiom_id"] == c1["axiom_id"]
    assert edited["removed_text"] == [OLD_SENTENCE] and edited["added_text"] == [NEW_SENTENCE]
    assert f"-{OLD_SENTENCE}\n+{NEW_SENTENCE}\n" in edited["diff"]
    assert edited["url"] == rounds["url"] and edited["vendor"] == "lab_policies"

    wall = events["unreachable"]
    assert [r["axiom_id"] for r in wall["records"]] == [c3["axiom_id"]]
    assert wall["after"]["axiom_id"] == c2["axiom_id"]
    assert "cf-mitigated: challenge" in wall["detail"]
    # A wall is never a version: the next text is judged against round 2's.
    assert c3["body"]["outcome"] == "failed" and c6["body"]["outcome"] == "unchanged"

    removed = events["removed"]
    ids = [r["axiom_id"] for r in removed["records"]]
    assert ids == [c2["axiom_id"], c4["axiom_id"], c5["axiom_id"]]
    assert removed["at"] == c5["body"]["captured_at"][:19] + "Z"
    assert "HTTP 410 at 2 captures in a row" in removed["detail"]

    back = events["returned"]
    assert [r["axiom_id"] for r in back["records"]] == [c5["axiom_id"], c6["axiom_id"]]

    new = events["new"]
    assert new["title"] == POSTS[1][1] and new["vendor"] == "lab"
    fetches = [e for e in by_leaf.values() if e["axiom_type"] == "AX.FETCH"]
    assert [r["role"] for r in new["records"]] == ["fetch", "fetch", "item"]
    assert new["records"][0]["axiom_id"] == fetches[0]["axiom_id"]
    assert new["records"][1]["axiom_id"] == fetches[1]["axiom_id"]
    assert by_leaf[new["records"][2]["leaf_index"]]["body"]["title"] == POSTS[1][1]


def test_the_watched_page_is_an_item_observed_once(rounds):
    tmp_path = rounds["tmp"]
    watched = [
        e
        for e in leaves(tmp_path)
        if e["axiom_type"] == "AX.OBS" and e["body"]["vendor"] == "lab_policies"
    ]
    assert len(watched) == 1
    record = watched[0]["body"]["spider_record"]
    assert record["url"] == record["source_url"] == rounds["url"]
    assert record["source_status"] == 0  # nothing was fetched to observe it
    assert "fetch" not in watched[0]["object"]
    runs = [
        json.loads(line) for line in (tmp_path / "ledger" / "runs.jsonl").read_text().splitlines()
    ]
    assert [f["vendor"] for f in runs[0]["feeds"]] == ["lab"]  # no fetch claimed for it
    assert runs[0]["watched"][0]["new"] == 1 and runs[1]["watched"][0]["duplicate"] == 1


def test_filters_and_the_text_form(rounds):
    tmp_path = rounds["tmp"]
    assert [e["kind"] for e in changes(tmp_path, "--vendor", "lab")] == ["new"]
    assert [e["kind"] for e in changes(tmp_path, "--kind", "removed")] == ["removed"]
    all_events = changes(tmp_path)
    late = changes(tmp_path, "--since", all_events[3]["at"])
    assert [e["kind"] for e in late] == EXPECTED[3:]
    shown = crovia(tmp_path, "changes")
    assert shown.returncode == 0
    lines = shown.stdout.splitlines()
    assert [line.split()[1] for line in lines if not line.startswith(" ")] == EXPECTED
    assert f"    | -{OLD_SENTENCE}" in lines and f"    | +{NEW_SENTENCE}" in lines
    assert sum(1 for line in lines if line.startswith("    between ")) == 5
    # The default rule (1 hour) proves no removal from two captures seconds apart.
    strict = crovia(tmp_path, "changes", "--json", CROVIA_REMOVAL_SPAN="1h")
    kinds = [e["kind"] for e in json.loads(strict.stdout)["events"]]
    assert "removed" not in kinds and "returned" not in kinds


def test_the_watch_source_is_shown_as_watched_not_as_a_feed_never_fetched(rounds):
    tmp_path = rounds["tmp"]
    listed = json.loads(crovia(tmp_path, "feeds", "list", "--json").stdout)
    rows = {row["vendor"]: row for row in listed}
    assert rows["lab"]["state"] == "ok"
    assert rows["lab_policies"]["state"] == "watched" and rows["lab_policies"]["items"] == 1
    text = crovia(tmp_path, "feeds", "list").stdout.splitlines()
    (row,) = [line for line in text if line.startswith("lab_policies ")]
    assert row.split() == ["lab_policies", "watched", "-", "-", "1"]
    shown = crovia(tmp_path, "history", "--url", rounds["url"])
    assert shown.returncode == 0, shown.stderr
    assert "every fetch" not in shown.stdout and "feed lab_policies" not in shown.stdout
    assert f"watched page {rounds['url']}: no feed is fetched" in shown.stdout
    assert shown.stdout.count("AX.CAPTURE") == 1 and len(captures(tmp_path)) == 6


def test_doctor_names_the_watch_source_and_checks_the_notify_config(rounds):
    tmp_path = rounds["tmp"]
    shown = crovia(tmp_path, "doctor")
    lines = shown.stdout.splitlines()
    assert f"ok       config: {tmp_path / 'notify.toml'}: 5 notification targets" in lines
    watch = "ok       captures: 1 source(s) capture their items' pages: lab_policies (watch)"
    assert watch in lines
    bad = tmp_path / "bad-notify.toml"
    bad.write_text('[[webhooks]]\nurl = "htp:/bad url"\n')
    refused = crovia(tmp_path, "doctor", CROVIA_NOTIFY_FILE=str(bad))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert (
        f"PROBLEM  config: {bad}: [[webhooks]] entry 1: 'url' = 'htp:/bad url': an http(s) URL"
        " without spaces is required; fix: correct it (crovia notify says the same)"
    ) in refused.stdout.splitlines()


def test_a_watched_page_waits_for_its_interval(tmp_path):
    with FeedServer() as server:
        feeds = script_vendor(server, every="1h")
        for _ in range(2):
            crawled = run_crawl(tmp_path, feeds)
            assert crawled.returncode == 0, crawled.stderr[-3000:]
        assert len(server.requests_for("policies/usage")) == 1
        assert len(server.requests_for("feed.xml")) == 2


@pytest.fixture(scope="module")
def published(rounds) -> Path:
    out = rounds["tmp"] / "site"
    done = crovia(rounds["tmp"], "publish", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def test_publish_writes_an_atom_feed_feedparser_reads(rounds, published):
    import feedparser

    parsed = feedparser.parse((published / "changes.atom").read_bytes())
    assert not parsed.bozo, parsed.bozo_exception
    events = changes(rounds["tmp"])
    entries = parsed.entries
    assert [e.tags[0].term for e in entries] == EXPECTED[::-1]  # newest first
    for entry, event in zip(entries, events[::-1], strict=True):
        assert entry.id == f"urn:crovia:change:{event['id']}"
        assert entry.link == event["url"]
        related = [link.href for link in entry.links if link.rel == "related"]
        assert [f"v/{r['axiom_id']}" for r in event["records"]] == related[: len(event["records"])]
        assert entry.updated.startswith(event["at"][:19])
    edited = entries[EXPECTED[::-1].index("edited")]
    content = edited.content[0]
    assert content.type == "text/plain"
    assert f"-{OLD_SENTENCE}" in content.value and f"+{NEW_SENTENCE}" in content.value
    # The page's <title> holds markup: it is text in the feed, escaped by the writer.
    assert "Usage <b>policies</b> & <script>alert(1)</script>" in edited.title
    assert b"<script>" not in (published / "changes.atom").read_bytes()


def test_publish_writes_a_json_feed_our_reader_reads(rounds, published):
    from crovia_spider.feed.jsonfeed import parse_jsonfeed

    body = (published / "changes.json").read_bytes()
    parsed = parse_jsonfeed(body, {"content-location": "http://127.0.0.1/changes.json"})
    assert not parsed.failed and parsed.malformed_entries == 0
    events = changes(rounds["tmp"])
    assert [e["id"] for e in parsed.entries] == [e["id"] for e in events[::-1]]
    assert [e["link"] for e in parsed.entries] == [e["url"] for e in events[::-1]]
    size = int((published / "checkpoint").read_text().splitlines()[1])
    for item, event in zip(json.loads(body)["items"], events[::-1], strict=True):
        crovia_part = item["_crovia"]
        assert crovia_part["kind"] == event["kind"]
        assert crovia_part["axiom_ids"] == [r["axiom_id"] for r in event["records"]]
        assert crovia_part["leaf_indexes"] == [r["leaf_index"] for r in event["records"]]
        assert crovia_part["checkpoint_size"] == size
        assert max(crovia_part["leaf_indexes"]) < size
        for axiom_id in crovia_part["axiom_ids"]:  # every record's receipt is published
            assert (published / "receipts" / f"{axiom_id}.json").is_file()


def test_the_edit_page_shows_both_sentences_as_text_in_chromium(rounds, published):
    from playwright.sync_api import sync_playwright

    from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

    (edited,) = [e for e in changes(rounds["tmp"]) if e["kind"] == "edited"]
    page_file = published / "changes" / f"{edited['id']}.html"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = chromium.new_page()
            page.goto(page_file.as_uri())
            text = page.inner_text("body")
            title = page.title()
            scripts = page.eval_on_selector_all("script, b", "nodes => nodes.length")
        finally:
            chromium.close()
    assert OLD_SENTENCE in text and NEW_SENTENCE in text
    markup = "Usage <b>policies</b> & <script>alert(1)</script>"
    assert markup in title and markup in text
    assert scripts == 0  # the title's markup is text, not elements


def payloads(deliveries: list) -> list[dict]:
    return [json.loads(d.body) for d in deliveries]


def test_each_event_arrives_signed_with_the_published_key(rounds, published):
    good = rounds["receivers"]["good"]
    whpk = (published / "webhook_key.txt").read_text().strip()
    assert whpk == crovia(rounds["tmp"], "notify", "key").stdout.strip()
    assert whpk.startswith("whpk_")
    events = changes(rounds["tmp"])
    assert [p["type"] for p in payloads(good)] == [f"crovia.change.{k}" for k in EXPECTED]
    for delivery, event in zip(good, events, strict=True):
        verify(delivery, whpk, now=delivery.at)
        data = json.loads(delivery.body)["data"]
        assert data["id"] == event["id"] and data["kind"] == event["kind"]
        assert data["axiom_ids"] == [r["axiom_id"] for r in event["records"]]
        assert data["leaf_indexes"] == [r["leaf_index"] for r in event["records"]]
        assert data["checkpoint"]["size"] > max(data["leaf_indexes"])
    assert len({d.headers["webhook-id"] for d in good}) == len(good)
    edited = json.loads(good[1].body)["data"]
    assert edited["removed_text"] == [OLD_SENTENCE] and edited["added_text"] == [NEW_SENTENCE]


def test_one_changed_byte_of_a_delivered_body_fails_verification(rounds, published):
    whpk = (published / "webhook_key.txt").read_text().strip()
    delivery = rounds["receivers"]["good"][1]
    verify(delivery, whpk, now=delivery.at)
    for position in (0, len(delivery.body) // 2, len(delivery.body) - 1):
        body = bytearray(delivery.body)
        body[position] ^= 0x01
        tampered = type(delivery)(delivery.path, delivery.headers, bytes(body), delivery.at)
        with pytest.raises(Unverified):
            verify(tampered, whpk, now=delivery.at)
    other_id = {**delivery.headers, "webhook-id": "msg_" + "0" * 32}
    with pytest.raises(Unverified):
        verify(type(delivery)(delivery.path, other_id, delivery.body, delivery.at), whpk)


def test_every_axiom_id_in_a_payload_verifies_with_crovia_verify(rounds, published):
    ids = {i for p in payloads(rounds["receivers"]["good"]) for i in p["data"]["axiom_ids"]}
    trust = published / "trust_root.json"
    for axiom_id in sorted(ids):
        receipt = published / "receipts" / f"{axiom_id}.json"
        done = crovia(rounds["tmp"], "verify", str(receipt), "--trust-root", str(trust))
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_500_gets_the_same_webhook_id_again_and_a_410_stops_deliveries(rounds):
    flaky = rounds["receivers"]["flaky"]
    ids = [d.headers["webhook-id"] for d in flaky]
    assert ids[0] == ids[2] and len(set(ids)) == len(EXPECTED) == len(ids) - 1
    assert [p["type"] for p in payloads(flaky)][:3] == [
        "crovia.change.new", "crovia.change.edited", "crovia.change.new"
    ]  # fmt: skip
    assert flaky[0].body == flaky[2].body  # the same bytes, a new timestamp
    gone = rounds["receivers"]["gone"]
    assert len(gone) == 1  # answered 410: nothing more was sent to it
    status = json.loads(crovia(rounds["tmp"], "notify", "status", "--json").stdout)
    (disabled,) = [e for e in status["endpoints"] if e["disabled"]]
    assert disabled["url"].endswith(gone[0].path) and "410" in disabled["disabled"]
    text = crovia(rounds["tmp"], "notify", "status").stdout
    assert "DISABLED since" in text and "410 Gone" in text


def test_filters_and_people(rounds):
    edits = rounds["receivers"]["edits"]
    assert [p["type"] for p in payloads(edits)] == ["crovia.change.edited"]
    (person,) = rounds["receivers"]["people"]
    message = json.loads(person.body)
    assert "edited" in message["title"] and "not signed" in message["message"]
    assert "webhook-signature" not in person.headers


def rezip(source: Path, target: Path, name: str) -> None:
    """`source` with one byte of its file `name` changed, written to `target`."""
    import zipfile

    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = bytearray(old.read(info))
            if info.filename == name:
                data[len(data) // 2] ^= 0x01
            new.writestr(info, bytes(data))


def reseal(source: Path, target: Path, files: dict[str, bytes | None]) -> None:
    """`source` with `files` put in (None: taken out) and its manifest made again to list them,
    as a forger who rewrites the whole bundle would: only what the files say can catch it."""
    import hashlib
    import zipfile

    with zipfile.ZipFile(source) as old:
        held = {n: old.read(n) for n in old.namelist()}
    held.update({n: d for n, d in files.items() if d is not None})
    for name in [n for n, d in files.items() if d is None]:
        del held[name]
    manifest = json.loads(held["manifest.json"])
    manifest["files"] = {
        n: hashlib.sha256(d).hexdigest()
        for n, d in sorted(held.items())
        if n not in ("manifest.json", "manifest.sha256")
    }
    held["manifest.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    held["manifest.sha256"] = (hashlib.sha256(held["manifest.json"]).hexdigest() + "\n").encode()
    with zipfile.ZipFile(target, "w") as new:
        for name, data in sorted(held.items()):
            new.writestr(name, data)


@pytest.fixture(scope="module")
def bundled(rounds, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The edit's records, their seal stamped by OpenSSL's TSA on loopback (CROVIA_TSA_ROOTS its
    root and another CA no stamp chains to), bundled, and the zip moved to an empty directory."""
    from crovia_spider.demo_tsa import OpenSslTsa, TestPki

    pki = TestPki(tmp_path_factory.mktemp("pki"))
    stranger = TestPki(tmp_path_factory.mktemp("pki-stranger"))
    roots = f"{pki.root},{stranger.root}"
    with OpenSslTsa(pki) as tsa:
        stamped = crovia(rounds["tmp"], "stamp", CROVIA_TSA_URLS=tsa.url, CROVIA_TSA_ROOTS=roots)
    assert stamped.returncode == 0, stamped.stdout + stamped.stderr
    (edited,) = [e for e in changes(rounds["tmp"]) if e["kind"] == "edited"]
    ids = [r["axiom_id"] for r in edited["records"]]
    made = crovia(
        rounds["tmp"], "bundle", *ids, "--out", str(rounds["tmp"] / "case.zip"),
        CROVIA_TSA_ROOTS=roots,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    alone = tmp_path_factory.mktemp("elsewhere")  # no ledger, no key, no config: the zip alone
    case = alone / "case.zip"
    case.write_bytes((rounds["tmp"] / "case.zip").read_bytes())
    return {"case": case, "alone": alone, "pki": pki, "stranger": stranger, "ids": ids}


def check_bundle(alone: Path, path: Path, *pin: str) -> subprocess.CompletedProcess[str]:
    """`crovia verify --bundle PATH --json` with nothing but `alone` around it: no ledger, no
    CROVIA_TSA_ROOTS, no network settings."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(alone), "CROVIA_LEDGER_DIR": str(alone / "none")}
    return subprocess.run(
        [str(BIN / "crovia"), "verify", "--bundle", str(path), "--json", *pin],
        cwd=alone, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_bundle_of_the_edit_verifies_offline_and_names_a_changed_byte(rounds, bundled):
    import zipfile

    from cryptography import x509

    case, alone = bundled["case"], bundled["alone"]
    done = check_bundle(alone, case)
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert found["receipts"] == 3  # two captures and the page's item
    assert found["wacz"] is True and found["tsa_roots"] == 1
    with zipfile.ZipFile(case) as archive:
        names = archive.namelist()
        assert {"summary.html", "trust_root.json", "rotations.json", "captures.wacz"} <= set(names)
        texts = [archive.read(n) for n in names if n.startswith("bodies/")]
        (pem,) = [n for n in names if n.startswith("tsa_roots/")]
        root = x509.load_pem_x509_certificate(archive.read(pem))
        receipts = [json.loads(archive.read(n)) for n in names if n.startswith("receipts/")]
        manifest = json.loads(archive.read("manifest.json"))
    # the root the stamp chains to, not the other one CROVIA_TSA_ROOTS names
    assert root == x509.load_pem_x509_certificate(bundled["pki"].root.read_bytes())
    assert all(r["rfc3161_timestamps"] for r in receipts)
    assert manifest["wacz"] == "captures.wacz" and manifest["tsa_roots"] == [pem]
    assert set(manifest["files"]) == set(names) - {"manifest.json", "manifest.sha256"}
    assert any(OLD_SENTENCE.encode() in t for t in texts)
    assert any(NEW_SENTENCE.encode() in t for t in texts)
    for name in names:
        broken = alone / "broken.zip"
        rezip(case, broken, name)
        failed = check_bundle(alone, broken)
        assert failed.returncode == 1, (name, failed.stdout)
        assert json.loads(failed.stdout)["file"] == name, (name, failed.stdout)
    other = check_bundle(alone, case, "--pubkey", "00" * 32)
    assert other.returncode == 1  # the key you pin, not the bundle's word
    shown = crovia(rounds["tmp"], "pubkey", "--json")  # the operator's key, from its key file
    assert shown.returncode == 0, shown.stderr
    key = json.loads(shown.stdout)["public_key_hex"]
    pinned = check_bundle(alone, case, "--pubkey", key)
    assert pinned.returncode == 0, pinned.stdout


def test_the_bundles_wacz_is_the_captures_and_wacz_validate_accepts_it(bundled, tmp_path):
    import zipfile

    with zipfile.ZipFile(bundled["case"]) as archive:
        wacz = archive.read("captures.wacz")
        receipts = {n: archive.read(n) for n in archive.namelist() if n.startswith("receipts/")}
    (tmp_path / "captures.wacz").write_bytes(wacz)
    validated = subprocess.run(
        [str(BIN / "wacz"), "validate", "-f", str(tmp_path / "captures.wacz")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert validated.returncode == 0, validated.stdout + validated.stderr
    with zipfile.ZipFile(tmp_path / "captures.wacz") as inner:
        held = {n: inner.read(n) for n in inner.namelist()}
    captures = {
        n: d for n, d in receipts.items() if json.loads(d)["envelope"]["axiom_type"] == "AX.CAPTURE"
    }
    assert len(captures) == 2
    for name, data in captures.items():
        assert held["crovia/" + name.split("/")[1]] == data
    assert any(n.startswith("archive/") and n.endswith(".warc.gz") for n in held)


def wacz_with(wacz: bytes, name: str, data: bytes | None) -> bytes:
    """The WACZ `wacz` with its file `name` replaced by `data` (None: taken out), its own
    datapackage.json untouched."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(wacz)) as old, zipfile.ZipFile(out, "w") as new:
        for info in old.infolist():
            if info.filename != name:
                new.writestr(info, old.read(info))
            elif data is not None:
                new.writestr(info, data)
    return out.getvalue()


def test_a_forged_wacz_or_tsa_root_is_named_even_with_the_manifest_made_again(bundled):
    import zipfile

    case, alone, forged = bundled["case"], bundled["alone"], bundled["alone"] / "forged.zip"
    with zipfile.ZipFile(case) as archive:
        wacz = archive.read("captures.wacz")
        (pem,) = [n for n in archive.namelist() if n.startswith("tsa_roots/")]
        with zipfile.ZipFile(__import__("io").BytesIO(wacz)) as inner:
            warc = next(n for n in inner.namelist() if n.startswith("archive/"))
            receipt = next(n for n in inner.namelist() if n.startswith("crovia/axm_"))
            pages = bytearray(inner.read("pages/pages.jsonl"))
    pages[len(pages) // 2] ^= 0x01
    cases = {
        "a page list its datapackage.json does not list": wacz_with(
            wacz, "pages/pages.jsonl", bytes(pages)
        ),
        "no WARC": wacz_with(wacz, warc, None),
        "a capture's receipt missing": wacz_with(wacz, receipt, None),
        "not a zip": b"PK\x03\x04 not a zip",
    }
    for why, bad in cases.items():
        reseal(case, forged, {"captures.wacz": bad})
        failed = check_bundle(alone, forged)
        assert failed.returncode == 1, (why, failed.stdout)
        assert json.loads(failed.stdout)["file"] == "captures.wacz", (why, failed.stdout)
    reseal(case, forged, {"captures.wacz": None})
    failed = check_bundle(alone, forged)
    assert json.loads(failed.stdout)["file"] == "captures.wacz", failed.stdout
    # The stamps are checked against the bundle's TSA roots: another CA's certificate in their
    # place (named by its own digest, the summary unchanged) fails the stamped receipts.
    import hashlib

    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    stranger = x509.load_pem_x509_certificate(bundled["stranger"].root.read_bytes())
    name = f"tsa_roots/{hashlib.sha256(stranger.public_bytes(Encoding.DER)).hexdigest()}.pem"
    reseal(case, forged, {pem: None, name: stranger.public_bytes(Encoding.PEM)})
    failed = check_bundle(alone, forged)
    assert failed.returncode == 1, failed.stdout
    shown = json.loads(failed.stdout)
    assert shown["file"].startswith("receipts/") and "rfc3161" in shown["message"], shown
    reseal(case, forged, {pem: b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"})
    assert json.loads(check_bundle(alone, forged).stdout)["file"] == pem


def test_the_bundles_summary_is_text_only(bundled):
    import zipfile
    from html.parser import HTMLParser

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: set[str] = set()
            self.attrs: list = []

        def handle_starttag(self, tag: str, attrs: list) -> None:
            self.tags.add(tag)
            self.attrs += [name for name, _ in attrs]

    with zipfile.ZipFile(bundled["case"]) as archive:
        page = archive.read("summary.html").decode()
    parser = Tags()
    parser.feed(page)
    fixed = {"html", "head", "meta", "title", "style", "body", "h1", "p", "code", "table", "tr"}
    assert parser.tags <= fixed | {"th", "td"}, parser.tags
    assert set(parser.attrs) <= {"lang", "charset", "http-equiv", "content"}
    assert "default-src 'none'" in page and "captures.wacz" in page and "tsa_roots/" in page


def test_the_three_verifiers_agree_on_the_events_records_and_the_bundles_receipts(
    rounds, published, bundled
):
    """Every record a change event names (its published receipt) and every receipt of the edit's
    bundle: `crovia verify` and the verifier page in Chromium give the same verdict, and so they
    do on a receipt changed by one byte; `crovia monitor` verifies the published log holding
    every one of those records."""
    import zipfile

    from playwright.sync_api import sync_playwright

    from ledger.canonical import canonical_json
    from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, Server
    from tests.web.test_page import verdict_of

    tmp_path = rounds["tmp"]
    events = changes(tmp_path)
    ids = sorted({r["axiom_id"] for e in events for r in e["records"]})
    served = published / "bundle"  # the bundle's receipts (their seals stamped), served as files
    served.mkdir(exist_ok=True)
    cases = {f"/v/{i}": published / "receipts" / f"{i}.json" for i in ids}
    with zipfile.ZipFile(bundled["case"]) as archive:
        for name in [n for n in archive.namelist() if n.startswith("receipts/")]:
            (served / name.split("/")[1]).write_bytes(archive.read(name))
            cases[f"/v/?src=/bundle/{name.split('/')[1]}"] = served / name.split("/")[1]
    changed = json.loads(cases[f"/v/{ids[0]}"].read_bytes())
    changed["envelope"]["body"]["vendor"] += "x"
    (served / "changed.json").write_bytes(canonical_json(changed))
    cases["/v/?src=/bundle/changed.json"] = served / "changed.json"
    trust = str(published / "trust_root.json")
    cli = {
        path: "valid" if crovia(tmp_path, "verify", str(f), "--trust-root", trust).returncode == 0
        else "invalid"
        for path, f in cases.items()
    }  # fmt: skip
    server = Server(published)
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                page = chromium.new_page()
                shown = {}
                for path in cases:
                    page.goto(server.base.rstrip("/") + path)
                    shown[path] = verdict_of(page)["verdict"]
            finally:
                chromium.close()
    finally:
        server.stop()
    assert [p for p, verdict in cli.items() if verdict != "valid"] == [
        "/v/?src=/bundle/changed.json"
    ]
    assert shown == cli, {p: (cli[p], shown[p]) for p in cases if cli[p] != shown[p]}
    vkey = json.loads(crovia(tmp_path, "pubkey", "--json").stdout)["note_verifier_key"]
    monitored = crovia(tmp_path, "monitor", str(published), "--vkey", vkey, "--json")
    assert monitored.returncode == 0, monitored.stdout + monitored.stderr
    leaves_ = [r["leaf_index"] for e in events for r in e["records"]]
    assert json.loads(monitored.stdout)["size"] > max(leaves_)
