"""Writes the fuzz harnesses' seed corpus, tests/fuzz/corpus/<harness>/, from real vectors.

Run from the project root: `python -m tests.fuzz.make_corpus`. Seeds come from tests/fixtures
(feed bodies), tests/vectors (the seed receipt, C2SP signed notes, OpenTimestamps proofs) and from
objects made here by the project's own code with the fixed keys of tests/fuzz/keys.py: a small
ledger signed, sealed, stamped (`openssl ts` answers the RFC 3161 requests) and published, whose
receipts, tiles, entry bundles, checkpoints and witness requests become seeds. The output is
committed; running this again rewrites it (the tokens and signatures differ: new nonces, times).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from opentimestamps.core.notary import PendingAttestation
from opentimestamps.core.op import OpAppend, OpSHA256
from opentimestamps.core.serialize import BytesSerializationContext
from opentimestamps.core.timestamp import Timestamp

from crovia_spider.demo_tsa import TestPki
from ledger.canonical import canonical_json
from ledger.publish import publish
from ledger.stamps import rfc3161
from ledger.stamps.stamper import Stamper
from ledger.store import Ledger
from ledger.tlog.checkpoint import Checkpoint, sign_checkpoint
from ledger.tlog.note import Note, parse_note
from ledger.tlog.proof import TlogProof, format_tlog_proof
from ledger.tlog.rfc6962 import MemoryNodes, consistency_proof, inclusion_proof, leaf_hash, root_at
from ledger.tlog.witness import format_request
from tests.capture import hidden_pages
from tests.fuzz.keys import LOG_KEY, LOG_SIGNER, ORIGIN, OTS_DIGEST, TSA_DATA, WITNESS_SIGNER
from tests.vectors.make_vectors import sample_envelope

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
FINDINGS = Path(__file__).resolve().parent / "findings"
FEED_SEED_BYTES = 12_000  # a longer fixture is cut here: the fuzzer runs faster on small bodies
CALENDAR = "http://127.0.0.1:1/calendar"
TSA = "http://127.0.0.1:1/tsa"


def main() -> None:
    shutil.rmtree(CORPUS, ignore_errors=True)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        pki = TestPki(work / "pki", name="Fuzz")
        ledger_dir, pub = work / "ledger", work / "pub"
        receipts = _ledger(ledger_dir, pki)
        publish(ledger_dir, pub)
        _feeds()
        _jsonfeeds()
        _listings()
        _sitemaps()
        _oaipmh()
        _page_texts()
        _browser_evidence()
        _results()
        _receipts(receipts)
        _tiles(pub)
        _notes(pub)
        _witness()
        _ots()
        _tsa(pki)
    _wide_forks()


def _write(harness: str, name: str, data: bytes) -> None:
    folder = CORPUS / harness
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


class _Answers:
    """The stamper's transport, answered in process: `openssl ts -reply` for the TSA, and a
    calendar's pending timestamp (digest -> append -> sha256) for OpenTimestamps."""

    def __init__(self, pki: TestPki) -> None:
        self.pki = pki

    def post(self, url: str, body: bytes, *, content_type: str, accept: str) -> bytes:
        if url == TSA:
            return self.pki.reply(body)
        return _calendar_reply(body)

    def get(self, url: str, *, accept: str) -> bytes:
        raise AssertionError(f"no upgrade asked here: {url}")


def _calendar_reply(digest: bytes) -> bytes:
    stamp = Timestamp(digest)
    commitment = stamp.ops.add(OpAppend(b"\x07" * 16)).ops.add(OpSHA256())
    commitment.attestations.add(PendingAttestation(CALENDAR))
    ctx = BytesSerializationContext()
    stamp.serialize(ctx)
    return ctx.getbytes()


def _ledger(ledger_dir: Path, pki: TestPki) -> list[bytes]:
    with Ledger.open(ledger_dir, signing_key=LOG_KEY) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(5)])
        ledger.seal(run_id="fuzz")
        plain = ledger.receipt(issued[0].axiom_id)
        seals = list(ledger.seals())
    Stamper(ledger_dir, _Answers(pki), tsa_urls=[TSA], calendars=[CALENDAR]).stamp(seals)
    with Ledger.open(ledger_dir) as reader:
        stamped = reader.receipt(issued[1].axiom_id)
    return [canonical_json(plain), canonical_json(stamped)]


