"""A page captured over TLS names the server's certificate: the sha256 of its DER bytes, as
Harvard LIL's Scoop records provenance, beside the address the response came from."""

from __future__ import annotations

import hashlib
import ssl
import subprocess

import pytest

from tests.crawl import leaves, run_crawl
from tests.feedserver import FeedServer, Reply

pytestmark = pytest.mark.slow
HTML = {"Content-Type": "text/html; charset=utf-8"}
ARTICLE = (
    b"<!doctype html><html><head><title>Launch</title></head><body><article><h1>Launch</h1>"
    + b"".join(
        b"<p>Paragraph %d, long enough to be the main text of an article about a launch.</p>" % n
        for n in range(5)
    )
    + b"</article></body></html>"
)


def test_a_capture_over_tls_names_the_certificate_and_the_address(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    der = ssl.PEM_cert_to_DER_cert(cert.read_text())
    with FeedServer(tls=context) as server:
        server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        listing = b'<ul><li class="card"><a href="/articles/launch">Launch</a></li></ul>'
        server.script("news", Reply(body=listing, headers=HTML))
        server.script("articles/launch", Reply(body=ARTICLE, headers=HTML))
        feeds = (
            f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
            'selectors = { item = "li.card", link = "a", title = "a" }\n'
        )
        crawled = run_crawl(tmp_path, feeds)
    assert crawled.returncode == 0, crawled.stderr[-2000:]
    (record,) = [e for e in leaves(tmp_path) if e["axiom_type"] == "AX.CAPTURE"]
    body = record["body"]
    assert body["outcome"] == "first" and body["url"].startswith("https://127.0.0.1:")
    assert body["tls_certificate_sha256"] == hashlib.sha256(der).hexdigest()
    assert body["ip_address"] == "127.0.0.1"
