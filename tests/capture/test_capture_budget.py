"""A run makes at most CROVIA_CAPTURE_PAGES plain captures and CROVIA_BROWSER_PAGES browser
captures (issue 45): the rest stay due, the next runs take them, the run record says how many
were deferred, and no page is captured twice while another waits. Real crawls on loopback of a
listing of six JavaScript articles in browser mode.
"""

from __future__ import annotations

import subprocess
from collections import Counter

import pytest

from tests.capture.browser_site import APP_JS, HTML, article_json, page
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, leaves, run_crawl, run_records
from tests.feedserver import FeedServer, Reply

pytestmark = pytest.mark.slow
NAMES = [f"story-{n}" for n in range(6)]
BUDGET = ("-s", "CROVIA_CAPTURE_PAGES=4", "-s", "CROVIA_BROWSER_PAGES=2")
CAPTURE_SETTINGS = ("-s", "CROVIA_POLITE_DELAYS=0", "-s", "DOWNLOAD_DELAY=0")


def site(server: FeedServer) -> str:
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    cards = "".join(f'<li class="card"><a href="/articles/{n}">{n}</a></li>' for n in NAMES)
    server.script("news", Reply(body=f"<html><body><ul>{cards}</ul></body></html>".encode()))
    shell = page("Story", "<div id='more'></div>", "<script src='/static/app.js'></script>")
    for name in NAMES:
        server.script(f"articles/{name}", Reply(body=shell, headers=HTML))
    server.script("static/app.js", Reply(body=APP_JS, headers={"Content-Type": "text/javascript"}))
    server.script("api/article.json", article_json("The same sentence on every page."))
    return (
        f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
        'capture = "browser"\nselectors = { item = "li.card", link = "a", title = "a" }\n'
    )


def captured(tmp_path) -> tuple[Counter, Counter]:
    plain, browser = Counter(), Counter()
    for envelope in leaves(tmp_path):
        if envelope["axiom_type"] == "AX.CAPTURE":
            name = envelope["body"]["url"].rsplit("/", 1)[1]
            (browser if envelope["body"].get("mode") else plain)[name] += 1
    return plain, browser


def test_captures_over_the_budget_wait_for_the_next_runs(tmp_path):
    with FeedServer() as server:
        first = run_crawl(tmp_path, site(server), *BUDGET)
        assert first.returncode == 0, first.stderr[-3000:]
        plain, browser = captured(tmp_path)
        assert sorted(plain) == NAMES[:4] and set(plain.values()) == {1}  # in the order issued
        assert sorted(browser) == NAMES[:2]  # following their plain twins
        assert run_records(tmp_path)[-1]["problems"] == [
            "2 plain page captures deferred to the next run: over CROVIA_CAPTURE_PAGES (4 a run),"
            " the newest taken first",
            "4 browser page captures deferred to the next run: over CROVIA_BROWSER_PAGES (2 a"
            " run), the newest taken first",
        ]
        for _ in range(2):  # cron's `crovia capture`: only what is due
            again = subprocess.run(
                [str(BIN / "crovia"), "capture", *CAPTURE_SETTINGS, *BUDGET],
                cwd=PROJECT_ROOT, env=crawl_env(tmp_path), capture_output=True, text=True,
                timeout=300,
            )  # fmt: skip
            assert again.returncode == 0, again.stderr[-3000:]
    plain, browser = captured(tmp_path)
    assert plain == Counter(dict.fromkeys(NAMES, 1))  # each page once, none twice
    assert browser == Counter(dict.fromkeys(NAMES, 1))
    assert run_records(tmp_path)[-1]["problems"] == []
