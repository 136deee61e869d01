"""A loopback OpenTimestamps calendar for tests, speaking the calendar's HTTP interface.

POST /digest (the body is a digest) answers a serialized timestamp: digest -> append(nonce) ->
sha256 = commitment, attested by a PendingAttestation naming this calendar's URL. Until `mine()`
is called, GET /timestamp/<hex commitment> answers 404 "Pending confirmation"; after it, the
commitment's upgraded timestamp: commitment -> prepend(x) -> sha256 = merkle root, attested by a
BitcoinBlockHeaderAttestation at `HEIGHT`, and `header(commitment)` gives a synthetic 80-byte
block header whose merkle root is that digest. The proof format is the opentimestamps library's.
"""

from __future__ import annotations

import hashlib
import http.server
import threading

from bitcoin.core import CBlockHeader
from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.op import OpAppend, OpPrepend, OpSHA256
from opentimestamps.core.serialize import BytesSerializationContext
from opentimestamps.core.timestamp import Timestamp

HEIGHT = 840000
BLOCK_TIME = 1_713_571_767  # 2024-04-20T00:09:27Z
_PREFIX = b"synthetic block"


class LoopbackCalendar:
    """`with LoopbackCalendar() as cal:` serves `cal.url` on 127.0.0.1 until the block ends."""

    def __init__(self, claim_bitcoin: str = "") -> None:
        # claim_bitcoin: "also" or "only": the submit reply claims a Bitcoin attestation at once
        # (beside its pending one, or instead of it), as a lying or broken calendar would.
        self.claim_bitcoin = claim_bitcoin
        self.submitted: list[bytes] = []
        self.commitments: dict[bytes, bytes] = {}  # commitment -> digest
        self.mined = False
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> LoopbackCalendar:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def mine(self) -> None:
        """From now on every commitment has its Bitcoin attestation."""
        self.mined = True

    def submit(self, digest: bytes) -> bytes:
        self.submitted.append(digest)
        stamp = Timestamp(digest)
        appended = stamp.ops.add(OpAppend(hashlib.sha256(self.url.encode()).digest()[:16]))
        commitment = appended.ops.add(OpSHA256())
        if self.claim_bitcoin != "only":
            commitment.attestations.add(PendingAttestation(self.url))
        if self.claim_bitcoin:
            commitment.attestations.add(BitcoinBlockHeaderAttestation(HEIGHT))
        self.commitments[commitment.msg] = digest
        return _serialize(stamp)

    def upgraded(self, commitment: bytes) -> bytes | None:
        if not self.mined or commitment not in self.commitments:
            return None
        stamp = Timestamp(commitment)
        root = stamp.ops.add(OpPrepend(_PREFIX)).ops.add(OpSHA256())
        root.attestations.add(BitcoinBlockHeaderAttestation(HEIGHT))
        return _serialize(stamp)

    @staticmethod
    def header(commitment: bytes) -> bytes:
        """The synthetic block header whose merkle root the upgraded `commitment` reaches."""
        root = hashlib.sha256(_PREFIX + commitment).digest()
        return CBlockHeader(
            nVersion=0x20000000, hashMerkleRoot=root, nTime=BLOCK_TIME, nBits=0x207FFFFF, nNonce=1
        ).serialize()


def _serialize(stamp: Timestamp) -> bytes:
    ctx = BytesSerializationContext()
    stamp.serialize(ctx)
    return ctx.getbytes()


def _handler_for(cal: LoopbackCalendar) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            digest = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/digest" or not 20 <= len(digest) <= 64:
                self._send(400, b"bad request")
            else:
                self._send(200, cal.submit(digest))

        def do_GET(self) -> None:
            prefix = "/timestamp/"
            body = None
            if self.path.startswith(prefix):
                body = cal.upgraded(bytes.fromhex(self.path[len(prefix) :]))
            if body is None:
                self._send(404, b"Pending confirmation in Bitcoin blockchain")
            else:
                self._send(200, body)

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: pytest shows failures, not access logs."""

    return Handler
