"""`crovia`: one command, subcommands grouped by module, one error handler.

Exit codes: 0 ok; 1 a check failed (verification, audit); 2 usage, configuration or I/O error.
Each module named in COMMANDS exposes `register(subparsers)`, adding the commands COMMANDS maps to
it; handlers take the parsed args and return an exit code. `crovia verify` must start fast (issue
19): a command line naming a known command imports only that command's module (the whole parser
is built for `crovia --help`, a misspelt command and options before the command), logging is set
up only for commands that log, and modules import their heavy dependencies (Scrapy, APScheduler,
the ledger) inside handlers. With `--json` on the command line, every outcome that is
not a success printed by the handler (a failed check, a usage or I/O error, even a bug) is one
JSON object on stdout: `{"ok": false, "exit_code", "error", "message"}`, plus `check`, `expected`
and `computed` for a failed check.

A closed pipe (`crovia find | head -1`) ends any command quietly, with its exit code so far (0 when
the handler had succeeded): the reader has what it wanted; there is no message and no traceback.
A misspelt command or choice gets "did you mean ...?", and so does a command's misspelt option,
with that command's usage (`crovia find: unknown option --vendr; did you mean --vendor?`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import typing

from crovia_spider import __version__
from crovia_spider.cli.ledger_args import print_json
from crovia_spider.exceptions import CroviaError

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2

# Each command and the module that registers it, in the order `crovia --help` lists them.
COMMANDS = {
    "keygen": "crovia_spider.cli.key_cmds",
    "pubkey": "crovia_spider.cli.key_cmds",
    "rotate-key": "crovia_spider.cli.key_cmds",
    "verify": "crovia_spider.cli.ledger_proof_cmds",
    "prove": "crovia_spider.cli.ledger_proof_cmds",
    "seal": "crovia_spider.cli.ledger_admin_cmds",
    "audit": "crovia_spider.cli.ledger_admin_cmds",
    "stats": "crovia_spider.cli.ledger_admin_cmds",
    "reindex": "crovia_spider.cli.ledger_admin_cmds",
    "find": "crovia_spider.cli.find_cmds",
    "history": "crovia_spider.cli.history_cmds",
    "absent": "crovia_spider.cli.history_cmds",
    "body": "crovia_spider.cli.body_cmds",
    "capture": "crovia_spider.cli.capture_cmds",
    "diff": "crovia_spider.cli.capture_cmds",
    "changes": "crovia_spider.cli.changes_cmds",
    "notify": "crovia_spider.cli.notify_cmds",
    "bundle": "crovia_spider.cli.bundle_cmds",
    "arxiv": "crovia_spider.cli.arxiv_cmds",
    "export": "crovia_spider.cli.export_cmds",
    "crawl": "crovia_spider.cli.crawl_cmds",
    "worker": "crovia_spider.cli.cluster_cmds",
    "sequencer": "crovia_spider.cli.cluster_cmds",
    "workers": "crovia_spider.cli.cluster_cmds",
    "feeds": "crovia_spider.cli.feeds_cmds",
    "doctor": "crovia_spider.cli.doctor_cmds",
    "schedule": "crovia_spider.cli.schedule_cmds",
    "publish": "crovia_spider.cli.publish_cmds",
    "monitor": "crovia_spider.cli.monitor_cmds",
    "witness": "crovia_spider.cli.witness_cmds",
    "consistency": "crovia_spider.cli.tlog_cmds",
    "stamp": "crovia_spider.cli.stamp_cmds",
    "serve": "crovia_spider.cli.web_cmds",
}
SUBCOMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))
# The commands that start crawls check every setting first (crovia_spider/config/settings_check.py;
# `feeds check` and `doctor` check them in their handlers, to say so).
CHECKS_SETTINGS = frozenset({"crawl", "capture", "schedule", "worker", "sequencer"})
# Options `crovia` itself takes before the command that take no value and print nothing.
_QUIET_TOP_OPTIONS = frozenset({"-v", "--verbose"})


class UsageError(Exception):
    """The command line is wrong: argparse's message, with the usage of the (sub)command."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is raised (so `--json` can report it) instead of exiting, and
    a word a command does not take is refused by that command, with its usage: an unknown option
    with "did you mean --OPTION?" (argparse handed it up to `crovia`, whose usage said nothing of
    the command's options)."""

    is_command = True  # False for `crovia` itself, set in build_parser

    def error(self, message: str) -> typing.NoReturn:
        raise UsageError(
            f"{self.prog}: error: {message}{_suggestion(message)}", self.format_usage()
        )

    def parse_known_args(self, args=None, namespace=None):
        words = sys.argv[1:] if args is None else list(args)
        self._refuse_unknown_option(words)
        namespace, extras = super().parse_known_args(words, namespace)
        if extras and self.is_command:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras

    def _refuse_unknown_option(self, words: list[str]) -> None:
        """Raise UsageError for the first word that looks like an option of this parser but is
        none (nor argparse's abbreviation of one); a parser with commands of its own looks only
        at the words before the command."""
        known = [option for action in self._actions for option in action.option_strings]
        has_commands = self._subparsers is not None
        for word in words:
            if word == "--" or (has_commands and not word.startswith("-")):
                return
            if _is_unknown_option(word, known):
                name = word.split("=", 1)[0]
                from crovia_spider.suggest import closest

                guess = closest(name, [o for o in known if o.startswith("--")])
                hint = f"; did you mean {guess}?" if guess else ""
                raise UsageError(f"{self.prog}: unknown option {name}{hint}", self.format_usage())


_NEGATIVE_NUMBER = re.compile(r"-[0-9]+|-[0-9]*\.[0-9]+")  # argparse reads these as values


def _is_unknown_option(word: str, known: list[str]) -> bool:
    if not word.startswith("-") or word == "-" or _NEGATIVE_NUMBER.fullmatch(word):
        return False
    name = word.split("=", 1)[0]
    if name.startswith("--"):
        return not any(option.startswith(name) for option in known)  # an abbreviation is known
    return name not in known and word[:2] not in known  # -sNAME=VALUE, -v


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<known>.*)\)")


