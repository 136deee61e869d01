"""`crovia feeds add URL` and `crovia feeds try VENDOR|URL` against a vendor's site on 127.0.0.1
(tests/sitefixture.py): what each finds, what `add` writes (every byte before the new table kept)
and refuses, and that `try` leaves the ledger directory byte-identical."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from crovia_spider.cli.feeds_add import vendor_from_host
from crovia_spider.config.feeds import feed_from_table, load_feeds
from crovia_spider.exceptions import ConfigError
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, run_crawl
from tests.feedserver import FeedServer, Reply
from tests.sitefixture import (
    HTML,
    LASTMOD,
    NEWS_PATHS,
    NEWS_TITLE,
    XML,
    listing_page,
    sitemap_index,
    urlset,
    vendor_site,
)

COMMENTED = """\
# Our feeds. Keep this comment.
[[feeds]]
vendor = "zeta"   # the last letter, first
url = "https://zeta.example/feed.xml"

# a comment between entries
[[feeds]]
url = "https://alpha.example/feed.xml"
vendor = "alpha"
category = "research"   # keys in this order, on purpose
"""


@pytest.fixture(scope="module")
def site():
    with FeedServer() as server:
        yield server, vendor_site(server)


def feeds_cmd(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`crovia feeds ARGS` with the CROVIA_* paths of `tmp_path`, politeness delays off."""
    return subprocess.run(
        [str(BIN / "crovia"), "feeds", *args],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path, CROVIA_POLITE_DELAYS="0", RETRY_BACKOFF_BASE="0"),
        capture_output=True,
        text=True,
        timeout=120,
    )


def commented_file(tmp_path: Path) -> Path:
    path = tmp_path / "feeds.toml"
    path.write_text(COMMENTED, encoding="utf-8")
    return path


def added_entry(path: Path):
    """The feed list at `path` loads, keeps COMMENTED byte for byte, and ends in the new entry."""
    text = path.read_bytes()
    assert text.startswith(COMMENTED.encode())
    feeds = load_feeds(path)
    assert [f.vendor for f in feeds[:2]] == ["zeta", "alpha"]
    assert len(feeds) == 3
    return feeds[-1]


def test_site_root_gives_the_sitemaps_robots_txt_names(site, tmp_path):
    server, urls = site
    feeds_file = commented_file(tmp_path)
    proc = feeds_cmd(tmp_path, "add", server.base + "/", "--vendor", "lab")
    assert proc.returncode == 0, proc.stderr
    assert "sitemap: " + urls["robots.txt"] in proc.stdout
    assert server.base + NEWS_PATHS[0] in proc.stdout  # a first item, from a child sitemap
    entry = added_entry(feeds_file)
    assert (entry.vendor, entry.kind, entry.url) == ("lab", "sitemap", urls["robots.txt"])


def test_json_feed_is_preferred_to_the_sitemap(site, tmp_path):
    _server, urls = site
    feeds_file = commented_file(tmp_path)
    proc = feeds_cmd(tmp_path, "add", urls["feed.json"], "--vendor", "notes")
    assert proc.returncode == 0, proc.stderr
    assert "jsonfeed: " + urls["feed.json"] in proc.stdout and "Note one" in proc.stdout
    assert "sitemap: " + urls["robots.txt"] in proc.stdout  # found, shown, not chosen
    entry = added_entry(feeds_file)
    assert (entry.kind, entry.url, entry.title) == ("jsonfeed", urls["feed.json"], "Lab notes")


def test_a_page_naming_its_atom_feed_gives_the_feed(site, tmp_path):
    _server, urls = site
    feeds_file = commented_file(tmp_path)
    proc = feeds_cmd(tmp_path, "add", urls["blog"])
    assert proc.returncode == 0, proc.stderr
    assert "Blog post" in proc.stdout
    entry = added_entry(feeds_file)
    assert (entry.kind, entry.url, entry.title) == ("feed", urls["blog/atom.xml"], "Lab blog")
    assert entry.vendor == "127_0_0_1"  # made from the host


