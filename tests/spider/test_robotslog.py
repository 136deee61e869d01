"""The robots.txt log filter: network failures become one WARNING line, other errors stay intact."""

from __future__ import annotations

import logging
import sys

from scrapy.exceptions import CannotResolveHostError

from crovia_spider.robotslog import ROBOTS_LOGGER, NetworkFailureFilter, QuietRobotsNetworkErrors


def _record(exc: BaseException) -> logging.LogRecord:
    try:
        raise exc
    except type(exc):
        exc_info = sys.exc_info()
    return logging.LogRecord(ROBOTS_LOGGER, logging.ERROR, __file__, 1, "Error", (), exc_info)


def test_a_network_failure_loses_its_traceback_and_becomes_a_warning():
    record = _record(CannotResolveHostError("DNS lookup failed: example.org"))
    assert NetworkFailureFilter().filter(record)
    assert record.exc_info is None and record.levelname == "WARNING"
    assert "Traceback" not in logging.Formatter().format(record)


def test_any_other_error_keeps_scrapys_full_report():
    record = _record(ValueError("robots.txt parser broke"))
    assert NetworkFailureFilter().filter(record)
    assert record.levelno == logging.ERROR
    assert "Traceback" in logging.Formatter().format(record)


def test_the_extension_installs_the_filter_on_the_robots_logger():
    extension = QuietRobotsNetworkErrors()
    try:
        assert extension.filter in logging.getLogger(ROBOTS_LOGGER).filters
    finally:
        logging.getLogger(ROBOTS_LOGGER).removeFilter(extension.filter)
