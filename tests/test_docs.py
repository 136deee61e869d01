"""The user docs hold (issue 17, obs 8): every scheduled job is documented with the time it
really fires, the cron examples cover every kind of job, no development leftovers, and
docs/design.md has a glossary of the terms the rest uses and a picture of the flow.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.scratch import PROJECT_ROOT

USER_DOCS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
SCHEDULE = tomllib.loads((PROJECT_ROOT / "config" / "schedule.toml").read_text())["jobs"]
GLOSSARY = [
    "axiom", "envelope", "leaf", "seal", "anchor", "checkpoint", "tile", "witness", "trust root",
    "note key",
]  # fmt: skip
# What a reader of the docs cannot act on: references to the issues the work came from, and bare
# "(12)"-style numbers (a section is "(section 12)"). `O(1)` and "(0)" are not matched.
LEFTOVERS = [
    r"\bissues? #?\d",
    r"issues? (?:was|were) silent",
    r"(?<![A-Za-z0-9_])\((?:[1-9]|1\d)\)",
    r"\bobs(?:ervation)? \d",
]


def text(path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: p.name)
def test_no_development_leftovers(doc):
    found = [
        f"{doc.name}:{n}: {line.strip()}"
        for n, line in enumerate(text(doc).splitlines(), 1)
        for pattern in LEFTOVERS
        if re.search(pattern, line, re.I)
    ]
    assert found == []


def test_operations_lists_every_default_job_with_its_real_time():
    operations = text(PROJECT_ROOT / "docs" / "operations.md")
    for job in SCHEDULE:
        row = f"| `{job['name']}`"
        (line,) = [x for x in operations.splitlines() if x.startswith(row)]
        assert f"`{job['cron']}` UTC" in line, line


def test_the_cron_examples_cover_every_kind_of_job_at_the_schedules_minute():
    """README's and operations.md's crontabs run what config/schedule.toml runs, at its times."""
    for doc in (PROJECT_ROOT / "README.md", PROJECT_ROOT / "docs" / "operations.md"):
        (block,) = re.findall(r"```crontab\n(.*?)```", text(doc), re.S)
        lines = [line.split() for line in block.splitlines() if "cd /srv/" in line]
        for job in SCHEDULE:
            if job.get("seal"):
                command = ".venv/bin/crovia seal"
            elif job.get("stamp"):
                command = " ".join([".venv/bin/crovia stamp", *job.get("args", [])])
            elif job.get("publish"):
                command = ".venv/bin/crovia publish"
            elif job.get("coverage"):
                command = ".venv/bin/crovia arxiv coverage --record"
            else:
                continue
            times = [x[:5] for x in lines if command in " ".join(x)]
            assert job["cron"].split() in times, (doc.name, job["name"], times)


def test_ledger_md_says_when_the_scheduler_publishes():
    (publish,) = [job for job in SCHEDULE if job.get("publish")]
    ledger = " ".join(text(PROJECT_ROOT / "docs" / "ledger.md").split())
    assert f"`{publish['cron']}`" in ledger
    assert "five minutes after" not in ledger


def test_design_has_a_glossary_and_a_picture_of_the_flow():
    design = text(PROJECT_ROOT / "docs" / "design.md")
    glossary = design.split("## Glossary\n")[1].split("\n## ")[0]
    defined = re.findall(r"^- \*\*(.+?)\*\*:", glossary, re.M)
    assert set(GLOSSARY) <= {term.lower() for term in defined}
    picture = design.split("## The flow in one picture\n")[1].split("\n## ")[0]
    (drawing,) = re.findall(r"```text\n(.*?)```", picture, re.S)
    for step in ("feeds.toml", "scrapy crawl", "pipelines", "envelope", "seal", "stamp",
                 "publish", "prove", "verify"):  # fmt: skip
        assert step in drawing, step


def test_stamps_md_has_a_local_recipe():
    stamps = text(PROJECT_ROOT / "docs" / "stamps.md")
    recipe = stamps.split("## Try it locally\n")[1].split("\n## ")[0]
    assert "make demo" in recipe and "--tsa-root data/demo/tsa/ca.pem" in recipe