def _feeds() -> None:
    for folder in ("feeds", "bad"):
        for path in sorted((ROOT / "tests" / "fixtures" / folder).iterdir()):
            _write("feed", path.name, path.read_bytes()[:FEED_SEED_BYTES])


def _jsonfeeds() -> None:
    """The JSON Feed fixtures, and small hostile shapes (tests/spider/test_jsonfeed.py)."""
    for path in sorted((ROOT / "tests" / "fixtures" / "feeds").glob("*.json")):
        _write("jsonfeed", path.name, path.read_bytes())
    v11 = '{"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": [%s]}'
    shapes = {
        "wrong_types.json": v11 % '{"id": true}, {"id": "b", "title": ["x"]}, {"id": 7}',
        "duplicate_names.json": v11 % '{"id": "a", "id": "b", "url": "https://a.example/"}',
        "constants.json": v11 % '{"id": "n", "title": NaN}, {"id": 1e999}',
        "deep.json": v11 % ("[" * 70 + "]" * 70),
        "surrogate.json": v11 % '{"id": "s", "summary": "\\ud800"}',
        "no_title.json": '{"version": "https://jsonfeed.org/version/1", "items": []}',
    }
    for name, text in shapes.items():
        _write("jsonfeed", name, text.encode())


def _listings() -> None:
    """Small listing pages of the shapes fuzz_listing.OPTIONS read (cards, a list of posts, bare
    links; relative, javascript: and repeated links, a `<base>`, a meta charset, a missing title)
    and the HTML page of tests/fixtures/bad. The harness picks its selectors by the input's length
    modulo 3, so each page is written three times, 0, 1 and 2 spaces longer."""
    card = '<article><a href="{}"><img src="p.png"></a><h3>{}</h3><time>{}</time></article>'
    post = '<li class="post"><a href="{}">{}</a><time datetime="{}">date</time></li>'
    pages = {
        "cards.html": "".join(
            card.format(*row)
            for row in (
                ("/news/one", "One", "2026-01-02"),
                ("news/two", "Two &amp; more", "yesterday"),
                ("javascript:void(0)", "Script", ""),
                ("/news/one", "One again", ""),
            )
        ),
        "posts.html": '<base href="https://cdn.example.net/"><ul>'
        + "".join(
            post.format(*row)
            for row in (
                ("/news/a", "A", "2026-01-01T00:00:00Z"),
                ("/news/draft-b", "B", "2026-01-02"),
                ("/about", "About", ""),
            )
        )
        + '</ul><div class="card"><a>no link</a></div>',
        "links_latin1.html": '<meta charset="iso-8859-1"><a href="/n/caf\xe9">Caf\xe9</a>'
        '<a href="mailto:x@example.org">mail</a><a href="/n/2"></a>',
    }
    bodies = {name: text.encode("latin-1") for name, text in pages.items()}
    bodies["not_a_feed.html"] = (ROOT / "tests/fixtures/bad/not_a_feed.html").read_bytes()
    for name, body in bodies.items():
        for pad in range(3):
            _write("listing", f"{pad}_{name}", body + b" " * pad)


