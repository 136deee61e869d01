"""A stamping run (`crovia stamp`): ask each TSA and calendar about every seal that lacks its
stamp, check each answer, keep what passes, record what fails.

HTTP is injected (`Transport`: `crovia_spider/fetching/stamp_http.py` in production, with a bounded
timeout), so this module stays pure. A TSA or calendar that is down, slow or wrong costs one
recorded attempt and never stops the run: it is not asked again in the same run (so one that
hangs costs at most one timeout per run, however many seals wait; the seals it skips are counted
in `skipped`), and the next run asks again.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cryptography import x509
from opentimestamps.core.timestamp import Timestamp

from ledger.envelope import utc_now_seconds
from ledger.exceptions import StampTransportError, VerificationError
from ledger.stamps import ots, rfc3161, seal_digest, stamped_bytes
from ledger.stamps.store import StampStore
from ledger.stamps.tst import check_not_before_seal

OTS_TYPE = "application/vnd.opentimestamps.v1"


class Transport(Protocol):
    """Bounded-time HTTP. Both raise StampTransportError (with the status of an HTTP error)."""

    def post(self, url: str, body: bytes, *, content_type: str, accept: str) -> bytes: ...

    def get(self, url: str, *, accept: str) -> bytes: ...


@dataclass
class StampReport:
    """What a run did: seals looked at, stamps kept, and the failed requests (also recorded)."""

    seals: int = 0
    tokens: int = 0
    submitted: int = 0
    upgraded: int = 0
    still_pending: int = 0
    skipped: int = 0  # requests not made: their TSA or calendar failed earlier in the run
    failures: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Stamper:
    """Stamps the seals of one ledger directory through `transport`."""

    ledger_dir: Path
    transport: Transport
    tsa_urls: Sequence[str] = ()
    calendars: Sequence[str] = ()
    roots: Sequence[x509.Certificate] = ()
    report: StampReport = field(default_factory=StampReport)

    def __post_init__(self) -> None:
        self.store = StampStore(self.ledger_dir)
        self._failed_urls: set[str] = set()  # not asked again in this run

    def _ask(self, urls: Iterable[str]) -> list[str]:
        """`urls` without those that failed in this run (each skipped one counted)."""
        asking = []
        for url in urls:
            if url in self._failed_urls:
                self.report.skipped += 1
            else:
                asking.append(url)
        return asking

    def stamp(self, seals: Iterable[Mapping[str, Any]]) -> StampReport:
        """Ask for every missing RFC 3161 token and OpenTimestamps submission of `seals`."""
        for seal in seals:
            self.report.seals += 1
            record = self.store.load(seal)
            changed = self._tokens(seal, record) | self._submit(seal, record)
            if changed:
                self.store.save(record)
        return self.report

    def upgrade(self, seals: Iterable[Mapping[str, Any]]) -> StampReport:
        """Ask the calendars for the completed proof of every seal whose proof is pending."""
        for seal in seals:
            self.report.seals += 1
            record = self.store.load(seal)
            if "ots" in record and self._upgrade(record):
                self.store.save(record)
        return self.report

    def _tokens(self, seal: Mapping[str, Any], record: dict[str, Any]) -> bool:
        have = {token["tsa_url"] for token in record["rfc3161"]}
        data = stamped_bytes(seal)
        kept = False
        for url in self._ask(u for u in self.tsa_urls if u not in have):
            request = rfc3161.new_request(data)
            try:
                reply = self.transport.post(
                    url, request.der, content_type=rfc3161.QUERY_TYPE, accept=rfc3161.REPLY_TYPE
                )
                token, facts = rfc3161.accept_reply(reply, request, data, self.roots)
                check_not_before_seal(facts, seal["sealed_at"])
            except (StampTransportError, VerificationError) as exc:
                self._failed("rfc3161", url, record, exc)
                continue
            record["rfc3161"].append(
                {
                    "gen_time": facts.gen_time,
                    "token_base64": base64.b64encode(token).decode("ascii"),
                    "tsa_url": url,
                }
            )
            self.report.tokens += 1
            kept = True
        return kept

    def _submit(self, seal: Mapping[str, Any], record: dict[str, Any]) -> bool:
        proof = record.get("ots")
        asked = set(proof["calendars"]) if proof else set()
        digest = seal_digest(seal)
        stamp = _proof(proof) if proof else Timestamp(digest)
        kept = []
        for url in self._ask(u for u in self.calendars if u not in asked):
            try:
                body = self.transport.post(
                    _join(url, "digest"), digest, content_type=OTS_TYPE, accept=OTS_TYPE
                )
                reply = ots.check_names_calendar(ots.parse_calendar_reply(digest, body), url)
                stamp.merge(ots.as_pending(reply, url))
            except (StampTransportError, VerificationError) as exc:
                self._failed("ots_submit", url, record, exc)
                continue
            kept.append(url)
        if not kept:
            return False
        record["ots"] = {
            "calendars": sorted(asked | set(kept)),
            "proof_base64": base64.b64encode(ots.detached(stamp)).decode("ascii"),
            "stamped_at": proof["stamped_at"] if proof else utc_now_seconds(),
        }
        self.report.submitted += len(kept)
        return True

    def _upgrade(self, record: dict[str, Any]) -> bool:
        stamp = _proof(record["ots"])
        kept = False
        for commitment, url in ots.pending_commitments(stamp):
            if url not in self.calendars:  # only calendars the operator named are asked
                continue
            if not self._ask([url]):
                continue
            try:
                body = self.transport.get(
                    _join(url, f"timestamp/{commitment.hex()}"), accept=OTS_TYPE
                )
                upgraded = ots.check_names_calendar(ots.parse_calendar_reply(commitment, body), url)
            except StampTransportError as exc:
                if exc.status != 404:  # 404: the calendar has not reached Bitcoin yet
                    self._failed("ots_upgrade", url, record, exc)
                continue
            except VerificationError as exc:
                self._failed("ots_upgrade", url, record, exc)
                continue
            kept |= ots.merge_upgrade(stamp, commitment, url, upgraded)
        if kept:
            record["ots"]["proof_base64"] = base64.b64encode(ots.detached(stamp)).decode("ascii")
            self.report.upgraded += 1
        elif not ots.summarize(stamp).bitcoin:
            self.report.still_pending += 1
        return kept

    def _failed(self, kind: str, url: str, record: Mapping[str, Any], exc: Exception) -> None:
        attempt = {
            "at": utc_now_seconds(),
            "error": str(exc),
            "kind": kind,
            "seal_digest": record["seal_digest"],
            "url": url,
        }
        self.store.record_attempt(attempt)
        self.report.failures.append(attempt)
        self._failed_urls.add(url)


def _proof(record: Mapping[str, Any]) -> Timestamp:
    return ots.load_detached(base64.b64decode(record["proof_base64"])).timestamp


def _join(base: str, path: str) -> str:
    return f"{base.rstrip('/')}/{path}"
