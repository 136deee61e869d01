"""`crovia keygen`, `crovia pubkey` and `crovia rotate-key`: the ledger's signing keys.

One key signs a ledger at a time; `rotate-key` hands over to a new one on purpose (docs/ledger.md,
"One key per ledger"). Key files are PKCS#8 PEM; a raw key file of old loads only for a ledger
it signs (with a notice), and `keygen --convert` rewrites it in place (docs/ledger.md, "Key
files"). Output files go through crovia_spider/cli/output.py: nothing is written over
an existing file without --force, and nothing over a key file ever. The ledger (PyNaCl) is imported
inside handlers; key errors are LedgerError (exit 2).
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import (
    json_flag,
    ledger_dir,
    notice,
    print_json,
    require_ledger,
)
from crovia_spider.cli.output import check_output, force_flag, write_output
from crovia_spider.options import env_default, path_default, setting


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add keygen, pubkey and rotate-key."""
    _add_keygen(subparsers)
    _add_pubkey(subparsers)
    _add_rotate_key(subparsers)


def _key_file(parser: argparse.ArgumentParser, *, flag: str = "--key", what: str = "") -> None:
    parser.add_argument(
        flag,
        type=Path,
        default=path_default("CROVIA_SIGNING_KEY_FILE"),
        help=f"{what}signing key file (default: $CROVIA_SIGNING_KEY_FILE or %(default)s)",
    )


def _trust_root_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust-root", type=Path, help="also write the public trust root JSON to this file"
    )
    force_flag(parser)


