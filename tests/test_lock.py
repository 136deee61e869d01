"""Pinned installs (issue 43, obs 12): `make install` installs requirements.lock, every package at
one version with the hashes of its files, and nothing else; these tests fail (in `make test` and
`make check`) when pyproject.toml and the lock disagree, so a change of dependencies cannot land
without `make lock`. What our code imports is declared in pyproject.toml, not left to come with
something else: jusText asks lxml for an `html_clean` extra that lxml 6.2 spells `html-clean`, and
pip 23 (Debian's) then installed no lxml_html_clean, so `import trafilatura` failed.

Everything here is read from disk: the lock, pyproject.toml, the Makefile and the metadata of the
installed distributions. Nothing is fetched.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
PYWB_LOCK = ROOT / "requirements-pywb.lock"
FIRST_PARTY = ("crovia_spider", "pipelines", "ledger")
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Pin:
    name: NormalizedName
    version: str
    marker: Marker | None
    hashes: int

    def applies_here(self) -> bool:
        return self.marker is None or self.marker.evaluate()


def read_lock(text: str) -> dict[NormalizedName, Pin]:
    """The pins of a hashed requirements file; AssertionError names a line that is not a pin with
    hashes (an unpinned or unhashed requirement, an option, a URL, an editable)."""
    pins: dict[NormalizedName, Pin] = {}
    for line in text.replace("\\\n", " ").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        requirement_text, _, options = line.partition(" --")
        options = "--" + options if options else ""
        hashes = HASH.findall(options)
        assert hashes and HASH.sub("", options).strip() == "", f"not a hashed pin: {line[:120]}"
        requirement = Requirement(requirement_text)
        specifiers = list(requirement.specifier)
        assert (
            requirement.url is None
            and not requirement.extras
            and len(specifiers) == 1
            and specifiers[0].operator == "=="
            and "*" not in specifiers[0].version
        ), f"not pinned to one version: {requirement_text}"
        name = canonicalize_name(requirement.name)
        assert name not in pins, f"pinned twice: {name}"
        pins[name] = Pin(name, specifiers[0].version, requirement.marker, len(hashes))
    return pins


def installed(paths: list[str] | None = None) -> dict[NormalizedName, md.Distribution]:
    found: dict[NormalizedName, md.Distribution] = {}
    for dist in md.distributions(path=paths if paths is not None else sys.path):
        found.setdefault(canonicalize_name(dist.metadata["Name"]), dist)
    return found


def roots(pyproject: dict) -> list[Requirement]:
    """What the lock must satisfy: the project's dependencies, every extra (the Makefile installs
    `[test]`) and the build backend (`make install` builds the editable install without isolation,
    so with the setuptools the lock pins)."""
    project = pyproject["project"]
    texts = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        texts += extra
    texts += pyproject["build-system"]["requires"]
    own = canonicalize_name(project["name"])
    return [r for r in map(Requirement, texts) if canonicalize_name(r.name) != own]


def requirements_of(dist: md.Distribution, extras: frozenset[str]) -> list[Requirement]:
    """The dependencies `dist` declares for this interpreter and platform with `extras` asked
    for; extra names compared as PEP 685 normalises them (`html_clean` is `html-clean`)."""
    wanted = {""} | {canonicalize_name(e) for e in extras}
    needed = []
    for text in dist.requires or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": e}) for e in wanted):
            needed.append(requirement)
    return needed


def disagreements(
    pyproject: dict, pins: dict[NormalizedName, Pin], dists: dict[NormalizedName, md.Distribution]
) -> list[str]:
    """Each way the lock does not answer pyproject.toml here: a requirement (direct, or of a
    locked package, extras included) with no pin or a pin outside its bounds, and a pin that
    nothing requires any more. The dependencies of locked packages are read from the installed
    distributions, which `make install` put there from the lock."""
    problems: list[str] = []
    reached: set[NormalizedName] = set()
    seen: set[tuple[NormalizedName, frozenset[str]]] = set()
    here = [r for r in roots(pyproject) if r.marker is None or r.marker.evaluate()]
    todo = [(r, "pyproject.toml") for r in here]
    while todo:
        requirement, by = todo.pop()
        name = canonicalize_name(requirement.name)
        pin = pins.get(name)
        if pin is None:
            problems.append(f"{by} requires {requirement}: requirements.lock has no {name}")
            continue
        if not requirement.specifier.contains(pin.version, prereleases=True):
            problems.append(f"{by} requires {requirement}: requirements.lock pins {pin.version}")
        reached.add(name)
        extras = frozenset(requirement.extras)
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        dist = dists.get(name)
        if dist is None or dist.version != pin.version:
            continue  # test_the_venv_is_the_lock says so; its own dependencies cannot be read
        todo += [(r, f"{name} {pin.version}") for r in requirements_of(dist, extras)]
    stale = sorted(n for n, pin in pins.items() if pin.applies_here() and n not in reached)
    problems += [f"requirements.lock pins {n}, which nothing requires any more" for n in stale]
    return problems


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_line_of_the_locks_is_a_version_with_the_hashes_of_its_files():
    for lock in (LOCK, PYWB_LOCK):
        pins = read_lock(lock.read_text(encoding="utf-8"))
        assert len(pins) > 10, lock
        # uv writes every file of the release (wheels for each platform, the sdist): pip takes
        # the one that fits this machine and checks it against these.
        assert sum(p.hashes > 1 for p in pins.values()) > len(pins) // 2, lock


def test_pyproject_and_the_lock_agree():
    problems = disagreements(_pyproject(), read_lock(LOCK.read_text(encoding="utf-8")), installed())
    assert problems == [], "\n".join([*problems, "run `make lock`, then `make install`"])


def test_the_check_sees_each_way_they_can_disagree():
    """The check above is not vacuous: a dependency added to pyproject.toml without `make lock`, a
    bound the pin falls outside, a pin left behind, a transitive need (an extra) not locked."""
    pyproject, pins, dists = _pyproject(), read_lock(LOCK.read_text(encoding="utf-8")), installed()
    assert disagreements(pyproject, pins, dists) == []

    added = {**pyproject, "project": {**pyproject["project"]}}
    added["project"]["dependencies"] = [*pyproject["project"]["dependencies"], "leftpad>=1"]
    assert disagreements(added, pins, dists) == [
        "pyproject.toml requires leftpad>=1: requirements.lock has no leftpad"
    ]

    raised = {**pyproject, "project": {**pyproject["project"]}}
    raised["project"]["dependencies"] = [
        "lxml>=99" if d.startswith("lxml>") else d for d in pyproject["project"]["dependencies"]
    ]
    assert disagreements(raised, pins, dists) == [
        f"pyproject.toml requires lxml>=99: requirements.lock pins {pins['lxml'].version}"
    ]

    left = {**pins, "leftpad": Pin(canonicalize_name("leftpad"), "1.0", None, 2)}
    assert disagreements(pyproject, left, dists) == [
        "requirements.lock pins leftpad, which nothing requires any more"
    ]

    # jusText asks for lxml[html_clean]; were lxml_html_clean not declared by us, the lock would
    # still have to hold it, and the check finds it through the extra, however it is spelt.
    undeclared = {**pyproject, "project": {**pyproject["project"]}}
    undeclared["project"]["dependencies"] = [
        d for d in pyproject["project"]["dependencies"] if not d.startswith("lxml_html_clean")
    ]
    assert disagreements(undeclared, pins, dists) == []
    without = {n: p for n, p in pins.items() if n != "lxml-html-clean"}
    assert disagreements(undeclared, without, dists) == [
        f'lxml {pins["lxml"].version} requires lxml_html_clean; extra == "html-clean":'
        " requirements.lock has no lxml-html-clean"
    ]


def test_the_venv_is_the_lock():
    """`make install` installed the lock: every pin that applies to this interpreter and platform
    is installed at its version (a venv from `pip install -e .` fails this)."""
    dists = installed()
    pins = read_lock(LOCK.read_text(encoding="utf-8"))
    wrong = {
        n: (p.version, dists[n].version if n in dists else None)
        for n, p in pins.items()
        if p.applies_here() and (n not in dists or dists[n].version != p.version)
    }
    assert wrong == {}, f"(locked, installed): {wrong}; run `make install`"


def test_the_pywb_venv_is_its_lock():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    wanted = Requirement(re.search(r"^PYWB_REQUIREMENT\s*:=\s*(.+)$", makefile, re.M)[1].strip())
    pins = read_lock(PYWB_LOCK.read_text(encoding="utf-8"))
    assert wanted.specifier.contains(pins["pywb"].version), "run `make lock`"
    site = sorted((ROOT / ".venv-pywb" / "lib").glob("python3*/site-packages"))
    if not site:
        pytest.skip("no .venv-pywb (make test builds it: `make pywb`)")
    dists = installed([str(site[0])])
    wrong = {
        n: (p.version, dists[n].version if n in dists else None)
        for n, p in pins.items()
        if p.applies_here() and (n not in dists or dists[n].version != p.version)
    }
    assert wrong == {}, f"(locked, installed): {wrong}; run `rm -r .venv-pywb && make pywb`"


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level module -> files of crovia_spider, pipelines and ledger importing it."""
    found: dict[str, set[str]] = {}
    for package in FIRST_PARTY:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in (*sys.stdlib_module_names, *FIRST_PARTY, "__future__"):
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_library_our_code_imports_is_declared_in_pyproject():
    """Not left to come with another package: what comes along can change or go in a release of
    that package (lxml.html.clean left lxml; lxml's extra changed its spelling)."""
    dependencies = _pyproject()["project"]["dependencies"]
    declared = {canonicalize_name(Requirement(d).name) for d in dependencies}
    providers = md.packages_distributions()
    imports = _third_party_imports()
    assert {"lxml", "twisted", "trafilatura", "nacl"} <= imports.keys()
    undeclared = {
        module: sorted(files)[0]
        for module, files in imports.items()
        if not {canonicalize_name(d) for d in providers.get(module, [module])} & declared
    }
    assert undeclared == {}, "imported but not in [project] dependencies (module: a file)"
