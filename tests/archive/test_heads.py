"""The response head a WARC export replays (crovia_spider/archive/heads.py) and the page titles
it names (crovia_spider/archive/pages.py), on kept bytes alone."""

from __future__ import annotations

import pytest

from crovia_spider.archive.heads import replay_head
from crovia_spider.archive.pages import page_title
from crovia_spider.exceptions import ExportRefused


def lines(kept: bytes, length: int) -> list[str]:
    return replay_head(kept, length, "capture record X").to_str().splitlines()


def test_a_decoded_body_loses_its_codings_and_keeps_them_as_originals():
    kept = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
        b"Transfer-Encoding: chunked\r\nVary: Accept-Encoding\r\n\r\n"
    )
    assert lines(kept, 1234) == [
        "HTTP/1.1 200 OK",
        "Content-Type: text/html",
        "Vary: Accept-Encoding",
        "X-Crovia-Original-Content-Encoding: gzip",
        "X-Crovia-Original-Transfer-Encoding: chunked",
        "Content-Length: 1234",
    ]


def test_a_changed_length_is_kept_as_the_original():
    kept = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Encoding: br\r\n\r\n"
    assert lines(kept, 42) == [
        "HTTP/1.1 200 OK",
        "X-Crovia-Original-Content-Encoding: br",
        "Content-Length: 42",
        "X-Crovia-Original-Content-Length: 10",
    ]


def test_a_head_that_already_tells_the_truth_is_unchanged():
    kept = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\n"
    assert lines(kept, 9) == [
        "HTTP/1.1 404 Not Found",
        "Content-Type: text/plain",
        "Content-Length: 9",
    ]


def test_repeated_codings_are_all_removed_and_all_kept():
    kept = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Encoding: br\r\n\r\n"
    assert lines(kept, 0) == [
        "HTTP/1.1 200 OK",
        "X-Crovia-Original-Content-Encoding: gzip, br",
        "Content-Length: 0",
    ]


@pytest.mark.parametrize("kept", [b"", b"not a head\r\n\r\n", b"HTTP/1.1 OK\r\n\r\n"])
def test_a_head_that_is_no_response_is_refused_naming_the_record(kept):
    with pytest.raises(ExportRefused, match="capture record X: the kept response head"):
        replay_head(kept, 0, "capture record X")


@pytest.mark.parametrize(
    ("body", "content_type", "title"),
    [
        (b"<html><head><title> A\n  page </title></head></html>", "text/html", "A page"),
        ("<title>Café</title>".encode("latin-1"), "text/html; charset=iso-8859-1", "Café"),
        (b"<meta charset='utf-8'><title>Caf\xc3\xa9</title>", "text/html", "Café"),
        (b"<html><body>no title</body></html>", "text/html", ""),
        (b"<title>in a PDF?</title>", "application/pdf", ""),
        (b"<title>x</title>", "", ""),
    ],
)
def test_page_title(body, content_type, title):
    assert page_title(body, content_type) == title
