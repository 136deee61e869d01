"""The packages `ledger`, `ledger.keys` and `ledger.store` export their names on first use
(`ledger.exports_on_first_use`): every exported name is the object its module defines, an unknown
name is an AttributeError, and an audit loads none of the store's modules it does not need."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.crawl import PROJECT_ROOT

PACKAGES = ("ledger", "ledger.keys", "ledger.store")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_is_what_its_module_defines(package: str) -> None:
    module = importlib.import_module(package)
    exports = module._EXPORTS if package != "ledger" else module._API
    assert module.__all__ == sorted(exports)
    for name, where in exports.items():
        room, _, defined = where.partition(".")
        expected = getattr(importlib.import_module(f"{package}.{room}"), defined or name)
        assert getattr(module, name) is expected, name


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unknown_name_is_an_attribute_error_naming_the_package(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018


def test_item_timeline_is_the_function_not_its_module() -> None:
    from ledger.store import item_timeline
    from ledger.store.timeline import timeline

    assert item_timeline is timeline and callable(item_timeline)


def test_an_audit_loads_neither_the_writer_nor_find_nor_the_timeline(filled: Path, key) -> None:
    """`crovia audit` starts without the store's writer, `find` and timeline modules (a few
    hundredths of a second of serial start-up each audit), and does not load them while it runs."""
    pin = bytes(key.verify_key).hex()
    code = (
        "import sys\n"
        "from crovia_spider.cli import main\n"
        f"status = main(['audit', '--ledger-dir', {str(filled)!r}, '--pubkey', {pin!r}])\n"
        "print(status, sorted(m for m in sys.modules if m.startswith('ledger.store.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    status, _, loaded = done.stdout.strip().splitlines()[-1].partition(" ")
    assert status == "0", done.stdout + done.stderr
    for unneeded in ("ledger.store.ledger", "ledger.store.find", "ledger.store.timeline"):
        assert f"'{unneeded}'" not in loaded, loaded
