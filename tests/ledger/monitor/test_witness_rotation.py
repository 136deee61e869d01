"""The witness follows the signed key rotations of the logs it witnesses, as `crovia monitor`
does: `crovia witness serve --log OLD_VKEY --rotations SOURCE` cosigns the log's checkpoints
after `crovia rotate-key` (before, a publish after the rotation was refused 403 and the operator
had to swap `--log` by hand), and refuses a checkpoint the retired key signs past its era.
All on 127.0.0.1: a real witness process, real publishes."""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from crovia_spider.cli import main
from ledger.exceptions import RotationInvalid
from ledger.keys import generate_signing_key
from ledger.monitor import DirectorySource, Witness
from ledger.tlog.cosignature import CosignatureSigner
from ledger.tlog.note import Ed25519Verifier
from ledger.tlog.witness import format_request
from tests.ledger.monitor.test_witness_service import WitnessProcess, running_witness
from tests.ledger.rotation_site import Site, new_site


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return new_site(tmp_path)


@pytest.fixture
def witness(site: Site, tmp_path: Path) -> Iterator[WitnessProcess]:
    args = ["--log", site.vkey(site.k1), "--rotations", str(site.pub)]
    with running_witness(tmp_path, *args) as process:
        yield process


def publish(ledger_dir: Path, pub: Path, *witnesses: str) -> None:
    flags = [f"--witness={url}" for url in witnesses]
    assert main(["publish", str(pub), "--ledger-dir", str(ledger_dir), *flags]) == 0


def test_the_witness_follows_a_rotation_and_refuses_the_retired_key(
    site: Site, witness: WitnessProcess, tmp_path: Path
) -> None:
    site.old = site.grow(site.k1, 0, 3)
    publish(site.ledger_dir, site.pub, witness.url)
    assert witness.latest_size(site.origin) == 3
    thief = tmp_path / "thief"
    shutil.copytree(site.ledger_dir, thief)  # a copy from before the hand-over, with K1

    rotate = ["rotate-key", "--new-key", str(site.k2_file), "--key", str(site.k1_file)]
    assert main([*rotate, "--ledger-dir", str(site.ledger_dir)]) == 0
    site.new = site.grow(site.k2, 3, 2)
    publish(site.ledger_dir, site.pub, witness.url)
    assert witness.latest_size(site.origin) == 5  # cosigned under K2, followed from K1
    assert "witness.test/w1" in (site.pub / "checkpoint").read_text()

    keys = (site.k1, site.k2, site.k1_file, site.k2_file)
    stolen = Site(thief, tmp_path / "thief-pub", *keys, [], [], {}, {})
    stolen.grow(site.k1, 3, 3)  # K1, retired at 3 leaves, signs a checkpoint of 6
    publish(thief, stolen.pub)
    body = format_request(5, [], (stolen.pub / "checkpoint").read_bytes())
    request = urllib.request.Request(witness.url + "add-checkpoint", data=body, method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    assert "era does not hold size 6" in refused.value.read().decode()
    refused.value.close()
    assert witness.latest_size(site.origin) == 5


def test_a_rotations_source_that_no_pinned_key_begins_is_refused_at_start(
    site: Site, tmp_path: Path
) -> None:
    site.grow(site.k1, 0, 1)
    rotate = ["rotate-key", "--new-key", str(site.k2_file), "--key", str(site.k1_file)]
    assert main([*rotate, "--ledger-dir", str(site.ledger_dir)]) == 0
    publish(site.ledger_dir, site.pub)
    stranger = generate_signing_key(tmp_path / "stranger.key")
    logs = {site.origin: [Ed25519Verifier(site.origin, bytes(stranger.verify_key))]}
    signer = CosignatureSigner("witness.test/w1", generate_signing_key(tmp_path / "w.key"))
    source = DirectorySource(site.pub)
    read = [lambda: source.get("rotations.json", 1 << 20)]
    with pytest.raises(RotationInvalid, match="none of its keys is the pinned key"):
        Witness(tmp_path / "state", signer, logs, rotations=read)
    Witness(tmp_path / "state", signer, logs).close()  # the refused one let go of its state lock