def _sitemaps() -> None:
    """Small sitemaps of each shape parse_sitemap reads (a urlset with lastmod and malformed locs, a
    news sitemap, an index, a robots.txt, a gzipped urlset) and refuses (entities, a truncated
    document, a wrong root). The harness picks where the body came from by the input's length
    modulo 3 and the include / exclude patterns modulo 2, so each is written six times, 0 to 5
    newlines longer."""
    urlset = '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"%s>%s'
    news = ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
    url = "<url><loc>%s</loc><lastmod>2026-01-0%d</lastmod></url>"
    pages = "".join(
        url % (loc, n)
        for n, loc in enumerate(
            (
                "https://lab.example.org/news/1",
                "https://lab.example.org/blog/draft-2?page=3&amp;x=1",
                "/relative",
                "https://lab.example.org/a b",
                "https://lab.example.org/&#xD800;",
            ),
            1,
        )
    )
    item = (
        "<url><loc>https://lab.example.org/news/2</loc><news:news><news:publication><news:name>"
        "Lab</news:name><news:language>en</news:language></news:publication><news:publication_date>"
        "2026-01-01T10:00:00Z</news:publication_date><news:title>Caf&eacute; <![CDATA[& more]]>"
        "</news:title></news:news></url>"
    )
    index = "".join(
        f"<sitemap><loc>https://lab.example.org/{name}</loc></sitemap>"
        for name in ("s1.xml.gz", "s2.xml", "s1.xml.gz", "ftp://x")
    )
    bodies = {
        "urlset.xml": (urlset % ("", pages + "</urlset>")).encode(),
        "news.xml": (urlset % (news, item + "</urlset>\n<!-- generated -->")).encode(),
        "index.xml": f"<sitemapindex>{index}</sitemapindex>".encode(),
        "robots.txt": b"User-agent: *\nDisallow: /x\nSitemap: https://lab.example.org/s.xml\n"
        b"sitemap: /s2.xml\nSitemap: http://[::1\n",
        "urlset.xml.gz": gzip.compress((urlset % ("", pages + "</urlset>")).encode(), mtime=0),
        "entities.xml": b'<!DOCTYPE urlset [<!ENTITY a "aa"><!ENTITY b "&a;&a;">]><urlset/>',
        "truncated.xml": (urlset % ("", pages))[:-20].encode(),
        "wrong_root.xml": b"<rss version='2.0'><channel><item/></channel></rss>",
    }
    for name, body in bodies.items():
        for pad in range(6):
            _write("sitemap", f"{pad}_{name}", body + b"\n" * pad)


def _oaipmh() -> None:
    """OAI-PMH pages of each shape parse_oaipmh reads (records in arXivRaw, a deleted one, a
    malformed one, a resumption token, an empty one ending the list, noRecordsMatch) and refuses
    or fails (badResumptionToken, entities, a DOCTYPE, a truncated page, a wrong root); each
    written twice, 0 and 1 newline longer."""
    from tests.spider.oaipmh_server import Paper, page_xml, record_xml

    records = (
        record_xml(Paper("2612.00001", "2026-12-01", versions=2, categories="cs.AI cs.LG"))
        + record_xml(Paper("hep-th/9901001", "2026-12-01", abstract="a &lt; b & c"))
        + record_xml(Paper("2612.00002", "2026-12-01", deleted=True))
        + "<record><header><identifier>oai:arXiv.org:nope</identifier></header></record>"
    )
    NOW = "2026-12-02T06:00:00Z"
    bodies = {
        "page.xml": page_xml(records, "6960524|1001", cursor=0, size=4, now=NOW),
        "last.xml": page_xml(records, "", now=NOW),
        "whole.xml": page_xml(records, None, now=NOW),
        "none.xml": page_xml("", None, error="noRecordsMatch:nothing", now=NOW),
        "bad_token.xml": page_xml("", None, error="badResumptionToken:x", now=NOW),
        "entities.xml": page_xml(
            records, None, prolog='<!DOCTYPE OAI-PMH [<!ENTITY a "aa">]>', now=NOW
        ),
        "truncated.xml": page_xml(records, "t", now=NOW)[:-40],
        "wrong_root.xml": b"<rss version='2.0'><channel><item/></channel></rss>",
    }
    for name, body in bodies.items():
        for pad in range(2):
            _write("oaipmh", f"{pad}_{name}", body + b"\n" * pad)


