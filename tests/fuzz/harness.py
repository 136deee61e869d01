"""What every fuzz harness shares (docs/fuzzing.md): the rule of what a finding is, and the loop.

A harness (tests/fuzz/fuzz_<name>.py) is a module with `target`, a function of the fuzzer's bytes
that feeds them to parsers of hostile input, `DOCUMENTED`, the errors those parsers promise, and
`SLACK`, the fixed cost of a parse of nothing (caches, schemas, library state). atheris (libFuzzer
for Python, coverage-guided) calls `target`, and any of these is a finding, which stops the run and
leaves the input in a `crash-*`, `timeout-*` or `oom-*` file:
- an exception other than the documented errors (a crash);
- an input that runs longer than libFuzzer's `-timeout` (a hang);
- a parse whose peak of Python allocations exceeds AMPLIFICATION (20; a harness may state another,
  with its reason) times the input plus SLACK, reported as MemoryAmplification;
- a process over libFuzzer's `-rss_limit_mb` (memory outside Python's allocator).

Memory is measured with tracemalloc. Coverage instrumentation allocates too (atheris renders the
operands of comparisons it traces: a pyasn1 parse measures seven times its real peak), so a peak
over the bound in the fuzzing process is only a suspicion: the input is then parsed again by a
plain, uninstrumented copy of the harness in a helper process (`python -m tests.fuzz.harness
MODULE`), twice (a first call may import a module or fill a cache once), and only a peak that stays
over the bound is a finding. tests/fuzz/run.py runs the harnesses; `python -m
tests.fuzz.fuzz_<name> <file>` replays one input.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import os
import struct
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

AMPLIFICATION = 20
# The code worth instrumenting for coverage: ours, and the parsing libraries hostile bytes reach.
INSTRUMENTED = [
    "ledger",
    "crovia_spider",
    "feedparser",
    "opentimestamps",
    "pyasn1",
    "pyasn1_modules",
    "rfc3161_client",
    "trafilatura",  # only the page_text harness imports it
]
CURRENT_INPUT = "CROVIA_FUZZ_CURRENT_INPUT"  # where each input is written before it is parsed
_PLAIN = "CROVIA_FUZZ_PLAIN"  # set in the helper process: import the harness uninstrumented
_SIZE = struct.Struct(">Q")
_READY = b"R"
_CORPUS = Path(__file__).resolve().parent / "corpus"

Target = Callable[[bytes], object]


class MemoryAmplification(Exception):
    """A parse held more memory at its peak than the input's size allows: a finding."""


@contextlib.contextmanager
def instrumented() -> Iterator[None]:
    """Import the parsers under this block with coverage instrumentation (not in the helper)."""
    if os.environ.get(_PLAIN):
        yield
        return
    import atheris

    with atheris.instrument_imports(include=INSTRUMENTED):
        yield


def peak_of(target: Target, documented: tuple[type[BaseException], ...], data: bytes) -> int:
    """Peak bytes of Python allocations while `target(data)` runs (documented errors swallowed),
    above what was allocated when it started.

    Tracing stays on between inputs (`untraced` turns it off): starting and stopping tracemalloc
    for every input leaks a little native memory each time (about 1.3 KB an input of these
    parsers), which took a fuzzing process past libFuzzer's 1 GB limit after 550,000 inputs.
    """
    if not tracemalloc.is_tracing():
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    with contextlib.suppress(*documented):
        target(data)
    return max(0, tracemalloc.get_traced_memory()[1] - base)


def untraced() -> None:
    """Stop tracing allocations (an input that is not measured runs at full speed)."""
    if tracemalloc.is_tracing():
        tracemalloc.stop()


def checked(
    target: Target,
    documented: tuple[type[BaseException], ...],
    slack: int,
    *,
    memory_every: int = 1,
    amplification: int | Callable[[bytes], int] = AMPLIFICATION,
    confirm: Callable[[bytes], int] | None = None,
) -> Callable[[bytes], None]:
    """`target` with its documented errors swallowed and, on every `memory_every`-th input (tracing
    allocations slows a parse several times over: a slow parser is measured on a sample), its peak
    memory held to the bound. `amplification` may be a function of the input, asked after `target`
    ran on it (so it may say which path the input took). A peak over the bound is measured again
    by `confirm` (default: two more runs here, the lower counts). Raises MemoryAmplification
    naming the peak and the bound.
    """
    calls = itertools.count()
    again = confirm or (lambda data: min(peak_of(target, documented, data) for _ in range(2)))

    def one(data: bytes) -> None:
        if next(calls) % memory_every:
            untraced()
            with contextlib.suppress(*documented):
                target(data)
            return
        peak = peak_of(target, documented, data)
        factor = amplification(data) if callable(amplification) else amplification
        bound = factor * len(data) + slack
        if peak > bound and (peak := again(data)) > bound:
            raise MemoryAmplification(
                f"{peak} bytes at peak for {len(data)} bytes of input"
                f" (bound {factor} x {len(data)} + {slack} = {bound})"
            )

    return one


class PlainPeaks:
    """The helper process: the harness `module` imported without instrumentation, measuring the
    peak of an input sent to it (the lower of two runs)."""

    def __init__(self, module: str) -> None:
        env = dict(os.environ, **{_PLAIN: "1"})
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fuzz.harness", module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        # Wait for its imports here, so they never count against the first input's time limit.
        if self._proc.stdout is None or self._proc.stdout.read(1) != _READY:
            raise RuntimeError(f"the plain helper process for {module} did not start")

    def __call__(self, data: bytes) -> int:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(_SIZE.pack(len(data)) + data)
        self._proc.stdin.flush()
        answer = self._proc.stdout.read(_SIZE.size)
        if len(answer) != _SIZE.size:
            raise RuntimeError(f"the plain helper process ended (exit {self._proc.wait()})")
        return _SIZE.unpack(answer)[0]


def fuzz(harness: ModuleType) -> None:
    """Hand `harness.target` to atheris with libFuzzer's arguments from the command line."""
    import atheris

    one = checked(
        harness.target,
        harness.DOCUMENTED,
        harness.SLACK,
        memory_every=getattr(harness, "MEMORY_EVERY", 1),
        amplification=getattr(harness, "AMPLIFICATION", AMPLIFICATION),
        confirm=PlainPeaks(harness.__spec__.name),
    )
    current = os.environ.get(CURRENT_INPUT)
    if current:
        # atheris cannot report a timeout in native code (it falls back to a bare SIGALRM that
        # kills the process): the input being parsed is then in this file, for the runner to keep.
        def one_kept(data: bytes, check: Callable[[bytes], None] = one) -> None:
            with open(current, "wb") as kept:
                kept.write(data)
            check(data)

        one = one_kept
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()


def _serve(module: str, requests: BinaryIO, answers: BinaryIO) -> None:
    harness = importlib.import_module(module)
    # A first parse may import more (the CMS modules) or fill caches: do it before the first input.
    for seed in sorted((_CORPUS / module.rsplit(".", 1)[-1].removeprefix("fuzz_")).glob("*")):
        with contextlib.suppress(Exception):
            harness.target(seed.read_bytes())
    answers.write(_READY)
    answers.flush()
    while header := requests.read(_SIZE.size):
        data = requests.read(_SIZE.unpack(header)[0])
        peak = min(peak_of(harness.target, harness.DOCUMENTED, data) for _ in range(2))
        answers.write(_SIZE.pack(peak))
        answers.flush()


if __name__ == "__main__":
    _serve(sys.argv[1], sys.stdin.buffer, sys.stdout.buffer)
