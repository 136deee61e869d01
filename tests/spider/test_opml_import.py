"""OPML import: decoded before the entity check, non-public addresses refused, bad outlines skipped.

Before, a UTF-16 OPML slipped entity declarations past a byte search for `<!ENTITY`, link-local
URLs were imported silently, and one DEL character aborted the whole import.
"""

from __future__ import annotations

import pytest

from crovia_spider.cli import main
from crovia_spider.cli.opml import decode_document, import_opml, read_opml
from crovia_spider.config.feeds import load_feeds
from crovia_spider.exceptions import ConfigError
from crovia_spider.fetching.addresses import non_public_reason

ENTITY_OPML = (
    '<?xml version="1.0" encoding="{enc}"?>\n<!DOCTYPE opml [<!ENTITY x "https://e.org/a.xml">]>\n'
    '<opml version="2.0"><body><outline text="x" xmlUrl="&x;"/></body></opml>\n'
)


def opml(*outlines: str) -> str:
    body = "".join(f"<outline {o}/>" for o in outlines)
    return f'<?xml version="1.0" encoding="UTF-8"?><opml version="2.0"><body>{body}</body></opml>'


@pytest.mark.parametrize(
    ("declared", "codec"),
    [
        ("UTF-16", "utf-16"),  # with a byte-order mark
        ("UTF-16", "utf-16-le"),  # without one: told by the zero bytes
        ("UTF-16", "utf-16-be"),
        ("UTF-32", "utf-32"),
        ("UTF-8", "utf-8-sig"),
    ],
)
def test_entity_declarations_are_refused_in_any_encoding(declared, codec):
    data = ENTITY_OPML.format(enc=declared).encode(codec)
    with pytest.raises(ConfigError, match="declares DTD entities"):
        read_opml(data)


def test_declared_encoding_is_honoured():
    data = opml('text="Caf\u00e9" xmlUrl="https://e.org/a.xml"').replace("UTF-8", "ISO-8859-1")
    assert read_opml(data.encode("latin-1")) == [
        {"title": "Caf\u00e9", "url": "https://e.org/a.xml"}
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'<?xml version="1.0" encoding="no-such-codec"?><opml/>', "unknown encoding"),
        (b'<?xml version="1.0" encoding="UTF-8"?><opml>\xff</opml>', "cannot decode it as UTF-8"),
    ],
)
def test_undecodable_documents_are_refused(data, message):
    with pytest.raises(ConfigError, match=message):
        decode_document(data)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/feed",
        "http://127.1.2.3:8080/feed",
        "http://localhost/feed",
        "http://feeds.localhost/feed",
        "http://10.0.0.1/feed",
        "http://192.168.1.1/feed",
        "http://172.16.0.1/feed",
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/feed",
        "http://[::1]/feed",
        "http://[::ffff:127.0.0.1]/feed",
        "http://224.0.0.1/feed",
        "http://[ff02::1]/feed",
        "http://240.0.0.1/feed",
        "http://0.0.0.0/feed",
        "http://100.64.0.1/feed",
        "http://2130706433/feed",  # 127.0.0.1 as one number, as resolvers read it
        "http://0x7f.1/feed",
    ],
)
def test_non_public_addresses_are_named(url):
    assert non_public_reason(url) is not None


@pytest.mark.parametrize(
    "url", ["https://openai.com/news/rss.xml", "http://8.8.8.8/feed", "http://[2606:4700::1]/f"]
)
def test_public_addresses_pass(url):
    assert non_public_reason(url) is None


def test_private_outlines_are_skipped_unless_allowed(tmp_path):
    (tmp_path / "s.opml").write_text(
        opml(
            'text="Meta" xmlUrl="http://169.254.169.254/latest"',
            'text="Lab" xmlUrl="https://lab.example.org/feed.xml"',
        )
    )
    result = import_opml(tmp_path / "s.opml", tmp_path / "feeds.toml")
    assert [e["url"] for e in result.added] == ["https://lab.example.org/feed.xml"]
    assert result.skipped == [
        "http://169.254.169.254/latest: link-local address 169.254.169.254"
        " (--allow-private imports it)"
    ]
    result = import_opml(tmp_path / "s.opml", tmp_path / "feeds.toml", allow_private=True)
    assert [e["url"] for e in result.added] == ["http://169.254.169.254/latest"]


def test_one_bad_outline_is_skipped_and_counted(tmp_path):
    (tmp_path / "s.opml").write_text(
        opml(
            'text="Good" xmlUrl="https://good.example.org/feed.xml"',
            'text="Bad" xmlUrl="https://bad.example\x7f.org/feed.xml"',
            'text="Tit\x7fle" xmlUrl="https://titled.example.org/feed.xml"',
            'text="Nohost" xmlUrl="https:///feed.xml"',
        )
    )
    result = import_opml(tmp_path / "s.opml", tmp_path / "feeds.toml")
    assert [e["url"] for e in result.added] == [
        "https://good.example.org/feed.xml",
        "https://titled.example.org/feed.xml",
    ]
    assert len(result.skipped) == 2
    assert "'url' =" in result.skipped[0] and "absolute http(s) URL" in result.skipped[1]
    feeds = load_feeds(tmp_path / "feeds.toml")
    assert [f.title for f in feeds] == ["Good", "Title"]  # control characters dropped from titles


def test_cli_reports_the_counts_and_takes_allow_private(tmp_path, capsys):
    (tmp_path / "s.opml").write_text(
        opml('text="A" xmlUrl="http://10.1.2.3/a.xml"', 'text="B" xmlUrl="https://b.org/b.xml"')
    )
    argv = ["feeds", "import-opml", str(tmp_path / "s.opml"), "--feeds-file"]
    assert main([*argv, str(tmp_path / "f.toml")]) == 0
    out = capsys.readouterr().out
    assert "skipped http://10.1.2.3/a.xml: private address 10.1.2.3" in out
    assert "1 added, 0 already configured, 1 skipped" in out
    assert main([*argv, str(tmp_path / "f.toml"), "--allow-private"]) == 0
    assert "1 added, 1 already configured, 0 skipped" in capsys.readouterr().out
