"""A profiled program's live feed: OpenMetrics text of its steps as they complete, rewritten
atomically every N steps to a file (node_exporter's textfile collector reads it) and/or
served on a port by ``prometheus_client``: the step time (median of the last 50
step-to-step intervals), steps, throughput (``--tokens-per-step``), HFU (XLA's FLOPs of the
step) and MFU (``--flops-per-step``) against the device's peak, goodput (steps x the median
step over the time since the first step's end), and on process 0 the slowest process, how
far behind it is and the hang suspicion (time without a completed call over the hang
limit). It is told of each ready call on the watcher thread: nothing here runs on the
program's thread, and a failure stops the feed, never the program."""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podscale.core.openmetrics import Family, text, write_atomically

WINDOW = 50  # step-to-step intervals the step time is the median of
CHOOSE_EVERY = 16  # readies between re-choosing the step (the computation most called)
PERIOD_S = 1.0  # the feed is rewritten this often too, steps or not


@dataclass(frozen=True)
class FeedOptions:
    """Where the feed goes and what it can compute."""

    path: str | None = None  # "{process}" in it: each process its own file, else process 0
    port: int | None = None  # process 0 serves it
    every: int = 10  # steps between rewrites of the file
    step: str | None = None
    tokens_per_step: int | None = None
    flops_per_step: float | None = None
    peak_tflops: float | None = None


