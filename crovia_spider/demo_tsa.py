"""A real RFC 3161 TSA on 127.0.0.1 for `make demo` and the tests: OpenSSL's own `openssl ts
-reply` answers. Never for production: its keys are throwaway files and it trusts every query.

`TestPki(tmp)` makes, with `openssl req` and `openssl x509`, a root CA and a TSA certificate whose
extendedKeyUsage is timeStamping and critical. `OpenSslTsa(pki)` serves POSTed queries by running
`openssl ts -reply -queryfile ... -config ...`, so no line of our code builds the tokens we check.
`mode` makes it misbehave: "garbage" answers bytes that are no reply, "hang" never answers (until
the server stops), "other_nonce" answers a fresh query for the same digest (another nonce),
"other_data" answers a query for another digest. Requests are counted in `hits`.
"""

from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
from pathlib import Path

OPENSSL = shutil.which("openssl")
_TS_CONFIG = """\
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
serial = {dir}/serial
crypto_device = builtin
signer_cert = {dir}/tsa.pem
signer_key = {dir}/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.2
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""
_TSA_EXTENSIONS = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, timeStamping
"""


def openssl(*args: str, cwd: Path) -> bytes:
    """Run openssl; raise with its stderr when it fails."""
    proc = subprocess.run([OPENSSL, *args], cwd=cwd, capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


class TestPki:
    """A root CA (ca.pem) and a TSA certificate (tsa.pem, tsa.key) in `directory`."""

    __test__ = False

    def __init__(self, directory: Path, name: str = "Test") -> None:
        self.dir = directory
        directory.mkdir(parents=True, exist_ok=True)
        ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
        openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "3",
                "-subj", f"/CN={name} Root CA",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)  # fmt: skip
        openssl("req", "-new", *ec, "-keyout", "tsa.key", "-out", "tsa.csr",
                "-subj", f"/CN={name} TSA", cwd=directory)  # fmt: skip
        (directory / "tsa.ext").write_text(_TSA_EXTENSIONS)
        openssl("x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", "tsa.pem", "-days", "2", "-extfile", "tsa.ext",
                cwd=directory)  # fmt: skip
        (directory / "serial").write_text("01\n")
        (directory / "ts.cnf").write_text(_TS_CONFIG.format(dir=directory))

    @property
    def root(self) -> Path:
        return self.dir / "ca.pem"

    @property
    def tsa_cert(self) -> Path:
        return self.dir / "tsa.pem"

    def reply(self, query: bytes) -> bytes:
        """`openssl ts -reply` to a DER query (callers serialise: the files are shared)."""
        (self.dir / "query.tsq").write_bytes(query)
        openssl("ts", "-reply", "-queryfile", "query.tsq", "-config", "ts.cnf",
                "-out", "reply.tsr", cwd=self.dir)  # fmt: skip
        return (self.dir / "reply.tsr").read_bytes()

    def query_for_digest(self, digest: bytes) -> bytes:
        """A fresh `openssl ts -query` (its own random nonce) for a SHA-256 digest."""
        openssl("ts", "-query", "-digest", digest.hex(), "-sha256", "-cert",
                "-out", "own.tsq", cwd=self.dir)  # fmt: skip
        return (self.dir / "own.tsq").read_bytes()


class OpenSslTsa:
    """`with OpenSslTsa(pki) as tsa:` serves `tsa.url` on 127.0.0.1 until the block ends."""

    def __init__(self, pki: TestPki, mode: str = "ok") -> None:
        self.pki = pki
        self.mode = mode
        self.hits = 0
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/tsa"

    def __enter__(self) -> OpenSslTsa:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._released.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def answer(self, query: bytes) -> bytes | None:
        """The reply body for `query`, or None after waiting for the server to stop (hang)."""
        with self._lock:
            self.hits += 1
            if self.mode == "hang":
                pass
            elif self.mode == "garbage":
                return b"<html>not a timestamp reply</html>"
            elif self.mode == "other_nonce":
                return self.pki.reply(self.pki.query_for_digest(_digest_of(query)))
            elif self.mode == "other_data":
                return self.pki.reply(self.pki.query_for_digest(b"\x42" * 32))
            else:
                return self.pki.reply(query)
        self._released.wait()
        return None


def _digest_of(query: bytes) -> bytes:
    from rfc3161_client import _rust

    return _rust.parse_timestamp_request(query).message_imprint.message


def _handler_for(tsa: OpenSslTsa) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            query = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = tsa.answer(query)
            if body is None:
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: pytest shows failures, not access logs."""

    return Handler


def closed_port_url() -> str:
    """An address on 127.0.0.1 where nothing listens (a TSA that is down)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/tsa"
