"""Issue 43, observation 3: `crovia schedule --metrics-port` crashed (`KeyError: 'CROVIA_PUBLISH_DIR
is not a path setting'`) whenever CROVIA_PUBLISH_DIR was set, the pairing docs/operations.md
recommends; the metrics test unset the variable first. Here it is set, relative (taken from the
project root, as every path setting is), and the scrape says publishing is configured.

The class: a path the table holds is read as a path whatever it is (a file, a directory, optional
or not); `path_default` takes every one of them, each set in the environment.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from crovia_spider.options import OPTIONS, PATH_OPTIONS, path_default, project_root
from tests.schedule.conftest import write_schedule


def test_schedule_serves_metrics_with_the_publish_dir_set(tmp_path, fake_env, start_scheduler):
    publish = tmp_path / "public"
    schedule = write_schedule(
        tmp_path / "schedule.toml",
        '[[jobs]]\nname = "publish"\npublish = true\nevery = "1h"\n',
    )
    env = dict(fake_env, CROVIA_PUBLISH_DIR=str(publish))
    scheduler = start_scheduler(["--config", str(schedule), "--metrics-port", "0"], env)
    (line,) = scheduler.wait_for(r"metrics at http://127\.0\.0\.1:\d+/metrics|Error|error")
    assert "metrics at" in line, scheduler.log()
    url = re.search(r"http://\S+", line)[0]
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    got = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert got["crovia_stage_configured", (("stage", "published"),)] == 1
    assert scheduler.stop() == 0
    assert "Traceback" not in scheduler.log()


@pytest.mark.parametrize("name", sorted(PATH_OPTIONS))
def test_every_path_setting_is_read_as_a_path_when_set(name, monkeypatch):
    monkeypatch.setenv(name, "some/where")
    assert path_default(name) == project_root() / "some" / "where"


def test_the_path_settings_are_every_setting_that_names_a_file_or_directory():
    named = {name for name in OPTIONS if name.endswith(("_FILE", "_DIR"))}
    assert named <= PATH_OPTIONS, named - PATH_OPTIONS
    assert {"CROVIA_PUBLISH_DIR", "CROVIA_METRICS_FILE"} <= PATH_OPTIONS


def test_an_optional_path_left_empty_is_no_path(monkeypatch):
    from crovia_spider.options import optional_path

    monkeypatch.setenv("CROVIA_PUBLISH_DIR", "")
    assert optional_path("CROVIA_PUBLISH_DIR") is None
    monkeypatch.setenv("CROVIA_PUBLISH_DIR", "public")
    assert optional_path("CROVIA_PUBLISH_DIR") == project_root() / "public"
    assert isinstance(optional_path("CROVIA_PUBLISH_DIR"), Path)
