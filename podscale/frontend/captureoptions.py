"""``podscale attach``'s own options as one value (:class:`CaptureOptions`), from the
command line to every process: the step, capture windows, hangs, the training figures'
inputs and the live feed; malformed ones refused in one line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from podscale.attach.livefeed import FeedOptions
    from podscale.attach.windows import Windows


@dataclass(frozen=True)
class CaptureOptions:
    """``podscale attach``'s own options (declared in
    :mod:`podscale.frontend.commands.captureargs`): the step's name, capture windows and
    the hang timeout, from the command line to every process; malformed windows refused
    in one line."""

    step: str | None = None
    profile_steps: str | None = None
    profile_every: int | None = None
    profile_length: int = 2
    profile_anomalies: int = 0
    hang_timeout: float | None = None  # None: auto; 0: off
    #: what a step processes, where its inputs' leading dimension does not say (tokens)
    tokens_per_step: int | None = None
    #: each device's peak FLOP/s in TFLOP/s, where podscale knows none (the CPU)
    peak_tflops: float | None = None
    #: the program's own count of one step's FLOPs per device (MaxText's formula), said
    #: beside XLA's
    flops_per_step: float | None = None
    #: the live feed: OpenMetrics rewritten every ``metrics_every`` steps to a file, served
    #: on a port (:mod:`podscale.attach.livefeed`)
    metrics_file: str | None = None
    metrics_port: int | None = None
    metrics_every: int = 10

    def __post_init__(self) -> None:
        from podscale.core.errors import UsageError

        self.windows()  # malformed windows: refused in one line
        if self.tokens_per_step is not None and self.tokens_per_step < 1:
            raise UsageError(f"--tokens-per-step {self.tokens_per_step}: want N >= 1")
        if self.peak_tflops is not None and not 0 < self.peak_tflops < 1e6:
            raise UsageError(f"--peak-tflops {self.peak_tflops}: want a number > 0 "
                             "(TFLOP/s per device)")
        if self.flops_per_step is not None and not 0 < self.flops_per_step < 1e21:
            raise UsageError(f"--flops-per-step {self.flops_per_step}: want a number > 0 "
                             "(FLOPs per device a step)")
        self._check_feed()

    def _check_feed(self) -> None:
        """The live feed's options: a file whose folder exists, a port free to serve on
        with prometheus_client installed, a positive period; one line each, at start."""
        from podscale.core.errors import UsageError

        if self.metrics_every < 1:
            raise UsageError(f"--metrics-every {self.metrics_every}: want N >= 1 steps")
        if self.metrics_file is not None:
            folder = Path(self.metrics_file).expanduser().parent
            if not folder.is_dir():
                raise UsageError(f"--metrics-file {self.metrics_file}: no folder {folder}")
        if self.metrics_port is None:
            return
        if not 0 < self.metrics_port < 65536:
            raise UsageError(f"--metrics-port {self.metrics_port}: want 1 to 65535")
        try:
            import prometheus_client  # noqa: F401
        except ImportError:
            raise UsageError("--metrics-port serves with prometheus_client: pip install "
                             "'podscale[metrics]'") from None

    def check_port(self) -> None:
        """The port is free (where this process will serve it: the front end, or an
        unsupervised process 0), one line at start if not."""
        from podscale.core.errors import UsageError
        from podscale.core.ports import bind_error

        if self.metrics_port is None:
            return
        why = bind_error("", self.metrics_port)
        if why is not None:
            raise UsageError(f"--metrics-port {self.metrics_port}: {why}")

    def feed(self) -> FeedOptions | None:
        """The live feed asked for (None: none)."""
        if self.metrics_file is None and self.metrics_port is None:
            return None
        from podscale.attach.livefeed import FeedOptions

        return FeedOptions(self.metrics_file, self.metrics_port, self.metrics_every,
                           self.step, self.tokens_per_step, self.flops_per_step,
                           self.peak_tflops)

    @property
    def figures(self) -> dict:
        """What the manifest keeps for the training figures (:mod:`.figures`)."""
        return {"tokens_per_step": self.tokens_per_step, "peak_tflops": self.peak_tflops,
                "flops_per_step": self.flops_per_step}

    def windows(self) -> Windows | None:
        """The capture windows asked for (None: none)."""
        from podscale.attach.windows import Windows

        return Windows.parse(self.profile_steps, self.profile_every, self.profile_length,
                             self.profile_anomalies)

    @property
    def step_window(self) -> bool:
        """A window of steps (``--profile-steps``/``--profile-every``): process 0 saves the
        step's program at its first capture (for ``podscale replay``); an anomaly's capture
        saves none."""
        return bool(self.profile_steps or self.profile_every)

    def argv(self) -> list[str]:
        """The same options again, for ``podscale attach`` on every process."""
        out = ["--step", self.step] if self.step else []
        if self.profile_steps:
            out += ["--profile-steps", self.profile_steps]
        if self.profile_every:
            out += ["--profile-every", str(self.profile_every),
                    "--profile-length", str(self.profile_length)]
        if self.hang_timeout is not None:
            out += ["--hang-timeout", str(self.hang_timeout) if self.hang_timeout else "off"]
        if self.profile_anomalies:
            out += ["--profile-anomalies", str(self.profile_anomalies)]
        if self.tokens_per_step:
            out += ["--tokens-per-step", str(self.tokens_per_step)]
        if self.peak_tflops:
            out += ["--peak-tflops", str(self.peak_tflops)]
        if self.flops_per_step:
            out += ["--flops-per-step", str(self.flops_per_step)]
        if self.metrics_file:
            out += ["--metrics-file", self.metrics_file]
        if self.metrics_port:
            out += ["--metrics-port", str(self.metrics_port)]
        if self.metrics_file or self.metrics_port:
            out += ["--metrics-every", str(self.metrics_every)]
        return out
