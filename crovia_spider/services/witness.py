"""`crovia witness serve`: a C2SP tlog-witness over HTTP, on Twisted.

    POST /add-checkpoint            -> 200 with the cosignature line, or the spec's 4xx
    GET  /<sha256(origin)>/checkpoint -> the latest cosigned checkpoint (404 if none)

Every decision is ledger/monitor/witness.py's; this module only moves bytes. Requests are handled
in the reactor thread one at a time, and ledger.monitor.Witness holds its own lock besides.
"""

from __future__ import annotations

import logging

from twisted.internet import reactor
from twisted.web.resource import Resource
from twisted.web.server import Request

from crovia_spider.web.bounded import BoundedSite, limited
from ledger.monitor import Witness
from ledger.tlog.witness import WitnessRefusal

# An add-checkpoint body is 63 proof lines and a note of a few signatures: a few kilobytes.
MAX_BODY = 1 << 16

log = logging.getLogger(__name__)


class WitnessRoot(Resource):
    """The witness's URL space."""

    def __init__(self, witness: Witness) -> None:
        super().__init__()
        self._witness = witness
        self.putChild(b"add-checkpoint", _AddCheckpoint(witness))

    def getChild(self, path: bytes, request: Request) -> Resource:
        return _Monitoring(self._witness, path.decode("ascii", "replace"))


class _AddCheckpoint(Resource):
    isLeaf = True

    def __init__(self, witness: Witness) -> None:
        super().__init__()
        self._witness = witness

    def render_POST(self, request: Request) -> bytes:
        body = request.content.read(MAX_BODY + 1)
        try:
            if len(body) > MAX_BODY:
                raise WitnessRefusal(400, f"a request body is at most {MAX_BODY} bytes")
            answer = self._witness.add_checkpoint(body)
        except WitnessRefusal as refusal:
            log.info("add-checkpoint refused (%d): %s", refusal.status, refusal)
            request.setResponseCode(refusal.status)
            request.setHeader(b"Content-Type", refusal.content_type.encode("ascii"))
            return refusal.body
        log.info("add-checkpoint cosigned: %s", answer.decode("utf-8").strip()[:60])
        request.setHeader(b"Content-Type", b"text/plain; charset=utf-8")
        return answer


class _Monitoring(Resource):
    """`/<origin hash>/checkpoint`; anything else is 404."""

    isLeaf = True

    def __init__(self, witness: Witness, hashed_origin: str) -> None:
        super().__init__()
        self._witness = witness
        self._hashed_origin = hashed_origin

    def render_GET(self, request: Request) -> bytes:
        stored = None
        if request.postpath == [b"checkpoint"]:
            stored = self._witness.checkpoint_note(self._hashed_origin)
        if stored is None:
            request.setResponseCode(404)
            return b"not found\n"
        request.setHeader(b"Content-Type", b"text/plain; charset=utf-8")
        return stored


def serve(witness: Witness, host: str, port: int) -> int:
    """Listen on `host`:`port` (0: any free port) until SIGTERM or SIGINT; return the exit code.

    Prints one line naming the URL and the witness's verifier key once it listens.
    """
    # a body over MAX_BODY gets 413 before it is read; a request has a deadline, and open
    # connections a ceiling (crovia_spider/web/bounded.py)
    site = BoundedSite(WitnessRoot(witness), requestFactory=limited(MAX_BODY))
    listening = reactor.listenTCP(port, site, interface=host)
    address = listening.getHost()
    print(
        f"witness {witness.signer.name} listening on http://{address.host}:{address.port}/"
        f" vkey {witness.signer.vkey}",
        flush=True,
    )
    try:
        reactor.run()
    finally:
        witness.close()
    return 0