def _suggestion(message: str) -> str:
    """ "; did you mean 'verify'?" for argparse's invalid-choice message, when one is close."""
    found = _INVALID_CHOICE.search(message)
    if not found:
        return ""
    from crovia_spider.suggest import did_you_mean

    return did_you_mean(found["given"], re.findall(r"'([^']*)'", found["known"]))


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of `crovia`; given the command line, only its command's module is imported
    when the line names a known command after nothing but -v (see `command_modules`)."""
    parser = _Parser(
        prog="crovia",
        description="Harvest feeds into a signed ledger, and prove and verify what was observed.",
        epilog="Exit codes: 0 ok, 1 a check failed, 2 usage or I/O error. Settings: see README.",
    )
    parser.add_argument("--version", action="version", version=f"crovia {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    parser.is_command = False
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in command_modules(argv):
        importlib.import_module(name).register(subparsers)
    return parser


def command_modules(argv: list[str] | None) -> tuple[str, ...]:
    """The modules to register for `argv`: the named command's, or all of them (no command line,
    help or --version asked before the command, an unknown command: "did you mean" needs them)."""
    for token in argv or ():
        if token in _QUIET_TOP_OPTIONS:
            continue
        return (COMMANDS[token],) if token in COMMANDS else SUBCOMMAND_MODULES
    return SUBCOMMAND_MODULES


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from crovia_spider.cli.redact import hidden_key_material, private_key_typed

    refused = private_key_typed(argv)  # shown nowhere, not even in a usage error
    if refused:
        if "--json" in argv:
            print_json({"ok": False, "exit_code": EXIT_USAGE, "error": "usage", "message": refused})
        else:
            print(f"crovia: error: {refused}", file=sys.stderr)
        return EXIT_USAGE
    with hidden_key_material(argv):  # what was typed as key material is never written back
        return _main(argv)


def _main(argv: list[str]) -> int:
    wants_json = "--json" in argv
    try:
        args = build_parser(argv).parse_args(argv)
    except UsageError as exc:
        if wants_json:
            print_json(failure(exc, EXIT_USAGE))
        else:
            print(f"{exc.usage}{exc}", file=sys.stderr)
        return EXIT_USAGE
    except CroviaError as exc:  # a setting an option's default reads is wrong
        if wants_json:
            print_json(failure(exc, EXIT_USAGE))
        else:
            print(f"crovia: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "logs", True):  # a command that logs nothing sets logs=False
        _configure_logging(args.verbose)
    code = EXIT_OK
    try:
        if args.command in CHECKS_SETTINGS:  # before anything starts: one line, exit 2
            from crovia_spider.config.settings_check import check_command_line

            check_command_line(getattr(args, "settings", ()))
        code = args.handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        return _reader_gone(code)
    except KeyboardInterrupt:
        return 130
    except UsageError as exc:  # a command line a command refused after parsing (verify's one of)
        if getattr(args, "json", False):
            print_json(failure(exc, EXIT_USAGE))
        else:
            print(f"{exc.usage}{exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # the one handler: known errors become a message and an exit code
        code = exit_code_for(exc)
        try:
            if getattr(args, "json", False):
                print_json(failure(exc, code))  # a bug too: the traceback then goes to stderr
            if code is None:
                raise
            if not getattr(args, "json", False):
                print(f"crovia {args.command}: error: {exc}", file=sys.stderr)
            return code
        except BrokenPipeError:
            return _reader_gone(code or EXIT_USAGE)


def _configure_logging(verbose: bool) -> None:
    import logging

    logging.basicConfig(  # Scrapy's format: a crawl's and the scheduler's lines read alike
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s [%(name)s] %(levelname)s: %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
    )


def _reader_gone(code: int) -> int:
    """Whoever read stdout has gone (`| head`): end quietly. Output still buffered for stdout is
    sent to /dev/null, or the interpreter would report the broken pipe again as it exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
        pass  # stdout is not a file (a test's capture): nothing will flush into a closed pipe
    return code


