"""Config files and OPML imports have bounds: nesting, size, feed count (issue 30, obs 10).

A feeds.toml nested 100,000 arrays deep was a RecursionError traceback (exit 1) from `crovia
feeds check` and `crovia crawl`, a 100,000-part dotted key a minute of tomllib's CPU, and a 22 MB
OPML of 300,000 feeds was imported whole (31 s, 488 MB). Each bound is now a message naming the
file and the bound, exit 2 from `crovia feeds`, before the file is parsed (nesting) or read
(size), and an OPML over a bound adds nothing.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crovia_spider.cli.opml import MAX_OPML_BYTES, MAX_OPML_DEPTH, read_opml
from crovia_spider.config.feeds import MAX_FEEDS, load_feeds
from crovia_spider.config.ruleset import load_ruleset
from crovia_spider.config.tables import MAX_CONFIG_BYTES, MAX_NESTING, check_nesting, read_toml
from crovia_spider.exceptions import ConfigError
from crovia_spider.schedule.config import load_schedule
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, crovia

FEED = '[[feeds]]\nvendor = "a"\nurl = "https://example.org/feed.xml"\n'
DEEP = {
    "arrays": "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "inline tables": "x = " + "{a = " * 100_000 + "1" + "}" * 100_000 + "\n",
    "dotted key": "a." * 100_000 + "a = 1\n",
    "dotted key in an entry": FEED + "title = {" + "a." * 100_000 + "a = 1}\n",
    "table header": "[" + "a." * 100_000 + "a]\n",
}
FILES = {  # the option of `crovia feeds check` for each config file
    "feeds": "--feeds-file",
    "classify": "--classify-file",
    "schedule": "--schedule-file",
}


def check(tmp_path: Path, which: str, path: Path) -> subprocess.CompletedProcess[str]:
    """`crovia feeds check` with `path` as the `which` file (it checks feeds.toml first)."""
    if which != "feeds":
        (tmp_path / "feeds.toml").write_text(FEED)
    return crovia(tmp_path, "feeds", "check", FILES[which], str(path))


def refused(proc: subprocess.CompletedProcess[str], path: Path, *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    for word in (str(path), *words):
        assert word in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("which", sorted(FILES))
@pytest.mark.parametrize("shape", sorted(DEEP))
def test_a_deep_config_file_is_a_config_error(tmp_path: Path, which: str, shape: str) -> None:
    deep = tmp_path / f"{which}.toml"
    deep.write_text(DEEP[shape])
    refused(check(tmp_path, which, deep), deep, f"more than {MAX_NESTING} levels")


def test_a_deep_feed_list_refuses_the_crawl_as_any_bad_feed_list_does(tmp_path: Path) -> None:
    """`crovia crawl` refuses a feed list it cannot load as a configuration error (exit 2, the
    file named, before any crawl starts): a deep one the same way, with the bound, and no
    traceback."""

    def crawl(text: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / "feeds.toml").write_text(text)
        return subprocess.run(
            [str(BIN / "crovia"), "crawl"],
            cwd=PROJECT_ROOT,
            env=crawl_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )

    plainly_bad = crawl("x = [\n")
    deep = crawl(DEEP["arrays"])
    assert deep.returncode == plainly_bad.returncode == 2, deep.stderr[-2000:]
    assert "Traceback" not in deep.stderr and "RecursionError" not in deep.stderr
    assert str(tmp_path / "feeds.toml") in deep.stderr
    assert f"more than {MAX_NESTING} levels" in deep.stderr


def test_nesting_within_the_bound_still_parses(tmp_path: Path) -> None:
    path = tmp_path / "nested.toml"
    levels = MAX_NESTING - 1
    path.write_text(
        'x = [ "[[[[", \'{{{{\', """\n]]]]""", # [[[[\n'
        + "[" * levels
        + "]" * levels
        + "]\n"
        + "a." * levels
        + "b = 1.5\n"
    )
    assert read_toml(path)["x"][:3] == ["[[[[", "{{{{", "]]]]"]


@pytest.mark.parametrize("which", sorted(FILES))
def test_a_config_file_over_the_size_bound_is_refused_before_it_is_read(
    tmp_path: Path, which: str
) -> None:
    big = tmp_path / f"{which}.toml"
    with open(big, "wb") as out:
        out.truncate(64 << 30)  # 64 GiB, sparse: reading it would exhaust the machine
    refused(check(tmp_path, which, big), big, f"more than the {MAX_CONFIG_BYTES:,} bytes")


def test_a_config_file_at_the_size_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "feeds.toml"
    path.write_text(FEED + "#" * (MAX_CONFIG_BYTES - len(FEED) - 1) + "\n")
    assert path.stat().st_size == MAX_CONFIG_BYTES
    assert [feed.vendor for feed in load_feeds(path)] == ["a"]


def feed_list(count: int) -> str:
    return "".join(
        f'[[feeds]]\nvendor = "f{i}"\nurl = "https://e{i}.example.org/feed.xml"\n'
        for i in range(count)
    )


def test_a_feed_list_over_the_feed_count_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "feeds.toml"
    path.write_text(feed_list(MAX_FEEDS + 1))
    refused(check(tmp_path, "feeds", path), path, f"more than the {MAX_FEEDS:,}")
    path.write_text(feed_list(MAX_FEEDS))
    assert len(load_feeds(path)) == MAX_FEEDS


def opml(count: int, start: int = 0) -> str:
    body = "".join(
        f'<outline text="Feed {i}" xmlUrl="https://e{i}.example.org/feed.xml"/>'
        for i in range(start, start + count)
    )
    return f'<?xml version="1.0" encoding="UTF-8"?><opml version="2.0"><body>{body}</body></opml>'


def import_opml(tmp_path: Path, source: Path, feeds: Path) -> subprocess.CompletedProcess[str]:
    return crovia(tmp_path, "feeds", "import-opml", str(source), "--feeds-file", str(feeds))


@pytest.fixture
def feeds(tmp_path: Path) -> Path:
    path = tmp_path / "feeds.toml"
    path.write_text("# mine\n" + FEED)
    return path


def test_an_opml_over_the_feed_count_bound_adds_nothing(tmp_path: Path, feeds: Path) -> None:
    before = feeds.read_bytes()
    source = tmp_path / "subs.opml"
    source.write_text(opml(MAX_FEEDS + 1))
    refused(import_opml(tmp_path, source, feeds), source, f"more than {MAX_FEEDS:,} feeds")
    assert feeds.read_bytes() == before


def test_an_opml_that_would_overfill_the_feed_list_adds_nothing(
    tmp_path: Path, feeds: Path
) -> None:
    before = feeds.read_bytes()
    source = tmp_path / "subs.opml"
    source.write_text(opml(MAX_FEEDS))  # within the bound alone, one over with the feed there
    refused(import_opml(tmp_path, source, feeds), source, f"more than the {MAX_FEEDS:,}")
    assert feeds.read_bytes() == before
    assert not list(tmp_path.glob("*.import"))


def test_an_opml_over_the_size_bound_is_refused_before_it_is_read(
    tmp_path: Path, feeds: Path
) -> None:
    before = feeds.read_bytes()
    source = tmp_path / "subs.opml"
    with open(source, "wb") as out:
        out.truncate(64 << 30)
    refused(import_opml(tmp_path, source, feeds), source, f"more than the {MAX_OPML_BYTES:,}")
    assert feeds.read_bytes() == before


def test_an_opml_nested_too_deep_is_refused(tmp_path: Path, feeds: Path) -> None:
    before = feeds.read_bytes()
    source = tmp_path / "subs.opml"
    deep = '<outline text="folder">' * 100_000 + "</outline>" * 100_000
    source.write_text(f'<opml version="2.0"><body>{deep}</body></opml>')
    refused(import_opml(tmp_path, source, feeds), source, f"more than {MAX_OPML_DEPTH} deep")
    assert feeds.read_bytes() == before


def test_a_big_opml_within_the_bounds_is_imported(tmp_path: Path, feeds: Path) -> None:
    source = tmp_path / "subs.opml"
    source.write_text(opml(MAX_FEEDS - 1))  # with the one there: exactly at the bound
    proc = import_opml(tmp_path, source, feeds)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"{MAX_FEEDS - 1} added" in proc.stdout
    assert feeds.read_text().startswith("# mine\n")
    assert len(load_feeds(feeds)) == MAX_FEEDS
    assert check(tmp_path, "feeds", feeds).returncode == 0


# The loaders, on anything: only ConfigError, never a RecursionError, a ValueError, a KeyError...
LOADERS = {"feeds": load_feeds, "classify": load_ruleset, "schedule": load_schedule}
TOML_BITS = st.sampled_from(
    ["[", "]", "{", "}", "[[feeds]]\n", "a.", "a", " = ", '"', "'", '"""', "'''", "#", "\n",
     ",", "1.5", "\\", "x = ", 'vendor = "v"\n', 'url = "https://e.org/f"\n', "\x00", "\ufeff"]
)  # fmt: skip
HOSTILE = st.one_of(
    st.binary(max_size=2000),
    st.lists(TOML_BITS, max_size=400).map(lambda bits: "".join(bits).encode()),
    st.builds(  # a run of one bit, after a start that makes a value of it
        lambda start, bit, count: (start + bit * count).encode(),
        st.sampled_from(["", "x = ", FEED + "title = "]),
        st.one_of(st.sampled_from(["[", "{a = ", "a.", "[{a = "]), TOML_BITS),
        st.integers(0, 3000),
    ),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=HOSTILE, which=st.sampled_from(sorted(LOADERS)))
