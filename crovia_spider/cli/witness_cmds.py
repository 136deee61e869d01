"""`crovia witness serve` and `crovia witness vkey`: a C2SP tlog-witness for other logs.

The witness cosigns a log's checkpoint only after checking the log's signature and the
consistency proof from the size it cosigned last (ledger/monitor/witness.py); Twisted carries the
HTTP (crovia_spider/services/witness.py) and is imported inside the handler. docs/ledger.md,
"Witness".
"""

from __future__ import annotations

import argparse
from pathlib import Path

from crovia_spider.cli import EXIT_OK

ROTATIONS_TIMEOUT = 10.0  # seconds one read of a log's rotations.json may take


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `witness serve` and `witness vkey`."""
    parser = subparsers.add_parser(
        "witness",
        help="run a transparency-log witness (C2SP tlog-witness)",
        description="A witness cosigns checkpoints of the logs it knows, each only when it is"
        " consistent with the last one it cosigned, so a log cannot show two histories.",
    )
    commands = parser.add_subparsers(dest="witness_command", metavar="ACTION", required=True)
    serve = commands.add_parser("serve", help="serve add-checkpoint over HTTP")
    _identity(serve)
    serve.add_argument(
        "--log",
        action="append",
        required=True,
        metavar="VKEY",
        help="a log to witness: its note verifier key (`crovia pubkey` prints it), whose name is"
        " the log's origin; ORIGIN=VKEY is accepted too. Repeat for several logs",
    )
    serve.add_argument(
        "--rotations",
        action="append",
        default=[],
        metavar="SOURCE",
        help="a witnessed log's published directory or http(s) URL: its signed rotations.json is"
        " read at start and before each checkpoint, so the witness follows the log's key"
        " rotations from its pinned key, holding each checkpoint to the key of its size's era (as"
        " `crovia monitor` does). Repeat for several logs",
    )
    serve.add_argument(
        "--state", type=Path, default=Path("data/witness"), help="state directory (%(default)s)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (%(default)s)")
    serve.add_argument("--port", type=int, default=8471, help="TCP port, 0: any (%(default)s)")
    serve.set_defaults(handler=cmd_serve)
    vkey = commands.add_parser("vkey", help="print the witness's cosignature verifier key")
    _identity(vkey)
    vkey.set_defaults(handler=cmd_vkey)


def _identity(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--key", type=Path, required=True, help="the witness's ed25519 key file (crovia keygen)"
    )
    parser.add_argument("--name", help="the witness's key name (default: crovia-witness/<key_id>)")


def cmd_serve(args: argparse.Namespace) -> int:
    from crovia_spider.services.witness import serve
    from ledger.monitor import Witness

    logs = parse_logs(args.log)
    sources = [_rotations_reader(spec) for spec in args.rotations]
    witness = Witness(args.state, _signer(args), logs, rotations=sources)
    return serve(witness, args.host, args.port)


def _rotations_reader(spec: str):
    """A function reading `spec`'s rotations.json afresh, within its own deadline each time."""
    from ledger.monitor import rotations_reader

    return rotations_reader(spec, ROTATIONS_TIMEOUT)


def cmd_vkey(args: argparse.Namespace) -> int:
    print(_signer(args).vkey)
    return EXIT_OK


def parse_logs(specs: list[str]) -> dict[str, list[object]]:
    """`--log` flags -> the verifiers of each origin. A flag is a note verifier key (its name is
    the log's origin, as C2SP checkpoints require), or `ORIGIN=VKEY` (the origin must be the
    key's name). Raises ConfigError for a bad one."""
    from crovia_spider.exceptions import ConfigError
    from ledger.exceptions import LedgerError
    from ledger.tlog.note import Ed25519Verifier

    logs: dict[str, list[object]] = {}
    for spec in specs:
        try:
            verifier = Ed25519Verifier.from_vkey(spec)
            origin = verifier.name
        except LedgerError:
            origin, equals, vkey = spec.partition("=")
            if not equals or not origin:
                raise ConfigError(f"--log {spec!r}: give the log's VKEY (or ORIGIN=VKEY)") from None
            try:
                verifier = Ed25519Verifier.from_vkey(vkey)
            except LedgerError as exc:
                raise ConfigError(f"--log {spec!r}: {exc}") from None
        if verifier.name != origin:
            raise ConfigError(f"--log {spec!r}: the key's name {verifier.name!r} is not the origin")
        logs.setdefault(origin, []).append(verifier)
    return logs


def _signer(args: argparse.Namespace) -> object:
    from ledger.keys import key_id, load_signing_key
    from ledger.tlog.cosignature import CosignatureSigner

    key = load_signing_key(args.key)
    name = args.name or f"crovia-witness/{key_id(bytes(key.verify_key))}"
    return CosignatureSigner(name, key)