def failure(exc: BaseException, code: int | None) -> dict[str, object]:
    """The one JSON object of a failed command (`code` None: a bug). `error` is check_failed,
    usage, io, error (another known error: configuration, the ledger's state) or internal."""
    from crovia_spider.cli.redact import redact
    from ledger.exceptions import InvalidPublicKey, VerificationError

    result: dict[str, object] = {
        "ok": False,
        "exit_code": code,
        "error": _kind(exc, code),
        "type": type(exc).__name__,
        "message": str(exc),  # an OSError's str names the file
    }
    if isinstance(exc, VerificationError):
        result.update(
            message=str(exc.args[0]), check=exc.check, expected=exc.expected, computed=exc.computed
        )
    elif isinstance(exc, UsageError | InvalidPublicKey):
        result["error"] = "usage"
    return {k: redact(v) if isinstance(v, str) else v for k, v in result.items()}


def _kind(exc: BaseException, code: int | None) -> str:
    if code is None:
        return "internal"
    if code == EXIT_CHECK_FAILED:
        return "check_failed"
    return "io" if isinstance(exc, OSError) else "error"


def exit_code_for(exc: BaseException) -> int | None:
    """The exit code of a known exception; None for a bug, which must surface as a traceback."""
    from crovia_spider.exceptions import CroviaError
    from ledger.exceptions import LedgerError, VerificationError

    if isinstance(exc, VerificationError):
        return EXIT_CHECK_FAILED
    if isinstance(exc, (CroviaError, LedgerError, OSError)):
        return EXIT_USAGE
    return None


if __name__ == "__main__":
    sys.exit(main())
