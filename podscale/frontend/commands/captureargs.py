"""``podscale attach``'s own options, shared by ``attach`` and ``profile`` (the step, capture
windows, hangs) and passed on by the job generators (``--attach-args`` of ``sbatch``,
``k8s``, ``tpu``): declared, and turned into a :class:`CaptureOptions`."""

from __future__ import annotations

import argparse
from dataclasses import fields

from podscale.core.errors import UsageError
from podscale.frontend.captureoptions import CaptureOptions
from podscale.frontend.commands.argtypes import seconds


def add_capture_args(p: argparse.ArgumentParser) -> None:
    """Options shared by ``profile`` and ``attach``: the step, capture windows, hangs."""
    p.add_argument("--step", default=None,
                   help="the step computation's name (default: the dominant recurring one; "
                        "windows count the calls of the one with the most calls x work)")
    p.add_argument("--profile-steps", default=None, metavar="A:B",
                   help="capture a profiler trace of steps A to B-1 on every process")
    p.add_argument("--profile-every", type=int, default=None, metavar="N",
                   help="capture --profile-length steps every N steps on every process")
    p.add_argument("--profile-length", type=int, default=None, metavar="K",
                   help="steps per capture with --profile-every (default 2)")
    p.add_argument("--profile-anomalies", type=int, default=0, metavar="K",
                   help="capture K steps on every process after a step slower than "
                        "median + 3 MAD (and 4x the median) of the last 50; at most 3")
    p.add_argument("--tokens-per-step", type=int, default=None, metavar="N",
                   help="what one step processes, for throughput (default: from the "
                        "step's inputs: token ids as tokens, labels or the leading "
                        "dimension as samples)")
    p.add_argument("--peak-tflops", type=float, default=None, metavar="F",
                   help="each device's peak TFLOP/s, for MFU where podscale knows none "
                        "(the CPU; TPUs are read from the device)")
    p.add_argument("--flops-per-step", type=float, default=None, metavar="F",
                   help="the program's own count of a step's FLOPs per device (MaxText's "
                        "formula), said beside XLA's count with its TFLOP/s and MFU")
    p.add_argument("--metrics-file", default=None, metavar="F",
                   help="a live feed of the steps: OpenMetrics rewritten atomically every "
                        "--metrics-every steps (node_exporter's textfile collector); "
                        "'{process}' in F: each process its own, else process 0's")
    p.add_argument("--metrics-port", type=int, default=None, metavar="P",
                   help="the live feed served on this port by process 0 "
                        "(prometheus_client: pip install 'podscale[metrics]')")
    p.add_argument("--metrics-every", type=int, default=10, metavar="N",
                   help="steps between rewrites of the live feed")
    p.add_argument("--hang-timeout", type=hang_timeout, default=None, metavar="S|auto|off",
                   help="end the job, naming who stopped where, when no process completes "
                        "a call for S seconds while some wait and none compiles (default "
                        "auto: the larger of 60 s and 10x the p99 step; off: never)")


def hang_timeout(text: str) -> float | None:
    """An argparse type: seconds > 0; ``auto`` (None); ``off`` (0: no roll-call)."""
    if text == "auto":
        return None
    return 0.0 if text == "off" else seconds(text)


def capture_of(args: argparse.Namespace) -> CaptureOptions:
    """The options :func:`add_capture_args` declared, as parsed (malformed windows refused
    in one line)."""
    given = {f.name: getattr(args, f.name) for f in fields(CaptureOptions)}
    if given["profile_length"] is not None and given["profile_every"] is None:
        raise UsageError(f"--profile-length {given['profile_length']}: the length of each "
                         "capture of --profile-every N; give --profile-every too")
    if given["profile_length"] is None:
        given.pop("profile_length")
    return CaptureOptions(**given)


def add_attach_args(p: argparse.ArgumentParser) -> None:
    """``--attach-args`` of the job generators (``sbatch``, ``k8s``, ``tpu``)."""
    p.add_argument("--attach-args", default="", metavar="OPTIONS",
                   help="with --program: podscale attach's own options on every host, e.g. "
                        "\"--profile-steps 100:103 --hang-timeout 600\"")


def attach_options(text: str, program: str | None) -> tuple[list[str], bool]:
    """``--attach-args`` checked as ``podscale attach`` checks them (one-line errors):
    the options again, and whether they ask for a step window
    (:attr:`CaptureOptions.step_window`)."""
    import shlex

    from podscale.frontend.cli import Parser

    if not text.strip():
        return [], False
    if program is None:
        raise UsageError("--attach-args are podscale attach's options: give --program too")
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"bad --attach-args: {exc}") from None
    if any(w.split("=")[0] == "--run-dir" for w in words):
        raise UsageError("bad --attach-args: the job's run directory is --run-dir's own")
    p = Parser(prog="podscale attach")
    add_capture_args(p)
    try:
        capture = capture_of(p.parse_args(words))
    except UsageError as exc:
        raise UsageError(f"bad --attach-args: {exc}") from None
    return capture.argv(), capture.step_window
