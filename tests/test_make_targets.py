"""`make check` and `make test` (issue 17, obs 10): the quick target leaves out every crawl,
command and browser test, and keeps the rest; in `make test` a skipped test fails, so CI cannot
pass with a tool missing.
"""

from __future__ import annotations

import re
import subprocess
import sys

from tests.scratch import PROJECT_ROOT, bare_env

# Files that crawl, run commands or drive Chromium: never in `make check`.
SLOW_FILES = (
    "tests/web/",
    "tests/test_readme_commands.py",
    "tests/test_demo.py",
    "tests/spider/test_acceptance.py",
    "tests/schedule/test_end_to_end.py",
    "tests/schedule/test_metrics.py",
    "tests/ledger/stamps/test_rfc3161_cli.py",
)


def test_check_selects_the_fast_tests_only():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow",
         "-p", "no:cacheprovider"],
        cwd=PROJECT_ROOT, env=bare_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    selected = [line for line in proc.stdout.splitlines() if "::" in line]
    assert [n for n in selected if n.startswith(SLOW_FILES)] == []
    assert len(selected) > 1000, "the fast tests are most of the suite"


def test_a_skip_fails_when_make_test_forbids_skips(tmp_path):
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\ndef test_needs_a_tool():\n    pytest.skip('no such tool')\n"
    )
    argv = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
            "-q", str(tmp_path / "test_skips.py")]  # fmt: skip
    allowed = subprocess.run(
        argv, cwd=PROJECT_ROOT, env=bare_env(), capture_output=True, text=True, timeout=120
    )
    assert allowed.returncode == 0 and "1 skipped" in allowed.stdout, allowed.stdout
    forbidden = subprocess.run(
        argv, cwd=PROJECT_ROOT, env=bare_env(CROVIA_FORBID_SKIPS="1"), capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert forbidden.returncode == 1, forbidden.stdout
    assert "make test` forbids skips" in forbidden.stdout and "no such tool" in forbidden.stdout


def _rules(makefile: str) -> dict[str, tuple[list[str], list[str]]]:
    """target -> (prerequisites, recipe lines) of each explicit rule of `makefile`."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current: list[str] | None = None
    for line in makefile.splitlines():
        if line.startswith("\t") and current is not None:
            current.append(line)
            continue
        rule = re.match(r"^([^\s:=#][^:=]*):(?!=)(.*)$", line)
        if rule and not line.startswith(("export", ".PHONY")):
            current = []
            for target in rule[1].split():
                rules[target] = (rule[2].replace("|", " ").split(), current)
        elif not line.startswith("\t"):
            current = None
    return rules


def test_every_target_running_a_venv_program_installs_the_venv_first():
    """`make check` in a fresh clone must set itself up as `make test` does (issue 33, obs 10):
    a target whose recipe runs .venv/bin/... depends on the install stamp itself, not through
    another target that happens to."""
    rules = _rules((PROJECT_ROOT / "Makefile").read_text())
    assert {"test", "check", "lint", "fuzz", "bench", "crawl", "demo"} <= rules.keys()
    missing = [
        target
        for target, (prerequisites, recipe) in rules.items()
        if target not in ("$(STAMP)", "$(BIN)/python")
        and any("$(BIN)/" in line for line in recipe)
        and "$(STAMP)" not in prerequisites
    ]
    assert missing == []