def test_an_address_that_redirects_is_followed_to_its_page(tmp_path):
    """/old-blog answers 301 to /blog, whose <link rel="alternate"> names the Atom feed: the
    redirect is followed (through the fetch policy, as every hop), never taken for the end."""
    with FeedServer() as server:
        urls = vendor_site(server)
        server.script("robots.txt", Reply(status=404))  # no sitemap: the page's feed alone
        server.script("old-blog", Reply(status=301, headers={"Location": urls["blog"]}))
        feeds_file = commented_file(tmp_path)
        proc = feeds_cmd(tmp_path, "add", server.base + "/old-blog", "--vendor", "lab")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        entry = added_entry(feeds_file)
        assert (entry.kind, entry.url) == ("feed", urls["blog/atom.xml"])


def test_a_listing_page_alone_gives_no_source_but_the_entry_to_fill_in(tmp_path):
    with FeedServer() as server:  # no robots.txt here: a 404
        url = server.script("news", Reply(body=listing_page([("/a", "A", "2026-01-01")]),
                                          headers=HTML))  # fmt: skip
        feeds_file = commented_file(tmp_path)
        proc = feeds_cmd(tmp_path, "add", url, "--vendor", "lab")
    assert proc.returncode == 1, proc.stderr
    assert "no feed, JSON Feed or sitemap found" in proc.stdout
    assert f"{server.base}/robots.txt: HTTP 404" in proc.stdout
    assert 'kind = "page"' in proc.stdout and "selectors = {" in proc.stdout
    assert feeds_file.read_text(encoding="utf-8") == COMMENTED


def test_dry_run_writes_nothing(site, tmp_path):
    _server, urls = site
    feeds_file = commented_file(tmp_path)
    proc = feeds_cmd(tmp_path, "add", urls["feed.json"], "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert f'url = "{urls["feed.json"]}"' in proc.stdout
    assert feeds_file.read_text(encoding="utf-8") == COMMENTED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vendor", "alpha"], "vendor 'alpha' is configured already"),
        (["--vendor", "Bad-Id"], "use lower-case letters"),
    ],
)
def test_a_taken_or_bad_vendor_id_is_refused_before_any_fetch(site, tmp_path, args, message):
    server, urls = site
    feeds_file = commented_file(tmp_path)
    before = len(server.requests)
    proc = feeds_cmd(tmp_path, "add", urls["feed.json"], *args)
    assert proc.returncode == 2 and message in proc.stderr
    assert len(server.requests) == before
    assert feeds_file.read_text(encoding="utf-8") == COMMENTED


def test_a_configured_url_is_refused(site, tmp_path):
    _server, urls = site
    feeds_file = tmp_path / "feeds.toml"
    text = COMMENTED + f'\n[[feeds]]\nvendor = "blog"\nurl = "{urls["blog/atom.xml"]}"\n'
    feeds_file.write_text(text, encoding="utf-8")
    given = feeds_cmd(tmp_path, "add", urls["blog/atom.xml"], "--vendor", "other")
    assert given.returncode == 2 and "is configured already, as 'blog'" in given.stderr
    found = feeds_cmd(tmp_path, "add", urls["blog"], "--vendor", "other")  # names the same feed
    assert found.returncode == 2 and "is configured already, as 'blog'" in found.stderr
    assert feeds_file.read_text(encoding="utf-8") == text