def _results() -> None:
    """A cluster worker's valid result (tests/cluster/sample_result.py) and shapes one field
    wrong each; jobs, valid and not (even first byte: a result, odd: a job)."""
    import orjson

    from crovia_spider.cluster.jobs import Job
    from tests.cluster.sample_result import sample_result
    from tests.fuzz.fuzz_result import FEED

    good = sample_result()
    _write("result", "valid.json", b"\x00" + orjson.dumps(good))
    few = {**good, "items": good["items"][:1]}
    _write("result", "one_item.json", b"\x00" + orjson.dumps(few))
    _write(
        "result",
        "bool_status.json",
        b"\x02" + orjson.dumps({**good, "outcome": {**good["outcome"], "status": True}}),
    )
    _write(
        "result",
        "not_modified.json",
        b"\x04"
        + orjson.dumps(
            {**good, "items": [], "fetch": {**good["fetch"], "outcome": "not_modified"}}
        ),
    )
    job = Job(
        "1-0",
        "run",
        "2026-12-03T00:00:00.000000Z",
        "vendor_press",
        FEED,
        {"etag": '"e"'},
        {"CROVIA_MAX_ENTRIES_PER_FEED": "20"},
    )
    _write("result", "job.json", b"\x01" + job.encode())
    _write("result", "job_bad_feed.json", b"\x03" + job.encode().replace(b"https", b"file"))
    _capture_results()


def _capture_results() -> None:
    """A capture job's results (first byte even, from CAPTURE_FROM): valid, with a redirect and
    a 404, one wrong type; and the capture job (odd)."""
    import hashlib

    import orjson

    from tests.fuzz.fuzz_result import CAPTURE_FROM, CAPTURE_JOB, HEAD, PAGE, PAGES

    def page(n: int, **changed: object) -> dict[str, object]:
        found = {
            "key": PAGES[n]["key"], "url": PAGES[n]["url"],
            "captured_at": "2026-12-03T00:00:01.000000Z", "final_url": PAGES[n]["url"],
            "status": 200, "redirects": [], "headers": {"content_type": "text/html"},
            "ip_address": "192.0.2.1", "tls_certificate_sha256": "",
            "body_sha256": hashlib.sha256(PAGE).hexdigest(), "request_head_sha256": "",
            "response_head_sha256": hashlib.sha256(HEAD).hexdigest(), "error": "",
        }  # fmt: skip
        return {**found, **changed}

    failed = {"final_url": "", "status": None, "headers": {}, "ip_address": "",
              "body_sha256": None, "response_head_sha256": "", "error": "timeout"}  # fmt: skip
    moved = {"redirects": [PAGES[0]["url"]], "final_url": "https://openai.com/moved/"}
    for n, (name, pages) in enumerate(
        (
            ("capture_valid.json", [page(0), page(1, **failed)]),
            ("capture_redirect.json", [page(0, **moved), page(1, status=404)]),
            ("capture_bool_status.json", [page(0, status=True), page(1, **failed)]),
        )
    ):
        result = {"schema": "crovia.result.v1", "pages": pages}
        _write("result", name, bytes([CAPTURE_FROM + 2 * n]) + orjson.dumps(result))
    _write("result", "capture_job.json", b"\x05" + CAPTURE_JOB.encode())


