"""The classification rules (config/classify.toml): loading, validation and matching.

Here, not in pipelines/classify.py, so `crovia feeds check` validates the rules without importing
Scrapy; the classify stage (pipelines/classify.py) applies them to each item.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from crovia_spider.config.tables import (
    MAX_CONFIG_BYTES,
    check_top_level,
    parse_toml,
    read_bounded,
)
from crovia_spider.exceptions import ConfigError

# Every decision_hint a rule may give, and what it tells a reader of the envelope.
DECISION_HINTS = {
    "POSITIVE": "a first observation of a publication in scope (the default)",
    "REVISION": "a new version of something already published (arXiv replace, edited post)",
    "CROSSLIST": "an arXiv paper cross-listed into this category from another primary one",
    "NEUTRAL": "observed and recorded, but off the harvest's topic by the keyword rules",
}
_CONDITIONS = {"vendor", "announce_type", "change", "keywords_any", "keywords_none"}
_OUTPUTS = {"decision_hint", "category"}
_TOP_LEVEL = {
    "version": "version",
    "default_decision_hint": "default_decision_hint",
    "rules": "[[rules]]",
}
_CATEGORY = re.compile(r"[a-z0-9][a-z0-9_]*")  # fullmatch: ^...$ lets a final newline by


@dataclass(frozen=True)
class Rule:
    name: str
    conditions: dict[str, Any]
    outputs: dict[str, str]

    def matches(self, facts: dict[str, Any]) -> bool:
        return all(_CHECKS[key](value, facts) for key, value in self.conditions.items())


@dataclass(frozen=True)
class Ruleset:
    """The validated rules of a classify.toml, with the version and digest that identify them."""

    version: str
    sha256: str
    default_decision_hint: str
    rules: tuple[Rule, ...]

    def classify(self, facts: dict[str, Any]) -> dict[str, str]:
        """`decision_hint` and, if a rule sets it, `category` for an item described by `facts`."""
        result: dict[str, str] = {}
        for rule in self.rules:
            if rule.matches(facts):
                result = {**rule.outputs, **result}
        return {"decision_hint": self.default_decision_hint, **result}


def load_ruleset(path: Path | str) -> Ruleset:
    """Read and validate the rules at `path`; ConfigError names the file, rule and reason."""
    path = Path(path)
    try:
        raw = read_bounded(path, MAX_CONFIG_BYTES)
        doc = parse_toml(path, raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the classification rules: {exc}") from exc
    check_top_level(path, doc, _TOP_LEVEL)
    version, default = doc.get("version"), doc.get("default_decision_hint", "POSITIVE")
    if not isinstance(version, str) or not version:
        raise ConfigError(f"{path}: `version` (a non-empty string) is required")
    if default not in DECISION_HINTS:
        raise ConfigError(
            f"{path}: default_decision_hint {default!r} is not one of {list(DECISION_HINTS)}"
        )
    rules = tuple(_rule(path, i, r) for i, r in enumerate(doc.get("rules", []), start=1))
    return Ruleset(version, hashlib.sha256(raw).hexdigest(), default, rules)


def _rule(path: Path, index: int, raw: Any) -> Rule:
    where = f"{path}: [[rules]] entry {index}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: not a table")
    unknown = set(raw) - _CONDITIONS - _OUTPUTS - {"name"}
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}")
    conditions = {k: v for k, v in raw.items() if k in _CONDITIONS}
    outputs = {k: v for k, v in raw.items() if k in _OUTPUTS}
    for key, value in conditions.items():
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{where}: {key} must be a list of non-empty strings")
    if not outputs:
        raise ConfigError(f"{where}: sets nothing (give decision_hint and/or category)")
    if outputs.get("decision_hint", "POSITIVE") not in DECISION_HINTS:
        raise ConfigError(f"{where}: decision_hint must be one of {list(DECISION_HINTS)}")
    if not _CATEGORY.fullmatch(outputs.get("category", "news")):
        raise ConfigError(f"{where}: category must be lower-case letters, digits and _")
    return Rule(str(raw.get("name", f"rule {index}")), _compile(conditions), outputs)


def _compile(conditions: dict[str, list[str]]) -> dict[str, Any]:
    compiled: dict[str, Any] = dict(conditions)
    for key in ("keywords_any", "keywords_none"):
        if key in conditions:
            words = "|".join(re.escape(w) for w in conditions[key])
            compiled[key] = re.compile(rf"(?<!\w)(?:{words})(?!\w)", re.I)
    return compiled


_CHECKS = {
    "vendor": lambda pats, f: any(fnmatchcase(f["vendor"], p) for p in pats),
    "announce_type": lambda types, f: f["announce_type"] in types,
    "change": lambda changes, f: f["change"] in changes,
    "keywords_any": lambda rx, f: rx.search(f["text"]) is not None,
    "keywords_none": lambda rx, f: rx.search(f["text"]) is None,
}