def ledger_digest(ledger: Path) -> dict[str, str]:
    return {
        str(path.relative_to(ledger)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(ledger.rglob("*"))
        if path.is_file()
    }


def test_try_reads_as_a_crawl_and_leaves_the_ledger_as_it_was(site, tmp_path):
    server, urls = site
    feeds = [
        {"vendor": "notes", "url": urls["feed.json"], "kind": "jsonfeed"},
        {"vendor": "lab", "url": urls["robots.txt"], "kind": "sitemap",
         "include": ["/news/"], "exclude": ["/tag/"]},
    ]  # fmt: skip
    crawl = run_crawl(tmp_path, feeds)
    assert crawl.returncode == 0, crawl.stderr
    ledger = tmp_path / "ledger"
    before = ledger_digest(ledger)
    assert "axiom_ledger.jsonl" in before

    sitemap = feeds_cmd(tmp_path, "try", "lab")
    assert sitemap.returncode == 0, sitemap.stderr
    lines = sitemap.stdout.splitlines()
    shown = [line.split()[-1] for line in lines if line.startswith("  ")]
    assert shown == [server.base + path for path in NEWS_PATHS]  # both child sitemaps walked
    assert NEWS_TITLE in sitemap.stdout
    assert lines[-1] == "3 items; entries 3, unread 0, excluded 3, over the limit 0"

    notes = feeds_cmd(tmp_path, "try", "notes")
    assert notes.returncode == 0, notes.stderr
    assert "2026-11-01T00:00:00Z  Note one  " + server.base + "/notes/1" in notes.stdout
    assert notes.stdout.splitlines()[-1].startswith("2 items; entries 2, unread 0")

    by_url = feeds_cmd(tmp_path, "try", urls["robots.txt"], "--kind", "sitemap",
                       "--include", "/news/")  # fmt: skip
    assert by_url.returncode == 0, by_url.stderr
    assert "3 items; entries 3, unread 0, excluded 3" in by_url.stdout
    assert ledger_digest(ledger) == before


def test_try_of_an_unknown_vendor_suggests_one(site, tmp_path):
    commented_file(tmp_path)
    proc = feeds_cmd(tmp_path, "try", "alpah")
    assert proc.returncode == 2 and "did you mean 'alpha'" in proc.stderr


def test_the_fetch_policy_holds_every_hop(site, tmp_path):
    """A page on one loopback host naming a feed on another: that hop is refused, as in a crawl."""
    _server, urls = site
    with FeedServer(host="127.0.0.2") as page_server:
        page = (
            '<html><head><link rel="alternate" type="application/atom+xml"'
            f' href="{urls["blog/atom.xml"]}"></head></html>'
        ).encode()
        url = page_server.script("page", Reply(body=page, headers=HTML))
        feeds_file = commented_file(tmp_path)
        proc = feeds_cmd(tmp_path, "add", url, "--vendor", "lab")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{urls['blog/atom.xml']}: FetchRefused: fetch refused" in proc.stdout
    assert feeds_file.read_text(encoding="utf-8") == COMMENTED


def test_a_crlf_file_keeps_every_byte_and_its_line_ending(site, tmp_path):
    _server, urls = site
    feeds_file = tmp_path / "feeds.toml"
    old = COMMENTED.replace("\n", "\r\n").encode()
    feeds_file.write_bytes(old)
    proc = feeds_cmd(tmp_path, "add", urls["feed.json"], "--vendor", "notes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = feeds_file.read_bytes()
    assert data.startswith(old)
    new = data[len(old) :]
    assert new.startswith(b"\r\n[[feeds]]\r\n") and new.endswith(b"\r\n")
    assert b"\n" not in new.replace(b"\r\n", b"")
    assert load_feeds(feeds_file)[-1].vendor == "notes"


def test_two_adds_at_once_both_land(site, tmp_path):
    _server, urls = site
    feeds_file = commented_file(tmp_path)
    env = crawl_env(tmp_path, CROVIA_POLITE_DELAYS="0", RETRY_BACKOFF_BASE="0")
    procs = []
    for url, vendor in ((urls["feed.json"], "notes"), (urls["blog"], "blog")):
        command = [str(BIN / "crovia"), "feeds", "add", url, "--vendor", vendor]
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
        procs.append(subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, **pipes))
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
    assert feeds_file.read_bytes().startswith(COMMENTED.encode())
    assert sorted(f.vendor for f in load_feeds(feeds_file)) == ["alpha", "blog", "notes", "zeta"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".feeds.toml.")] == [
        ".feeds.toml.lock"
    ]


