"""A misspelt option of any `crovia` command is refused with a suggestion and that command's usage
(issue 33, obs 7). Before, `crovia find --vendr openai` printed the top-level usage and
"unrecognized arguments", with no hint of `--vendor`.
"""

from __future__ import annotations

import argparse
import json

import pytest

from crovia_spider.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, parser) for every command that takes options, nested ones included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))
            return
    if path:
        yield path, parser


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--")]


COMMANDS = [
    (path, option)
    for path, parser in _commands(build_parser())
    for option in _long_options(parser)[1:2]  # --help is first; the command's own first option
]


def _misspelt(option: str) -> str:
    """The option with its last letter doubled: close to it, and no abbreviation of any option."""
    return option + option[-1]


def test_every_command_with_options_is_covered():
    covered = {" ".join(path) for path, _ in COMMANDS}
    assert {"find", "feeds list", "schedule", "witness serve", "verify"} <= covered
    assert len(covered) > 20


@pytest.mark.parametrize(("path", "option"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_a_misspelt_option_names_the_command_and_the_option(path, option, capsys):
    wrong = _misspelt(option)
    assert main([*path, wrong, "x"]) == 2
    err = capsys.readouterr().err
    prog = "crovia " + " ".join(path)
    assert f"{prog}: unknown option {wrong}; did you mean {option}?" in err, err
    assert err.startswith(f"usage: {prog} "), err


def test_find_vendr_is_the_observed_case(capsys):
    assert main(["find", "--vendr", "openai"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: crovia find ")
    assert "crovia find: unknown option --vendr; did you mean --vendor?" in err
    assert "usage: crovia [-h]" not in err


def test_an_option_given_with_equals_is_named_alone(capsys):
    assert main(["find", "--vendr=openai"]) == 2
    assert "unknown option --vendr; did you mean --vendor?" in capsys.readouterr().err


def test_an_option_far_from_every_option_gets_no_guess(capsys):
    assert main(["find", "--zzzzzz"]) == 2
    err = capsys.readouterr().err
    assert "crovia find: unknown option --zzzzzz" in err and "did you mean" not in err


def test_abbreviations_and_values_still_work(tmp_path, capsys):
    # `--vend` is argparse's abbreviation of --vendor; `-s NAME=VALUE` and values are not options.
    missing = tmp_path / "none"
    assert main(["find", "--vend", "openai", "--ledger-dir", str(missing)]) == 2
    assert "unknown option" not in capsys.readouterr().err


def test_a_stray_word_is_reported_with_the_commands_usage(capsys):
    assert main(["seal", "now"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: crovia seal ") and "unrecognized arguments: now" in err


def test_an_option_before_the_command(capsys):
    assert main(["--verbsoe", "stats"]) == 2
    assert "crovia: unknown option --verbsoe; did you mean --verbose?" in capsys.readouterr().err


def test_with_json_the_refusal_is_one_object(capsys):
    assert main(["find", "--vendr", "openai", "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["error"] == "usage" and result["exit_code"] == 2
    assert "unknown option --vendr; did you mean --vendor?" in result["message"]
