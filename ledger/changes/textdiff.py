"""The diff of two main texts, sentence by sentence, as plain text and bounded.

A policy page is a few long paragraphs; an edit is usually one sentence of one of them. A diff of
lines would show the whole paragraph removed and added again, so each paragraph is cut into
sentences and the diff is of sentences: an edited sentence is one `-` line and one `+` line, and
the paragraphs around it are context. The diff is text for people and feeds, never markup: it is
made of the kept main text (trafilatura's output, docs/spider.md "Captures"), which holds none.

Bounded whatever a page holds: texts past MAX_DIFF_CHARS characters or MAX_SENTENCES sentences
are not diffed here (the event says so and names both texts; `crovia diff` prints the whole), and
a diff holds at most MAX_DIFF_LINES lines and MAX_SENTENCE_CHARS characters a line, each cut said.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

MAX_DIFF_CHARS = 1_000_000  # each side's text; larger texts are named, not diffed
MAX_SENTENCES = 20_000  # each side's sentences; more are named, not diffed (difflib's cost)
MAX_DIFF_LINES = 200  # lines of one diff (context included)
MAX_SENTENCE_CHARS = 2000  # one line of the diff
CONTEXT = 1  # sentences of context around each change
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026\u3002])[\"'\u201d\u2019)\]]*\s+(?=\S)")


@dataclass
class TextDiff:
    """A diff of two texts: the unified diff (`text`), and the sentences it removes and adds."""

    text: str = ""
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    note: str = ""  # why the diff is cut or absent


def sentences(text: str) -> list[str]:
    """The sentences of `text`, paragraph by paragraph (its lines), an empty string between
    paragraphs. A sentence ends at . ! ? (or an ellipsis, an ideographic full stop) and the
    closing quotes or brackets after it, before white space."""
    out: list[str] = []
    for paragraph in text.splitlines():
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if out:
            out.append("")
        out.extend(part.strip() for part in _SENTENCE_END.split(paragraph) if part.strip())
    return out


def text_diff(old: str, new: str, old_name: str = "before", new_name: str = "after") -> TextDiff:
    """The sentence diff of `old` and `new` (see the module docstring)."""
    if len(old) > MAX_DIFF_CHARS or len(new) > MAX_DIFF_CHARS:
        return TextDiff(
            note=f"texts of {len(old):,} and {len(new):,} characters: past the"
            f" {MAX_DIFF_CHARS:,} a diff here reads; crovia diff prints it whole"
        )
    a, b = sentences(old), sentences(new)
    if len(a) > MAX_SENTENCES or len(b) > MAX_SENTENCES:
        return TextDiff(
            note=f"texts of {len(a):,} and {len(b):,} sentences: past the {MAX_SENTENCES:,} a"
            " diff here reads; crovia diff prints it whole"
        )
    lines = difflib.unified_diff(a, b, old_name, new_name, n=CONTEXT, lineterm="")
    out: list[str] = []
    result = TextDiff()
    cut = 0
    for line in lines:
        body = line[1:]
        if line[:1] == "-" and not line.startswith("---"):
            _keep(result.removed, body)
        elif line[:1] == "+" and not line.startswith("+++"):
            _keep(result.added, body)
        if len(out) >= MAX_DIFF_LINES:
            cut += 1
            continue
        if len(line) > MAX_SENTENCE_CHARS:
            line = line[:MAX_SENTENCE_CHARS] + f" [... {len(line) - MAX_SENTENCE_CHARS:,} more]"
        out.append(line)
    if cut:
        out.append(f"[... {cut:,} more lines of diff: crovia diff prints them]")
        result.note = f"diff cut at {MAX_DIFF_LINES} lines"
    result.text = "\n".join(out) + ("\n" if out else "")
    return result


def _keep(sentences_: list[str], sentence: str) -> None:
    if len(sentences_) < MAX_DIFF_LINES:
        sentences_.append(sentence[:MAX_SENTENCE_CHARS])