def test_a_symlink_at_the_old_temporary_name_is_not_written_through(site, tmp_path):
    _server, urls = site
    feeds_file = commented_file(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me\n")
    planted = tmp_path / ".feeds.toml.add"
    planted.symlink_to(victim)
    proc = feeds_cmd(tmp_path, "add", urls["feed.json"], "--vendor", "notes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert added_entry(feeds_file).vendor == "notes"
    assert planted.is_symlink() and victim.read_bytes() == b"keep me\n"


def test_a_feeds_file_that_is_a_symlink_stays_one(site, tmp_path):
    _server, urls = site
    real = tmp_path / "config" / "feeds.toml"
    real.parent.mkdir()
    real.write_text(COMMENTED, encoding="utf-8")
    feeds_file = tmp_path / "feeds.toml"
    feeds_file.symlink_to(real)
    proc = feeds_cmd(tmp_path, "add", urls["feed.json"], "--vendor", "notes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert feeds_file.is_symlink() and feeds_file.resolve() == real
    assert added_entry(real).vendor == "notes"
    assert (real.parent / ".feeds.toml.lock").exists()


def test_a_title_from_the_network_is_printable_text_only(tmp_path):
    """Escape, right-to-left override, NUL and a lone surrogate in a JSON Feed's title: none
    reaches the terminal or the feed list, and nothing is left behind."""
    feed = (
        b'{"version": "https://jsonfeed.org/version/1.1",'
        b' "title": "Lab\\u001b[31m \\u202enotes\\u0000\\ud800",'
        b' "items": [{"id": "1", "url": "https://lab.example/1", "title": "One",'
        b' "content_text": "One."}]}'
    )
    with FeedServer() as server:
        json_type = {"Content-Type": "application/feed+json"}
        url = server.script("feed.json", Reply(body=feed, headers=json_type))
        feeds_file = commented_file(tmp_path)
        proc = feeds_cmd(tmp_path, "add", url, "--vendor", "notes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert added_entry(feeds_file).title == "Lab[31m notes"
    for hidden in ("\x1b", "\u202e", "\x00", "\ufffd", "\\ud800"):
        assert hidden not in proc.stdout and hidden not in feeds_file.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [
        ".feeds.toml.lock"
    ]


def test_try_refuses_a_pattern(tmp_path):
    commented_file(tmp_path)
    proc = feeds_cmd(tmp_path, "try", "not*")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "feeds try takes one vendor id, not a pattern" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("old", ["", "# feeds to come\n\n# one more comment"])
def test_an_empty_or_comment_only_file_is_appended_to(site, tmp_path, old):
    _server, urls = site
    feeds_file = tmp_path / "feeds.toml"
    feeds_file.write_text(old, encoding="utf-8")
    proc = feeds_cmd(tmp_path, "add", urls["feed.json"], "--vendor", "notes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = feeds_file.read_text(encoding="utf-8")
    assert text.startswith(old) and [f.vendor for f in load_feeds(feeds_file)] == ["notes"]
    assert text.startswith("[[feeds]]\n") if not old else "\n\n[[feeds]]\n" in text


def test_a_sitemap_whose_sitemaps_are_refused_is_not_added_and_says_why(tmp_path):
    """The index on 127.0.0.1 names its sitemaps on 127.0.0.2, a hop the fetch policy refuses:
    `add` writes nothing and `try` exits 1, each naming the refused sitemap."""
    with FeedServer() as server, FeedServer(host="127.0.0.2") as other:
        child = other.script("pages.xml", Reply(body=urlset(other.base, {"/a": LASTMOD}),
                                                headers=XML))  # fmt: skip
        index = server.script("sitemap.xml", Reply(body=sitemap_index(other.base, ["/pages.xml"]),
                                                   headers=XML))  # fmt: skip
        feeds_file = commented_file(tmp_path)
        added = feeds_cmd(tmp_path, "add", index, "--vendor", "lab")
        tried = feeds_cmd(tmp_path, "try", index, "--kind", "sitemap")
    assert added.returncode == 1, added.stdout + added.stderr
    assert f"read no items: {child}" in added.stdout
    assert feeds_file.read_text(encoding="utf-8") == COMMENTED
    assert tried.returncode == 1, tried.stdout + tried.stderr
    assert tried.stdout.splitlines()[1].startswith("0 items; entries 1, unread 1")
    assert f"error: {child}" in tried.stdout


@pytest.mark.parametrize(
    ("url", "vendor"),
    [
        ("https://arxiv-sanity.com/", "site_arxiv_sanity"),
        ("https://www.arxiv.com/feed", "site_arxiv"),
        ("https://arxiv.org/rss/cs.AI", "arxiv"),
        ("https://export.arxiv.org/rss/cs.AI", "export_arxiv"),
        ("https://blog.example.org/feed", "blog_example"),
        ("https://bücher.example/feed", "xn_bcher_kva"),
        ("http://127.0.0.1:8080/feed", "127_0_0_1"),
    ],
)
def test_a_vendor_id_from_the_host(url, vendor):
    assert vendor_from_host(url) == vendor
    assert feed_from_table({"vendor": vendor, "url": url}).family == (
        "arxiv" if "arxiv.org" in url else vendor
    )


def test_no_vendor_id_from_a_host_with_none():
    with pytest.raises(ConfigError, match="give one with --vendor ID"):
        vendor_from_host("https://---.example/feed")