class LiveFeed:
    """The feed of one process (see the module doc)."""

    def __init__(self, options: FeedOptions, process: Callable[[], int],
                 peers: Callable[[], tuple[dict, dict, float] | None]) -> None:
        self.o, self.process, self.peers = options, process, peers
        self.peak: float | None = None  # FLOP/s a device: read at the first rewrite
        self.started = time.monotonic()
        self.first_end: float | None = None
        self.intervals: deque[float] = deque(maxlen=WINDOW)
        self.steps, self.readies = 0, 0
        self.last: float | None = None
        self.step_name: str | None = options.step
        self.step_flops: float | None = None
        self.shown: list[Family] = []
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self.dead = False
        self.server: Any = None

    def observe(self, comp: Any, comps: list, ready_us: int, index: int) -> None:
        """One ready call (the watcher thread); a failure here ends the feed."""
        if self.dead:
            return
        try:
            self._observe(comp, comps, ready_us)
        except Exception as exc:  # noqa: BLE001 - the feed's failure, never the program's
            self._stopped(exc)

    def _stopped(self, exc: Exception) -> None:
        from podscale.core import lines

        if not self.dead:
            self.dead = True  # said once; nothing more is written or served
            lines.say(f"podscale: the live feed stopped: {type(exc).__name__}: {exc}",
                      err=True)

    def _observe(self, comp: Any, comps: list, ready_us: int) -> None:
        self.readies += 1
        if self.o.step is None and (self.step_name is None or
                                    self.readies % CHOOSE_EVERY == 0):
            self.step_name = max(comps, key=lambda c: c.calls).name
        if comp.name != self.step_name:
            return
        now = ready_us / 1e6
        if self.last is not None:
            self.intervals.append(now - self.last)
        self.last, self.steps = now, self.steps + 1
        self.step_flops = getattr(comp, "flops", None)
        if self.first_end is None:
            self.first_end = time.monotonic()
        if self.steps % max(self.o.every, 1) == 0:
            self.publish()

    def _peak(self) -> float | None:
        """Each device's peak FLOP/s: ``--peak-tflops``, else read from the device (after
        the program's first computation: JAX's backend is the program's by then)."""
        if self.o.peak_tflops:
            return self.o.peak_tflops * 1e12
        from podscale.startup.peaks import device_peaks

        tflops = device_peaks().get("bf16_tflops")
        return float(tflops) * 1e12 if tflops else None

    def families(self) -> list[Family]:
        """The feed's figures now."""
        if self.peak is None and (self.step_flops or self.o.flops_per_step):
            self.peak = self._peak() or 0.0
        p = {"process": str(self.process()), "host": os.uname().nodename,
             "step": self.step_name or ""}
        kept = list(self.intervals)  # a copy: the watcher thread appends meanwhile
        step = statistics.median(kept) if kept else float("nan")
        out = [Family("podscale_step_time_seconds", "gauge", "median of the last step-to-"
                      "step intervals", "seconds", ((p, step),)),
               Family("podscale_steps", "counter", "steps completed", "",
                      ((p, float(self.steps)),))]
        if self.o.tokens_per_step and kept:
            out.append(Family("podscale_throughput_tokens_per_second", "gauge",
                              "--tokens-per-step over the step time", "tokens_per_second",
                              ((p, self.o.tokens_per_step / step),)))
        for name, flops, what in (("podscale_hfu_ratio", self.step_flops, "XLA's FLOPs of "
                                   "the step"), ("podscale_mfu_ratio", self.o.flops_per_step,
                                                 "--flops-per-step")):
            if flops and self.peak and kept:
                out.append(Family(name, "gauge", f"{what} per device over the step time, "
                                  "over the device's peak", "ratio",
                                  ((p, flops / step / self.peak),)))
        if self.first_end is not None and kept:
            span = time.monotonic() - self.started
            out.append(Family("podscale_goodput_ratio", "gauge", "steps x the median step "
                              "over the time since attach", "ratio",
                              ((p, min(1.0, self.steps * step / span) if span else 0.0),)))
        return out + self._job(p)

    def _job(self, p: dict) -> list[Family]:
        """Process 0's view of the job from the roll-call's heartbeats."""
        seen = self.peers()
        if not seen:
            return []
        beats, progress, limit = seen
        done = {int(k): int(b["completed"]) for k, b in beats.items()}
        # in step, the process the others wait for is as far along as they are (each beat
        # its count at its own moment): within a call of the fewest, the one outside any
        # call, in the program's own Python, while the others sit in theirs (dispatching
        # into a collective, or waiting on its result); else the fewest completed calls
        least = min(done.values())
        slow = min(done, key=lambda k: (done[k] - least > 1,
                                        beats[k].get("state") != "python", done[k], k))
        quiet = time.time() - max((t for _, t in progress.values()), default=time.time())
        return [Family("podscale_slowest_process", "gauge", "the process the others wait "
                       "for (in its own Python while they sit in calls), else the one with "
                       "the fewest completed calls", "", ((p, float(slow)),)),
                Family("podscale_slowest_lag_calls", "gauge", "completed calls the slowest "
                       "process is behind the fastest", "",
                       ((p, float(max(done.values()) - done[slow])),)),
                Family("podscale_progress_age_seconds", "gauge", "seconds since any "
                       "process completed a call", "seconds", ((p, quiet),)),
                Family("podscale_hang_suspicion_ratio", "gauge", "seconds since any process "
                       "completed a call over the hang limit (1: the roll is called)",
                       "ratio", ((p, quiet / limit if limit else 0.0),))]

    def publish(self) -> None:
        """Rewrite the file and the served text (a failure ends the feed, said once)."""
        if self.dead:
            return
        try:
            with self._writing:  # the watcher's and the keeper's rewrites, one at a time
                self._publish()
        except Exception as exc:  # noqa: BLE001 - the feed's failure, never the program's
            self._stopped(exc)

    def _publish(self) -> None:
        families = self.families()
        body = text(families)
        with self._lock:
            self.shown = families
        if self.o.path and ("{process}" in self.o.path or self.process() == 0):
            write_atomically(Path(self.o.path.replace("{process}", str(self.process()))),
                             body)

    def keep(self) -> None:
        """Rewrite every :data:`PERIOD_S` too, once steps began: a stalled job's feed shows
        the hang suspicion growing while no step completes (its own daemon thread)."""
        while True:
            time.sleep(PERIOD_S)
            if self.dead:
                return
            if self.steps:
                self.publish()

    def serve(self) -> None:
        """Serve the feed on ``options.port`` with ``prometheus_client`` (process 0; its
        own daemon thread): a collector that gives the families of the last rewrite."""
        from prometheus_client import CollectorRegistry, start_http_server
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        feed = self

        class Collector:
            def collect(self) -> Any:
                with feed._lock:
                    families = list(feed.shown)
                for f in families:
                    keys = sorted({k for labels, _ in f.samples for k in labels})
                    kind = CounterMetricFamily if f.kind == "counter" else GaugeMetricFamily
                    metric = kind(f.name, f.help, labels=keys, unit=f.unit)
                    for labels, value in f.samples:
                        metric.add_metric([str(labels.get(k, "")) for k in keys], value)
                    yield metric

        registry = CollectorRegistry(auto_describe=False)
        registry.register(Collector())
        self.server = start_http_server(int(self.o.port or 0), registry=registry)


def observe(log: Any, anomalies: Any, options: FeedOptions | None,
            process: Callable[[], int], peers: Callable[[], tuple[dict, dict, float] | None],
            serves: bool) -> LiveFeed | None:
    """Tell the anomaly captures and the live feed (where asked for: its feed, served
    where ``serves`` and a port is asked for) of each ready call."""
    seen = [anomalies.observe] if anomalies is not None else []
    feed = None
    if options is not None:
        feed = LiveFeed(options, process, peers)
        seen.append(feed.observe)
        threading.Thread(target=feed.keep, name="podscale-feed", daemon=True).start()
        if options.port and serves:
            feed.serve()
    if len(seen) == 1:
        log.on_ready = seen[0]
    elif seen:
        def both(*a: Any) -> None:
            for told in seen:
                told(*a)

        log.on_ready = both
    return feed


def job_view(rollcall: Any) -> tuple[dict, dict, float] | None:
    """Process 0's last heartbeats of every process, when each last completed a call and
    the hang limit (None: none yet, or not process 0)."""
    beats = getattr(rollcall, "beats", None)
    return (beats, dict(rollcall.progress), rollcall.limit()) if beats else None
