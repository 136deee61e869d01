"""Runs the fuzz harnesses (docs/fuzzing.md): briefly in `make test`, for longer with `make fuzz`.

    python -m tests.fuzz.run [--seconds N] [--only NAME ...] [--keep DIR]

Each harness runs in its own process (libFuzzer ends the process when it stops) for `--seconds`,
starting from its seed corpus tests/fuzz/corpus/<name>/, which it only reads: the inputs it finds
interesting, and any finding (`crash-*`, `timeout-*`, `oom-*`), go to a scratch directory, kept
under `--keep` when given. Exit status 0 when no harness found anything, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.fuzz.harness import CURRENT_INPUT

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
HANG_SECONDS = 20  # one input running longer than this is a hang (a loaded machine stays far below)
RSS_LIMIT_MB = 1024  # the process as a whole (memory outside Python's allocator)


@dataclass(frozen=True)
class Harness:
    """A harness module (tests/fuzz/fuzz_<name>.py) and the longest input libFuzzer makes."""

    name: str
    max_len: int

    @property
    def module(self) -> str:
        return f"tests.fuzz.fuzz_{self.name}"

    @property
    def corpus(self) -> Path:
        return CORPUS / self.name


HARNESSES = (
    Harness("feed", 16_384),
    Harness("jsonfeed", 16_384),
    Harness("sitemap", 16_384),
    Harness("oaipmh", 16_384),
    Harness("listing", 16_384),
    Harness("page_text", 16_384),
    Harness("browser_evidence", 16_384),
    Harness("result", 65_536),
    Harness("receipt", 32_768),
    Harness("note", 4_096),
    Harness("tiles", 16_384),
    Harness("ots", 16_384),
    Harness("ots_reply", 16_384),
    Harness("tsa", 8_192),
    Harness("witness", 4_096),
    Harness("bundle", 32_768),
)


@dataclass(frozen=True)
class Outcome:
    """One harness's run: libFuzzer's exit status, inputs executed, findings left, its output."""

    harness: Harness
    returncode: int
    runs: int
    findings: tuple[Path, ...]
    output: str

    @property
    def clean(self) -> bool:
        return self.returncode == 0 and not self.findings


def run(harness: Harness, seconds: int, scratch: Path) -> Outcome:
    """Fuzz `harness` for `seconds` from its seed corpus, writing only under `scratch`."""
    found = scratch / harness.name / "corpus"
    artifacts = scratch / harness.name / "findings"
    found.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        harness.module,
        str(found),  # the first directory is where libFuzzer writes new inputs
        str(harness.corpus),
        f"-max_total_time={seconds}",
        f"-timeout={HANG_SECONDS}",
        f"-rss_limit_mb={RSS_LIMIT_MB}",
        f"-max_len={harness.max_len}",
        f"-artifact_prefix={artifacts}/",
        "-print_final_stats=1",
    ]
    current = scratch / harness.name / "current-input"
    env = dict(os.environ, **{CURRENT_INPUT: str(current)})
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    output = proc.stdout + proc.stderr
    if proc.returncode == -signal.SIGALRM and current.exists():
        data = current.read_bytes()
        (artifacts / f"timeout-native-{hashlib.sha1(data).hexdigest()}").write_bytes(data)
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", output)
    return Outcome(
        harness,
        proc.returncode,
        int(runs[-1]) if runs else 0,
        tuple(sorted(artifacts.iterdir())),
        output,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="per harness (default 60)")
    parser.add_argument("--only", nargs="*", default=(), help="harness names (default: all)")
    parser.add_argument("--keep", type=Path, help="keep new inputs and findings here")
    args = parser.parse_args(argv)
    chosen = [h for h in HARNESSES if not args.only or h.name in args.only]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="crovia-fuzz-") as tmp:
        scratch = args.keep or Path(tmp)
        for harness in chosen:
            outcome = run(harness, args.seconds, scratch)
            verdict = "clean" if outcome.clean else f"FINDING ({_exit(outcome.returncode)})"
            print(f"{harness.name}: {outcome.runs} inputs in {args.seconds} s: {verdict}")
            for finding in outcome.findings:
                print(f"  {finding}")
            if not outcome.clean:
                failed += 1
                print(_tail(outcome.output))
    return 1 if failed else 0


def _exit(returncode: int) -> str:
    if returncode == -signal.SIGALRM:
        # atheris's own timeout falls back to the native SIGALRM when Python does not regain control
        return "killed by SIGALRM: a timeout in native code, a hang"
    return f"exit {returncode}"


def _tail(output: str, lines: int = 40) -> str:
    return "\n".join(output.splitlines()[-lines:])


if __name__ == "__main__":
    sys.exit(main())
