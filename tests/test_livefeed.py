"""A profiled program's live feed, read by its real consumers while the program runs: the
OpenMetrics file rewritten every few steps (node_exporter's textfile collector) and the
port served by prometheus_client, both parsed by prometheus_client's own OpenMetrics
parser. Process 1 planted slow for a stretch of steps is named the slowest while it is,
and the step time shows it; a port in use or a folder that is not there is one line at
start, before any process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.conftest import ROOT, podscale

STEPS, SLOW = 500, (100, 300)  # process 1 sleeps 20 ms before each step in [100, 300)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _values(text: str) -> dict[str, float]:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    return {s.name: s.value for f in text_string_to_metric_families(text)
            for s in f.samples}


def test_the_feed_is_read_while_the_program_runs(tmp_path):
    feed, port = tmp_path / "feed.prom", _port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "podscale", "profile", "--hosts", "2", "--metrics-file",
         str(feed), "--metrics-port", str(port), "--metrics-every", "5", "--out",
         str(tmp_path / "o"), "tests/programs/train.py", "--steps", str(STEPS), "--slow",
         f"1:{SLOW[0]}:0.02:{SLOW[1]}"], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    seen, served = [], None
    while proc.poll() is None:  # the run's own clock: until the program ends
        time.sleep(0.1)
        if not feed.exists():
            continue
        v = _values(feed.read_text())
        seen.append(v)
        # scraped once the step time's window (the last 50 intervals) is mostly slow steps
        slow_now = SLOW[0] + 40 < v["podscale_steps_total"] < SLOW[1] - 20
        if served is None and slow_now and v.get("podscale_slowest_process") == 1:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={
                "Accept": "application/openmetrics-text; version=1.0.0"})
            served = _values(urllib.request.urlopen(req, timeout=5).read().decode())
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert "live feed stopped" not in err, err[-2000:]
    steps = [v["podscale_steps_total"] for v in seen]
    assert steps == sorted(steps) and len(set(steps)) > 3, steps  # rewritten as it ran
    slow = [v for v in seen if SLOW[0] + 20 < v["podscale_steps_total"] < SLOW[1] - 20]
    assert slow and max(v["podscale_step_time_seconds"] for v in slow) > 0.015, slow
    assert any(v.get("podscale_slowest_process") == 1 for v in slow), slow
    assert served is not None and served["podscale_step_time_seconds"] > 0.01, served
    assert 0 <= served["podscale_hang_suspicion_ratio"] < 1
    last = _values(feed.read_text())  # the last word: every step the program made
    assert last["podscale_steps_total"] == STEPS and 0 < last["podscale_goodput_ratio"] <= 1


def test_a_port_in_use_or_no_folder_is_one_line_at_start(tmp_path):
    with socket.socket() as s:
        s.bind(("", 0))
        s.listen()
        port = s.getsockname()[1]
        res = podscale("profile", "--hosts", "2", "--metrics-port", str(port), "--out",
                       str(tmp_path), "tests/programs/train.py")
    assert res.returncode == 2 and f"--metrics-port {port}:" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())
    res = podscale("profile", "--metrics-file", str(tmp_path / "no" / "f.prom"), "--out",
                   str(tmp_path), "tests/programs/train.py")
    assert res.returncode == 2 and "no folder" in res.stderr, res.stderr
    assert os.listdir(tmp_path) == [] and not Path(tmp_path / "no").exists()
