"""A webhook receiver written from the Standard Webhooks specification, not from our code.

It listens on 127.0.0.1 and records every POST (headers, exact body bytes); its answers are
scripted (status and delay, used in order, the last repeating). `verify` checks one delivery as
the specification says a consumer must: the three headers present, the timestamp within five
minutes, and one of the space-separated signatures valid: `v1a,<base64>` an Ed25519 signature by
the pinned `whpk_` key of `<webhook-id>.<webhook-timestamp>.<body>`, checked with `cryptography`
(a `v1` one, when a secret is given, with the specification's own `standardwebhooks` library).
"""

from __future__ import annotations

import base64
import http.server
import threading
import time
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

TOLERANCE = 300


class Unverified(Exception):
    """A delivery that does not verify (the message says why)."""


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Answer:
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Receiver:
    answers: list[Answer] = field(default_factory=lambda: [Answer()])
    deliveries: list[Delivery] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lock = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver.lock:
                    receiver.deliveries.append(Delivery(self.path, headers, body, time.time()))
                    answers = receiver.answers
                    answer = answers.pop(0) if len(answers) > 1 else answers[0]
                    receiver.lock.notify_all()
                if answer.delay:
                    time.sleep(answer.delay)  # the slow receiver under test
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, count: int, timeout: float) -> bool:
        with self.lock:
            return self.lock.wait_for(lambda: len(self.deliveries) >= count, timeout=timeout)


def verify(delivery: Delivery, whpk: str, now: float | None = None, secret: str = "") -> None:
    """Raise Unverified unless `delivery` is signed as Standard Webhooks says (module docstring)."""
    msg_id = delivery.headers.get("webhook-id")
    stamp = delivery.headers.get("webhook-timestamp")
    signatures = delivery.headers.get("webhook-signature")
    if not (msg_id and stamp and signatures):
        raise Unverified("missing webhook-id, webhook-timestamp or webhook-signature")
    if abs((now or time.time()) - int(stamp)) > TOLERANCE:
        raise Unverified("timestamp outside the tolerance")
    if not whpk.startswith("whpk_"):
        raise Unverified("not a whpk_ key")
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(whpk.removeprefix("whpk_")))
    content = f"{msg_id}.{stamp}.".encode() + delivery.body
    if secret:
        from standardwebhooks import Webhook, WebhookVerificationError

        try:
            Webhook(secret).verify(delivery.body, delivery.headers)
        except WebhookVerificationError as exc:
            raise Unverified(f"v1: {exc}") from None
    for signature in signatures.split(" "):
        version, _, value = signature.partition(",")
        if version != "v1a":
            continue
        try:
            key.verify(base64.b64decode(value), content)
            return
        except (InvalidSignature, ValueError):
            continue
    raise Unverified("no v1a signature by the pinned key")