def _page_texts() -> None:
    """Small captured pages of each shape main_text reads (an article with boilerplate and a
    table, a meta charset, a UTF-16 page with its BOM, a lone surrogate's reference, XHTML, a page
    with no main text, the HTML page of tests/fixtures/bad) and keeps as bytes (a PDF). The
    harness picks the Content-Type by the input's length modulo 7 (the last: the input's first
    line), so each is written seven times, 0 to 6 spaces longer, and once more after a first line
    naming the type it is."""
    paragraph = "<p>{} The model was evaluated on the benchmarks listed in the appendix.</p>"
    article = "".join(paragraph.format(n) for n in range(4))
    table = "<table><tr><th>Benchmark</th><th>Score</th></tr><tr><td>A</td><td>91</td></tr></table>"
    page = (
        "<!doctype html><html><head><title>Launch</title></head><body><nav><a href='/'>Home</a>"
        "</nav><article><h1>Launch</h1>{}</article><footer>nonce 5f3a, 2026-12-03</footer>"
        "</body></html>"
    )
    pages = {
        "article.html": (page.format(article + table).encode(), "text/html; charset=utf-8"),
        "latin1.html": (
            page.format(
                '<meta charset="iso-8859-1">' + article.replace("model", "mod\xe8le")
            ).encode("latin-1"),
            "text/html",
        ),
        "utf16.html": (page.format(article).encode("utf-16"), "text/html; charset=utf-16"),
        "surrogate.html": (page.format(article + "<p>&#xd800; &#0; &#x110000;</p>").encode(), ""),
        "xhtml.xhtml": (
            b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body>'
            + article.encode()
            + b"</body></html>",
            "application/xhtml+xml",
        ),
        "empty.html": (b"<!doctype html><html><body><nav>Home</nav></body></html>", "text/html"),
        "paper.pdf": (b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n", "application/pdf"),
        "not_a_feed.html": (
            (ROOT / "tests/fixtures/bad/not_a_feed.html").read_bytes(),
            "text/html",
        ),
        # Every way of hiding a paragraph, and of only seeming to (capture/hidden.py).
        "hidden.html": (
            hidden_pages.page(
                "".join([*hidden_pages.HIDDEN.values(), *hidden_pages.SHOWN.values()])
            ),
            "text/html; charset=utf-8",
        ),
    }
    for name, (body, content_type) in pages.items():
        for pad in range(7):
            _write("page_text", f"{pad}_{name}", body + b" " * pad)
        typed = content_type.encode("latin-1") + b"\n" + body
        _write("page_text", f"typed_{name}", typed + b" " * (-(len(typed) + 1) % 7))


def _browser_evidence() -> None:
    """Main documents as `wall_evidence` reads them (a header line, then the page): walls of
    Cloudflare, reCAPTCHA, DataDome, an ordinary refusal and an article; and manifests of a
    browser capture's exchanges, one whole, one cut short, one of the wrong shape."""
    from tests.capture.browser_site import page

    pages = {
        "cloudflare": b"cf-mitigated: challenge; content-type: text/html\n<!DOCTYPE html><html>"
        b"<head>"
        b"<title>Just a moment...</title></head><body><script src='/cdn-cgi/challenge-platform/h/g/"
        b"orchestrate/chl_page/v1'></script></body></html>",
        "recaptcha": b"retry-after: 60\n<html><head><title>Are you a robot?</title></head><body>"
        b"<div class='g-recaptcha' data-sitekey='x'></div></body></html>",
        "datadome": b"server: nginx\n<html><body><iframe src='https://geo.captcha-delivery.com/c'>"
        b"</iframe></body></html>",
        "refusal": b"content-type: text/plain\nForbidden",
        "article": b"content-type: text/html; charset=utf-8\n" + page("Launch"),
    }
    manifest = {
        "schema": "crovia.browser_exchanges.v1",
        "page": "https://lab.example.org/news/launch",
        "exchanges": [
            {"url": "https://lab.example.org/news/launch", "method": "GET", "status": 200,
             "body_sha256": "a" * 64, "response_head_sha256": "b" * 64, "navigation": True},
            {"url": "https://lab.example.org/app.js", "method": "GET", "status": 200,
             "body_sha256": "c" * 64, "response_head_sha256": "d" * 64},
            {"url": "http://10.0.0.7/x", "method": "GET", "refused": "a private address"},
        ],
    }  # fmt: skip
    whole = json.dumps(manifest).encode()
    manifests = {
        "manifest": whole,
        "manifest_cut": whole[:150],
        "manifest_list": b'{"exchanges": 1}',
    }
    for pad in range(6):  # each page at each of the six statuses the harness picks by length
        for name, data in pages.items():
            _write("browser_evidence", f"{pad}_{name}", data + b" " * pad)
    for name, data in manifests.items():
        _write("browser_evidence", name, data)


def _receipts(receipts: list[bytes]) -> None:
    _write("receipt", "seed_axiom_proof.json", (ROOT / "tests/vectors/seed_axiom_proof.json")
           .read_bytes())  # fmt: skip
    _write("receipt", "fuzz_ledger_leaf0.json", receipts[0])
    _write("receipt", "fuzz_ledger_leaf1_stamped.json", receipts[1])


def _tiles(pub: Path) -> None:
    for name, path in (("hashes", "tile/0/000.p/5"), ("bundle", "tile/entries/000.p/5")):
        _write("tiles", f"{name}_width5", bytes([4]) + (pub / path).read_bytes())
    one = (pub / "tile/entries/000.p/5").read_bytes()
    first = one[: 2 + int.from_bytes(one[:2], "big")]
    _write("tiles", "bundle_width1", bytes([0]) + first)


def _notes(pub: Path) -> None:
    vectors = json.loads((ROOT / "tests/vectors/c2sp/signed-note.json").read_text())
    for key, value in vectors.items():
        if isinstance(value, str) and value.endswith("\n") and "\n\n" in value:
            _write("note", f"c2sp_{key}", value.encode("utf-8"))
    published = (pub / "checkpoint").read_bytes()
    _write("note", "published_checkpoint", published)
    note = parse_note(published)
    cosigned = Note(note.text, (*note.signatures, WITNESS_SIGNER.sign(note.text, 1_700_000_000)))
    _write("note", "cosigned_checkpoint", cosigned.to_bytes())
    nodes = _tree(8)
    checkpoint = sign_checkpoint(Checkpoint(ORIGIN, 8, root_at(8, nodes)), [LOG_SIGNER])
    proof = TlogProof(2, tuple(inclusion_proof(2, 8, nodes)), checkpoint, extra=b"fuzz")
    _write("note", "tlog_proof", format_tlog_proof(proof))


def _tree(size: int) -> MemoryNodes:
    """The tree of fuzz_witness.LEAVES: leaf hashes of b"0", b"1", ..."""
    return MemoryNodes([leaf_hash(b"%d" % n) for n in range(size)])


def _witness() -> None:
    for old, size in ((0, 3), (3, 8), (0, 0)):
        nodes = _tree(size)
        note = sign_checkpoint(Checkpoint(ORIGIN, size, root_at(size, nodes)), [LOG_SIGNER])
        proof = consistency_proof(old, size, nodes) if old else []
        _write("witness", f"old{old}_size{size}", format_request(old, proof, note))


def _ots() -> None:
    for path in sorted((ROOT / "tests/vectors/ots").rglob("*.ots")):
        _write("ots", path.name, path.read_bytes())
    reply = _calendar_reply(OTS_DIGEST)
    _write("ots", "calendar_reply", reply)
    _write("ots_reply", "calendar_reply", reply)
    for path in sorted((ROOT / "tests/vectors/ots").glob("*.ots")):
        # the timestamp of a detached file, on its own: a calendar's answer for that file's digest
        _write("ots_reply", path.name, path.read_bytes()[_DETACHED_HEADER:])


_DETACHED_HEADER = 31 + 1 + 1 + 32  # magic, version, sha256's tag, the digest


def _tsa(pki: TestPki) -> None:
    request = rfc3161.new_request(TSA_DATA)
    reply = pki.reply(request.der)
    _write("tsa", "openssl_reply", reply)
    token, _ = rfc3161.accept_reply(reply, request, TSA_DATA)
    _write("tsa", "openssl_token", token)
    refused = pki.reply(pki.query_for_digest(hashlib.sha256(b"other").digest()))
    _write("tsa", "openssl_reply_other_data", refused)
    _write("tsa", "openssl_reply_seal", pki.reply(rfc3161.new_request(b"{}").der))


def _wide_forks() -> None:
    """A calendar reply of 1,000 forks, each an append and a pending attestation: the shape issue
    19 obs 6 describes (about 50 times its size in memory once parsed), kept as a finding."""
    stamp = Timestamp(OTS_DIGEST)
    for n in range(1000):
        stamp.ops.add(OpAppend(n.to_bytes(2, "big"))).attestations.add(PendingAttestation("h"))
    ctx = BytesSerializationContext()
    stamp.serialize(ctx)
    (FINDINGS / "ots_reply").mkdir(parents=True, exist_ok=True)
    (FINDINGS / "ots_reply" / "wide-forks.ots").write_bytes(ctx.getbytes())


if __name__ == "__main__":
    main()