def test_the_config_loaders_raise_only_config_errors(tmp_path: Path, data: bytes, which) -> None:
    path = tmp_path / "hostile.toml"
    path.write_bytes(data)
    try:
        LOADERS[which](path)
    except ConfigError as exc:
        assert str(path) in str(exc)


@settings(max_examples=300, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=2000),
        st.lists(
            st.sampled_from(["<opml>", "<outline xmlUrl='h'>", "</outline>", "<body>", "<", ">",
                             "&", "<!ENTITY", "\x00", "</opml>", "<?xml version='1.0'?>"]),
            max_size=300,
        ).map(lambda bits: "".join(bits).encode()),
    )
)  # fmt: skip
def test_the_opml_reader_raises_only_config_errors(data: bytes) -> None:
    try:
        feeds = read_opml(data)
    except ConfigError:
        return
    assert len(feeds) <= MAX_FEEDS and all(set(feed) == {"title", "url"} for feed in feeds)


@pytest.mark.parametrize("depth", range(1, 2 * MAX_NESTING))
def test_the_nesting_bound_is_exact(depth: int) -> None:
    """Each shape is refused exactly when it is deeper than the bound; what passes, tomllib
    parses."""
    for text in (
        "x = " + "[" * depth + "]" * depth,
        "x = " + "{a = " * depth + "1" + "}" * depth,
        "a." * depth + "a = 1",
    ):
        try:
            check_nesting(Path("t.toml"), text)
        except ConfigError:
            assert depth > MAX_NESTING, text
        else:
            assert depth <= MAX_NESTING, text
            tomllib.loads(text)


def test_a_pipe_is_read_no_further_than_the_size_bound(tmp_path: Path) -> None:
    """A pipe has no size to tell: what is read stops one byte past the bound."""
    fifo = tmp_path / "feeds.toml"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["dd", "if=/dev/zero", f"of={fifo}", "bs=1M", "count=64"], stderr=subprocess.DEVNULL
    )
    try:
        with pytest.raises(ConfigError, match=f"more than the {MAX_CONFIG_BYTES:,} bytes"):
            load_feeds(fifo)
    finally:
        writer.kill()
        writer.wait()
