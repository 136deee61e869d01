"""Classification: deterministic rules from config/classify.toml, validated on load."""

from __future__ import annotations

import hashlib

import pytest

from crovia_spider.exceptions import ConfigError
from pipelines.classify import DECISION_HINTS, load_ruleset
from tests.crawl import PROJECT_ROOT

RULES = PROJECT_ROOT / "config" / "classify.toml"


def facts(**changes):
    base = {"vendor": "openai", "announce_type": "", "change": "new", "text": "A new model"}
    return {**base, **changes}


@pytest.fixture(scope="module")
def ruleset():
    return load_ruleset(RULES)


def test_ruleset_identity(ruleset):
    assert ruleset.version
    assert ruleset.sha256 == hashlib.sha256(RULES.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("changes", "hint"),
    [
        ({}, "POSITIVE"),
        ({"vendor": "arxiv_cs_ai", "announce_type": "new"}, "POSITIVE"),
        ({"vendor": "arxiv_cs_ai", "announce_type": "replace"}, "REVISION"),
        ({"vendor": "arxiv_cs_ai", "announce_type": "replace-cross"}, "REVISION"),
        ({"vendor": "arxiv_cs_ai", "announce_type": "cross"}, "CROSSLIST"),
        ({"change": "updated"}, "REVISION"),
        ({"vendor": "nvidia_newsroom", "text": "NVIDIA announces quarterly dividend"}, "NEUTRAL"),
        ({"vendor": "nvidia_newsroom", "text": "New GPUs for generative AI"}, "POSITIVE"),
        ({"vendor": "nvidia_newsroom", "text": "Faster inference."}, "POSITIVE"),
    ],
)
def test_decision_hints(ruleset, changes, hint):
    assert ruleset.classify(facts(**changes))["decision_hint"] == hint
    assert hint in DECISION_HINTS


def test_category_rule(ruleset):
    assert ruleset.classify(facts(vendor="mistral_client_python_releases"))["category"] == "release"
    assert "category" not in ruleset.classify(facts())


def test_first_matching_rule_wins_per_output(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text(
        'version = "t1"\n'
        '[[rules]]\nvendor = ["a*"]\ndecision_hint = "NEUTRAL"\n'
        '[[rules]]\nvendor = ["ab"]\ndecision_hint = "REVISION"\ncategory = "lab"\n'
    )
    result = load_ruleset(path).classify(facts(vendor="ab"))
    assert result == {"decision_hint": "NEUTRAL", "category": "lab"}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('[[rules]]\ndecision_hint = "POSITIVE"\n', "`version`"),
        ('version = "1"\ndefault_decision_hint = "YES"\n', "default_decision_hint 'YES'"),
        ('version = "1"\n[[rules]]\nvendor = ["a"]\n', "entry 1: sets nothing"),
        (
            'version = "1"\n[[rules]]\nvendor = "a"\ndecision_hint = "NEUTRAL"\n',
            "list of non-empty",
        ),
        ('version = "1"\n[[rules]]\nvendr = ["a"]\ndecision_hint = "NEUTRAL"\n', "unknown key"),
        ('version = "1"\n[[rules]]\nvendor = ["a"]\ncategory = "Big News"\n', "category must be"),
        ('version = "1"\n[[rules]\n', "cannot read"),
    ],
)
def test_invalid_rules(tmp_path, text, reason):
    path = tmp_path / "rules.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=reason.replace("[", r"\[")) as raised:
        load_ruleset(path)
    assert str(raised.value).startswith(str(path))
