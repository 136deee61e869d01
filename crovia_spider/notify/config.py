"""config/notify.toml: who is told of which change events, validated before anything is sent.

    apprise = ["mailto://user:pass@mail.example.org"]   # people: a short text and the link,
    apprise_events = ["edited", "removed"]               # unsigned (Apprise URLs; optional
    apprise_vendors = []                                 # filters as for a webhook)
    site = "https://evidence.example.org/"      # optional: where `crovia publish` output is served,
                                                # for links to each record's /v/<axiom_id> page
    allow_private = ["127.0.0.1:8080"]          # optional: non-global targets allowed (HOST[:PORT])

    [[webhooks]]                                # after the top-level keys (TOML's rule)
    url = "https://hooks.example.org/crovia"     # POSTed to, signed (Standard Webhooks, v1a)
    events = ["edited", "removed"]               # optional: these kinds only (default: all)
    vendors = ["openai_policies"]                # optional: these vendors only (default: all)
    secret_file = "data/keys/hooks.secret"       # optional: a whsec_ secret, adds a v1 signature

A missing file is no target at all. Unknown keys, a URL that is not http(s) (a webhook), an event
kind that does not exist, a vendor id that is not one are each refused, naming the file, the entry
and the reason (read within the bounds of every config file: crovia_spider/config/tables.py).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crovia_spider.config.tables import check_top_level, read_toml
from crovia_spider.exceptions import ConfigError
from ledger.changes import EVENT_KINDS

MAX_TARGETS = 100
_TOP = {
    key: key for key in ("apprise", "apprise_events", "apprise_vendors", "site", "allow_private")
} | {"webhooks": "[[webhooks]]"}
_WEBHOOK = {"url", "events", "vendors", "secret_file"}
_ID = re.compile(r"[a-z0-9][a-z0-9_]*")
_ALLOWED = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.\-]+)(?::([0-9]{1,5}))?")


@dataclass(frozen=True)
class Target:
    """One endpoint: a webhook (signed POST) or an Apprise URL (a person's channel)."""

    kind: str  # "webhook" or "apprise"
    url: str
    events: tuple[str, ...] = ()  # () : every kind
    vendors: tuple[str, ...] = ()  # () : every vendor
    secret_file: str = ""

    def wants(self, kind: str, vendor: str) -> bool:
        """Whether this target is told of an event of `kind` from `vendor` ("+N more" goes
        wherever the page's events would)."""
        kind_ok = not self.events or kind in self.events or kind == "more"
        return kind_ok and (not self.vendors or vendor in self.vendors)


@dataclass(frozen=True)
class NotifyConfig:
    targets: tuple[Target, ...] = ()
    site: str = ""
    allow_private: tuple[tuple[str, int | None], ...] = field(default_factory=tuple)

    def allows(self, host: str, port: int) -> bool:
        """Whether a non-global `host`:`port` is allowed as a target (allow_private)."""
        host = host.lower().strip("[]")
        return any(h == host and p in (None, port) for h, p in self.allow_private)


def load_notify(path: Path) -> NotifyConfig:
    """The notify config at `path`; an empty one when there is no such file. Raises ConfigError
    naming the file, the entry and what is wrong."""
    path = Path(path)
    try:
        document = read_toml(path)
    except FileNotFoundError:
        return NotifyConfig()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the notify config: {exc}") from exc
    check_top_level(path, document, _TOP)
    try:
        return _config(document)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _config(document: dict[str, Any]) -> NotifyConfig:
    targets: list[Target] = []
    hooks = document.get("webhooks", [])
    if not isinstance(hooks, list):
        raise TypeError("'webhooks' is a list of [[webhooks]] tables")
    for number, hook in enumerate(hooks, start=1):
        where = f"[[webhooks]] entry {number}"
        if not isinstance(hook, dict):
            raise TypeError(f"{where}: not a table")
        unknown = sorted(set(hook) - _WEBHOOK)
        if unknown:
            raise ValueError(
                f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {sorted(_WEBHOOK)}"
            )
        try:
            url = _web_url(hook.get("url"))
            secret = hook.get("secret_file", "")
            if not isinstance(secret, str):
                raise TypeError("'secret_file' is a path")
            targets.append(
                Target(
                    "webhook",
                    url,
                    _kinds(hook.get("events")),
                    _vendors(hook.get("vendors")),
                    secret,
                )
            )
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{where}: {exc}") from None
    people = document.get("apprise", [])
    if not isinstance(people, list) or not all(isinstance(u, str) and u.strip() for u in people):
        raise TypeError("'apprise' is a list of Apprise URLs (strings)")
    events = _kinds(document.get("apprise_events"))
    vendors = _vendors(document.get("apprise_vendors"))
    for url in people:
        if any(ch.isspace() for ch in url.strip()) or "://" not in url:
            raise ValueError(f"'apprise': {url!r} is not an Apprise URL (scheme://...)")
        targets.append(Target("apprise", url.strip(), events, vendors))
    if len(targets) > MAX_TARGETS:
        raise ValueError(f"{len(targets)} targets, more than the {MAX_TARGETS} allowed")
    site = document.get("site", "")
    if site:
        site = _web_url(site)
    return NotifyConfig(tuple(targets), site, _allowed(document.get("allow_private", [])))


def _web_url(url: Any) -> str:
    if not isinstance(url, str) or any(ch.isspace() for ch in url):
        raise ValueError(f"'url' = {url!r}: an http(s) URL without spaces is required")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"'url' = {url!r}: an absolute http(s) URL is required")
    parts.port  # noqa: B018 - ValueError for a port that is no number
    return url


def _kinds(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("'events' is a list of event kinds")
    for kind in value:
        if kind not in EVENT_KINDS:
            raise ValueError(
                f"'events': {kind!r} is no event kind; kinds: {', '.join(EVENT_KINDS)}"
            )
    return tuple(value)


def _vendors(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
        isinstance(v, str) and _ID.fullmatch(v) for v in value
    ):
        raise TypeError("'vendors' is a list of vendor ids (lower-case letters, digits, _)")
    return tuple(value)


def _allowed(value: Any) -> tuple[tuple[str, int | None], ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("'allow_private' is a list of HOST or HOST:PORT")
    out = []
    for entry in value:
        match = _ALLOWED.fullmatch(entry.strip())
        if match is None:
            raise ValueError(f"'allow_private': {entry!r} is not HOST or HOST:PORT")
        port = int(match[2]) if match[2] else None
        out.append((match[1].lower().strip("[]"), port))
    return tuple(out)
