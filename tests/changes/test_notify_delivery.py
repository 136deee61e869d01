"""Webhook delivery: the specification's signed content, the fetch policy on targets, a time
bound on every request, no redirect followed, and a crawl SIGKILLed while delivering loses
nothing and sends nothing under another id (Standard Webhooks; docs/watching.md)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import subprocess
import time
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from standardwebhooks import Webhook

from crovia_spider.notify.keys import public_key_text, signature_header, signed_content
from crovia_spider.notify.send import post, target_refusal
from ledger.keys import generate_signing_key
from tests.changes.receiver import Answer, Receiver, verify
from tests.changes.test_six_rounds import environment
from tests.changes.vendor import script_vendor, until_due_again
from tests.crawl import BIN, FAST_SETTINGS, PROJECT_ROOT, run_crawl
from tests.feedserver import FeedServer

# The specification's example: its message id, timestamp and payload.
SPEC_ID = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
SPEC_STAMP = 1674087231
SPEC_BODY = (
    b'{"type":"contact.created","timestamp":"2022-11-03T20:26:10.344522Z","data":{"id":'
    b'"1f81eb52-5198-4599-803e-771906343485"}}'
)
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # the standardwebhooks library's test secret
NOBODY = lambda host, port: False  # noqa: E731 - no non-global target allowed


def test_the_signed_content_is_the_specifications(tmp_path):
    assert signed_content(SPEC_ID, SPEC_STAMP, SPEC_BODY) == (
        f"{SPEC_ID}.{SPEC_STAMP}.".encode() + SPEC_BODY
    )
    key = generate_signing_key(tmp_path / "notify.key")
    header = signature_header(key, SPEC_ID, SPEC_STAMP, SPEC_BODY, SECRET)
    v1, v1a = header.split(" ")
    moment = datetime.fromtimestamp(SPEC_STAMP, tz=UTC)
    assert v1 == Webhook(SECRET).sign(SPEC_ID, moment, SPEC_BODY.decode())
    signature = base64.b64decode(v1a.removeprefix("v1a,"))
    key.verify_key.verify(signed_content(SPEC_ID, SPEC_STAMP, SPEC_BODY), signature)
    assert public_key_text(key) == "whpk_" + base64.b64encode(bytes(key.verify_key)).decode()


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1:9/hook", "loopback"),
        ("http://[::1]:9/hook", "loopback"),
        ("http://10.1.2.3/hook", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::ffff:192.168.0.1]/hook", "private"),
        ("ftp://hooks.example.org/hook", "is not http or https"),
    ],
)
def test_a_target_that_is_not_global_is_refused_unless_allowed(url, kind):
    why, _ = target_refusal(url, NOBODY)  # addresses as data: nothing is connected to
    assert why is not None and kind in why
    attempt = post(url, b"{}", {}, 1.0, NOBODY)
    assert attempt.refused and not attempt.ok and kind in attempt.error


def test_a_redirect_is_a_failure_and_is_not_followed():
    with Receiver() as target, Receiver() as hook:
        # 307: a client that followed it would POST the same body to `target`
        hook.answers = [Answer(307, headers={"Location": target.url})]
        attempt = post(hook.url, b"{}", {}, 5.0, lambda host, port: True)
    assert attempt.status == 307 and not attempt.ok and "not followed" in attempt.error
    assert target.deliveries == []


def test_each_request_is_bounded_in_time():
    with Receiver([Answer(200, delay=20)]) as slow:
        started = time.monotonic()
        attempt = post(slow.url, b"{}", {}, 1.0, lambda host, port: True)
        took = time.monotonic() - started
    assert not attempt.ok and "within 1s" in attempt.error
    assert took < 10  # bounded by the timeout, whatever the receiver does


@pytest.mark.slow
def test_a_crawl_killed_while_delivering_loses_nothing(tmp_path):
    """The receiver holds the first delivery; the crawl is SIGKILLed; `crovia notify` then
    delivers every event, the held one again under the same webhook-id."""
    with FeedServer() as server, Receiver([Answer(200, delay=60), Answer(200)]) as hook:
        feeds = script_vendor(server)
        (tmp_path / "notify.toml").write_text(
            f'allow_private = ["127.0.0.1"]\n\n[[webhooks]]\nurl = "{hook.url}"\n'
        )
        env = environment(tmp_path)
        first = run_crawl(tmp_path, feeds, env=env)
        assert first.returncode == 0, first.stderr[-3000:]
        until_due_again()  # the second crawl captures the edit
        crawl = subprocess.Popen(
            [str(BIN / "scrapy"), "crawl", "vendor_press", *FAST_SETTINGS],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert hook.wait_for(1, timeout=120), "the crawl delivered nothing"
        finally:
            os.kill(crawl.pid, signal.SIGKILL)
            crawl.wait(timeout=30)
        held = hook.deliveries[0]
        again = subprocess.run(
            [str(BIN / "crovia"), "notify", "--json"],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert json.loads(again.stdout)["waiting"] == 0
    ids = [d.headers["webhook-id"] for d in hook.deliveries]
    kinds = [json.loads(d.body)["type"] for d in hook.deliveries]
    assert kinds == ["crovia.change.new", "crovia.change.new", "crovia.change.edited"]
    assert ids[0] == ids[1] == held.headers["webhook-id"] and ids[2] != ids[0]
    assert hook.deliveries[1].body == held.body
    whpk = subprocess.run(
        [str(BIN / "crovia"), "notify", "key"], cwd=PROJECT_ROOT, env=env,
        capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    for delivery in hook.deliveries:
        verify(delivery, whpk, now=delivery.at)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('[[webhooks]]\nurl = "ftp://x.example/"\n', "absolute http"),
        ('[[webhooks]]\nurl = "https://x.example/"\nevents = ["edit"]\n', "no event kind"),
        ('[[webhooks]]\nurl = "https://x.example/"\nvendors = ["A B"]\n', "vendor ids"),
        ('[[webhooks]]\nurl = "https://x.example/"\nsecret = "s"\n', "unknown key"),
        ('apprise = ["not a url"]\n', "not an Apprise URL"),
        ('allow_private = ["127.0.0.1:x"]\n', "HOST or HOST:PORT"),
        ("webhook = []\n", "unknown top-level key"),
    ],
)
def test_a_bad_notify_config_is_refused_naming_file_and_reason(tmp_path, text, reason):
    from crovia_spider.exceptions import ConfigError
    from crovia_spider.notify.config import load_notify

    path = tmp_path / "notify.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=reason) as raised:
        load_notify(path)
    assert str(path) in str(raised.value)


@given(st.binary(max_size=4096))
@settings(max_examples=300, deadline=None)
def test_any_bytes_are_a_notify_config_or_a_config_error(data):
    import tempfile
    from pathlib import Path

    from crovia_spider.exceptions import ConfigError
    from crovia_spider.notify.config import NotifyConfig, load_notify

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "notify.toml"
        path.write_bytes(data)
        with contextlib.suppress(ConfigError):
            assert isinstance(load_notify(path), NotifyConfig)


def test_a_crawl_with_a_bad_notify_config_is_refused_before_it_fetches(tmp_path):
    with FeedServer() as server:
        feeds = script_vendor(server)
        (tmp_path / "notify.toml").write_text('[[webhooks]]\nurl = "htp:/bad url"\n')
        crawled = run_crawl(tmp_path, feeds, env=environment(tmp_path))
        fetched = server.requests_for("feed.xml") + server.requests_for("policies/usage")
    assert crawled.returncode == 1 and "Traceback" not in crawled.stderr
    (refused,) = [line for line in crawled.stderr.splitlines() if "CRITICAL" in line]
    assert refused.endswith(
        f"crawl refused: {tmp_path / 'notify.toml'}: [[webhooks]] entry 1: 'url' ="
        " 'htp:/bad url': an http(s) URL without spaces is required"
    )
    assert fetched == [] and not (tmp_path / "ledger" / "axiom_ledger.jsonl").exists()