def _add_keygen(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "keygen",
        help="create an ed25519 signing key (PKCS#8 PEM, mode 0600), or convert a raw one",
        description="Create a new signing key file (PKCS#8 PEM, as OpenSSL reads it); never"
        " overwrites any file, --force or not (--force applies to --trust-root only). Prints the"
        " public key. With --convert FILE instead of --out, rewrite a raw key file of old (64 hex"
        " characters) as PKCS#8 in place, if it is a key --ledger-dir is signed by (or whose"
        " public key is --public-key): the same key, mode 0600, no ledger byte changed.",
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", type=Path, help="where to write the new key file")
    target.add_argument(
        "--convert", type=Path, metavar="FILE", help="a raw key file to rewrite as PKCS#8"
    )
    ledger_dir(parser)  # for --convert: the ledger the raw key signs
    parser.add_argument(
        "--public-key",
        metavar="HEX",
        help="for --convert of a key no ledger names (a witness key): its public key, 64 hex",
    )
    _trust_root_flag(parser)
    json_flag(parser)
    parser.set_defaults(handler=cmd_keygen)


def _add_pubkey(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "pubkey",
        help="print the public key and key_id of a signing key",
        description="Print the public key, key_id and note verifier key of an existing key file,"
        " and write its trust root (the format `crovia keygen --trust-root` writes) for others"
        " to pin, with the signed rotations of the ledger that lead to the key and the TSA roots"
        " of $CROVIA_TSA_ROOTS. The note key is named after the log origin of the ledger"
        " (--ledger-dir, else $CROVIA_LEDGER_DIR), which is printed with where it came from; a"
        " key that is not in that ledger's chain of keys is refused (exit 2). --no-ledger: the"
        " key alone (a witness key, a key before `crovia rotate-key`).",
    )
    _key_file(parser)
    _trust_root_flag(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--ledger-dir", type=Path, default=None, metavar="DIR",
        help="the ledger the key signs: its origin, and the rotations that lead to the key"
        " (default: $CROVIA_LEDGER_DIR or data/ledger)",
    )  # fmt: skip
    which.add_argument(
        "--no-ledger", action="store_true",
        help="the key alone: its own default origin (or $CROVIA_LOG_ORIGIN), no rotations",
    )  # fmt: skip
    json_flag(parser)
    parser.set_defaults(handler=cmd_pubkey)


def _add_rotate_key(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rotate-key",
        help="hand the ledger over to a new signing key, on purpose",
        description="Seal with the current key, then append to rotations.jsonl a record signed by"
        " both the current and the new key; from then on only the new key may write. Receipts and"
        " `crovia audit` follow the chain, so either key can be pinned.",
    )
    parser.add_argument(
        "--new-key", type=Path, required=True, help="the new key file (from `crovia keygen`)"
    )
    ledger_dir(parser)
    _key_file(parser, what="the current ")
    _trust_root_flag(parser)  # the new key's, with the whole chain and the log's origin
    parser.add_argument(
        "--lock-timeout",
        type=float,
        default=setting("CROVIA_LOCK_TIMEOUT"),
        help="seconds to wait for the writer lock (default: %(default)s)",
    )
    json_flag(parser)
    parser.set_defaults(handler=cmd_rotate_key)


def cmd_keygen(args: argparse.Namespace) -> int:
    from ledger.keys import generate_signing_key

    if args.convert is not None:
        return _convert(args)
    if args.trust_root is not None:  # refuse before the key exists: nothing half done
        check_output(args.trust_root, force=args.force)
    key = generate_signing_key(args.out)
    _write_trust_root(args, key, [])
    if not args.json:
        print(
            f"signing key written to {args.out} (mode 0600):"
            " keep it secret, back it up, never share it"
        )
    return _show(args, key, key_file=args.out)


def _convert(args: argparse.Namespace) -> int:
    from ledger.exceptions import KeyFileError
    from ledger.keys import KeyContext, convert_key_file, load_signing_key, parse_pin
    from ledger.store import ledger_key_context

    if args.trust_root is not None:
        raise KeyFileError("--convert writes no trust root: write it with `crovia pubkey`")
    if args.public_key is None:
        context = ledger_key_context(args.ledger_dir)
    else:
        expected = bytes.fromhex(parse_pin(args.public_key, None)[0])
        context = KeyContext("--public-key", lambda public: public == expected)
    done = convert_key_file(args.convert, context=context)
    key = load_signing_key(args.convert)
    if not args.json:
        print(
            f"{args.convert} converted to PKCS#8 PEM in place (the same key, mode 0600)"
            if done.converted
            else f"{args.convert} is already a PKCS#8 key file: nothing to convert"
        )
    return _show(args, key, key_file=args.convert)


def cmd_pubkey(args: argparse.Namespace) -> int:
    """The key's identity under the origin of the ledger it signs (said, with its source);
    LedgerError (exit 2) for a key that is not in that ledger's chain."""
    from ledger.keys import load_signing_key
    from ledger.store import ledger_key_context, load_ledger_key

    directory, named_by = _pubkey_ledger(args)
    if directory is None:
        key = load_signing_key(args.key, notice=notice)  # a raw key of old: no ledger vouches
        origin, source = _own_origin(bytes(key.verify_key), " (no ledger)")
        rotations: list[dict] = []
    else:
        key = load_ledger_key(args.key, directory, notice=notice)
        public = bytes(key.verify_key)
        context = ledger_key_context(directory)
        if context.new:  # absent or empty: no key signs it yet
            origin, source = _own_origin(public, f": no ledger at {directory} yet")
            rotations = []
        elif not context.signs(public):
            raise _not_in_chain(public, directory, named_by)
        else:
            rotations = _rotations_to(directory, key)
            origin, source = _log_origin(directory, rotations, public)
    _write_trust_root(args, key, rotations, origin)
    shown = {"origin": origin, "origin_from": source, "ledger_dir": directory}
    return _show(args, key, key_file=args.key, origin=origin, extra=shown)


def _pubkey_ledger(args: argparse.Namespace) -> tuple[Path | None, str]:
    """The ledger `crovia pubkey` reads (None with --no-ledger) and what named it."""
    import os

    if args.no_ledger:
        return None, ""
    if args.ledger_dir is not None:
        return args.ledger_dir, "--ledger-dir"
    named = "CROVIA_LEDGER_DIR" if "CROVIA_LEDGER_DIR" in os.environ else "the default"
    return path_default("CROVIA_LEDGER_DIR"), named


def _not_in_chain(public: bytes, directory: Path, named_by: str) -> Exception:
    from ledger.exceptions import LedgerError

    return LedgerError(
        f"key_id {_key_id(public.hex())} is not a key of the ledger at {directory} ({named_by}):"
        " no seal, rotation or leaf of it names the key, so a note verifier key under its log's"
        " origin would match neither log. Give the ledger the key signs with --ledger-dir, or"
        " --no-ledger for a key of no ledger (a witness key, a key before `crovia rotate-key`)"
    )


def _own_origin(public: bytes, why: str) -> tuple[str, str]:
    """A key's origin without a ledger: $CROVIA_LOG_ORIGIN, else its own default."""
    from ledger.store import log_origin

    configured = env_default("CROVIA_LOG_ORIGIN") or None
    source = "CROVIA_LOG_ORIGIN" if configured else f"the key's own default{why}"
    return log_origin(configured, public), source


def _log_origin(ledger_dir: Path, rotations: list[dict], public: bytes) -> tuple[str, str]:
    """The name of the log's note key and where it came from: $CROVIA_LOG_ORIGIN, else the
    origin of the checkpoints already in `ledger_dir`'s tlog/, else the default of the ledger's
    first key (a rotation keeps the log's name: its checkpoints go on under it, signed by the
    new key)."""
    from ledger.store import CheckpointStore, log_origin

    configured = env_default("CROVIA_LOG_ORIGIN") or None
    stored = None
    if configured is None and ledger_dir.is_dir():
        try:
            stored = CheckpointStore(ledger_dir).origin()
        except (OSError, ValueError, LookupError, TypeError):  # unreadable: fall back, as publish
            stored = None
    first = bytes.fromhex(rotations[0]["old_public_key_hex"]) if rotations else public
    if configured:
        source = "CROVIA_LOG_ORIGIN"
    elif stored:
        source = f"the checkpoints of {ledger_dir}"
    else:
        source = f"the default of the first key of {ledger_dir}"
    return log_origin(configured or stored, first), source


def _rotations_to(ledger_dir: Path, key: object) -> list[dict]:
    """The records of `ledger_dir`'s rotations.jsonl from its first key to `key` ([] when the
    ledger has no rotation or `key` is its first key). LedgerError (exit 2) when `key` is not a
    key of that chain."""
    from ledger import jsonl
    from ledger.exceptions import LedgerError
    from ledger.keys import known_chain, parse_rotations

    path = ledger_dir / "rotations.jsonl"
    lines = b",".join(line for _, line in jsonl.iter_lines(path))
    records = parse_rotations(b"[" + lines + b"]", str(path))
    public = bytes(key.verify_key).hex()
    chain = known_chain(records, None, "rotations.jsonl line")
    if chain is None:
        return []
    if public not in chain.keys:
        raise LedgerError(
            f"key_id {_key_id(public)} is none of the keys of {path}: its trust root would not"
            " lead to them (give the ledger's --ledger-dir)"
        )
    return chain.records_to(public)


def _key_id(public: str) -> str:
    from ledger.keys import key_id

    return key_id(bytes.fromhex(public))


def cmd_rotate_key(args: argparse.Namespace) -> int:
    from ledger.store import Ledger, load_ledger_key

    require_ledger(args.ledger_dir)  # a writer would create one: not what a typo should do
    if args.trust_root is not None:  # refuse before the hand-over: nothing half done
        check_output(args.trust_root, force=args.force)
    old = load_ledger_key(args.key, args.ledger_dir, notice=notice)
    new = load_ledger_key(args.new_key, args.ledger_dir, notice=notice)  # raw: refused, not its key
    with Ledger.open(args.ledger_dir, signing_key=old, lock_timeout=args.lock_timeout) as ledger:
        record = ledger.rotate_key(new)
    rotations = _rotations_to(args.ledger_dir, new)
    origin, _source = _log_origin(args.ledger_dir, rotations, bytes(new.verify_key))
    _write_trust_root(args, new, rotations, origin)
    if args.json:
        print_json(
            {
                "rotation": record,
                "new_key_file": str(args.new_key),
                "trust_root_file": None if args.trust_root is None else str(args.trust_root),
            }
        )
        return EXIT_OK
    print(
        f"rotated {args.ledger_dir} from key_id {record['old_key_id']} to key_id"
        f" {record['new_key_id']} at leaf {record['leaf_count']} (the leaves before are sealed by"
        " the old key)"
    )
    if args.trust_root is not None:
        print(
            f"trust root (the new key, its signed rotations, the log's origin): {args.trust_root}"
        )
    where = ["--ledger-dir", str(args.ledger_dir), "--trust-root", "OUT.json"]
    command = shlex.join(["crovia", "pubkey", "--key", str(args.new_key), *where])
    print(
        f"from now on sign with {args.new_key}: set CROVIA_SIGNING_KEY_FILE={args.new_key} (or"
        f" --key); publish the new trust root, written again at any time by: {command}"
    )
    return EXIT_OK


def _write_trust_root(
    args: argparse.Namespace, key: object, rotations: list[dict], origin: str | None = None
) -> None:
    from crovia_spider.config.trust_roots import trust_root as build
    from crovia_spider.config.trust_roots import trust_root_text

    if args.trust_root is not None:
        text = trust_root_text(build(bytes(key.verify_key), origin, rotations=rotations))
        write_output(args.trust_root, text.encode("utf-8"), force=args.force)


def _identity(public: bytes, origin: str | None = None) -> dict[str, str]:
    """What pubkey and keygen print: the key, its key_id and its note verifier key (under the
    log's `origin`; by default $CROVIA_LOG_ORIGIN or the key's own default)."""
    from ledger.keys import key_id
    from ledger.store import log_origin, note_verifier_key

    origin = origin or log_origin(env_default("CROVIA_LOG_ORIGIN") or None, public)
    return {
        "key_id": key_id(public),
        "note_verifier_key": note_verifier_key(public, origin),
        "public_key_hex": public.hex(),
        "signature_algorithm": "ed25519",
    }


def _show(
    args: argparse.Namespace,
    key: object,
    *,
    key_file: Path,
    origin: str | None = None,
    extra: dict[str, object] | None = None,
) -> int:
    """Print the key's identity; `extra` (pubkey's origin, its source, the ledger) too."""
    root = _identity(bytes(key.verify_key), origin)
    written = None if args.trust_root is None else str(args.trust_root)
    extra = extra or {}
    if args.json:
        ledger = extra.get("ledger_dir")
        shown = {**extra, "ledger_dir": None if ledger is None else str(ledger)} if extra else {}
        print_json({**root, **shown, "key_file": str(key_file), "trust_root_file": written})
        return EXIT_OK
    print(f"public key: {root['public_key_hex']}")
    print(f"key_id:     {root['key_id']}")
    print(f"note verifier key: {root['note_verifier_key']}")
    if extra:  # after the three lines scripts read by position
        print(f"log origin: {extra['origin']} ({extra['origin_from']})")
    if written is not None:
        print(f"trust root: {written}")
    return EXIT_OK
