"""The log filters: network failures become one INFO line (the summary reports the feed), a
refused crawl is reported once."""

from __future__ import annotations

import logging
import sys

from scrapy.exceptions import CannotResolveHostError

from crovia_spider.exceptions import ConfigError, CrawlRefused
from crovia_spider.runs.logfilters import (
    FILTERS,
    AlreadyReportedFilter,
    NetworkFailureFilter,
    install,
)
from tests.crawl import run_crawl


def _record(exc: BaseException, name: str = "scrapy.downloadermiddlewares.robotstxt"):
    try:
        raise exc
    except type(exc):
        exc_info = sys.exc_info()
    return logging.LogRecord(name, logging.ERROR, __file__, 1, "Error", (), exc_info)


def test_a_network_failure_loses_its_traceback_and_goes_down_to_info():
    record = _record(CannotResolveHostError("DNS lookup failed: example.org"))
    assert NetworkFailureFilter().filter(record)
    assert record.exc_info is None and record.levelname == "INFO"
    assert "Traceback" not in logging.Formatter().format(record)


def test_any_other_error_keeps_scrapys_full_report():
    record = _record(ValueError("robots.txt parser broke"))
    assert NetworkFailureFilter().filter(record)
    assert record.levelno == logging.ERROR
    assert "Traceback" in logging.Formatter().format(record)


def test_asyncio_second_report_of_a_refused_crawl_is_dropped_and_nothing_else():
    assert not AlreadyReportedFilter().filter(_record(CrawlRefused("busy"), "asyncio"))
    assert not AlreadyReportedFilter().filter(
        _record(ConfigError("feeds.toml: entry 2"), "asyncio")
    )
    assert AlreadyReportedFilter().filter(_record(RuntimeError("real bug"), "asyncio"))


def test_install_puts_each_filter_on_its_logger_once():
    try:
        install()
        install()
        for name, log_filter in FILTERS:
            assert logging.getLogger(name).filters.count(log_filter) == 1
    finally:
        for name, log_filter in FILTERS:
            logging.getLogger(name).removeFilter(log_filter)


def test_a_bad_feed_list_is_reported_once_without_a_traceback(tmp_path):
    proc = run_crawl(tmp_path, '[[feeds]]\nvendor = "Bad Id"\nurl = "https://example.org/f"\n')
    assert proc.returncode != 0
    assert "'vendor' = 'Bad Id'" in proc.stderr
    assert "Traceback" not in proc.stderr
