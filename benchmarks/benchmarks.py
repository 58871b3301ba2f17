"""asv benchmarks over podscale's workloads.

``time_*``: single-process cases measured by asv itself (one process, a subset of its
``MAX_DEVICES`` CPU devices per case). ``track_*``: multi-process cases — podscale
launches simulated hosts and these return its measured time, bandwidth or fit.
JAX is imported in ``setup``, never at module import; XLA flags are set here, before
JAX starts (asv forks each benchmark from a server that imported this module, never JAX:
see asv.conf.json).

Settings for verdicts that hold on a noisy machine (measured A/A figures in the README):
``time_*`` take ``ROUNDS`` rounds (fresh processes, interleaved with the other benchmarks
and, under ``--interleave-rounds``, with the other commit) of ``REPEAT`` samples, which
asv's Mann-Whitney test in ``asv continuous``/``compare`` sees.

``track_*`` take ``TRACK_ROUNDS`` rounds too: asv re-runs ``setup_cache`` in every round
(interleaved across commits), each round launches podscale ``TRACK_LAUNCHES`` times, and a
track returns one sample per launch as ``{"samples": [...], "number": 1}`` — the shape of
a timing result, which asv's runner keeps as samples (asv >= 0.6, ``asv/runner.py``), so
its statistics apply to multi-host values as to ``time_*``. Rounds only sample anew when
asv runs them as separate passes (the default in asv-made environments); with
``--python=same`` one launch set serves every round, so pass ``-a rounds=1`` there.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

MAX_DEVICES = 4


def _chips_runtime() -> str | None:
    """The JAX runtime of this machine's own chips (tpu, cuda, rocm) where its device nodes
    show some (or ``PODSCALE_ACCELERATORS`` plants) and ``PODSCALE_ASV_PLATFORM`` is not
    ``cpu``; None: the CPU, simulated. No device is opened here (asv imports this module
    in its server)."""
    if os.environ.get("PODSCALE_ASV_PLATFORM", "auto") == "cpu":
        return None
    try:
        from podscale.launch.chips import runtime
    except ImportError:
        try:
            from podscale.launch.chips import signs as runtime
        except ImportError:  # a commit before podscale measured chips: the CPU
            return None
    return runtime()


RUNTIME = _chips_runtime()
#: every benchmark's ``platform`` parameter: CPU and accelerator results are two series
PLATFORM = RUNTIME or "cpu"
if RUNTIME is None:
    _FLAG = f"--xla_force_host_platform_device_count={MAX_DEVICES}"
    if _FLAG not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_FLAG}".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
else:
    os.environ.setdefault("JAX_PLATFORMS", RUNTIME)


def _chip_count() -> int:
    """This machine's chips (asv skips a case that wants more before it starts JAX: a
    chip's runtime takes seconds to start in every benchmark process); ``MAX_DEVICES``
    CPU devices where there are none, or where the count cannot be read here."""
    if RUNTIME is None:
        return MAX_DEVICES
    try:
        from podscale.core.errors import UsageError
        from podscale.launch.chips import detect
    except ImportError:
        return MAX_DEVICES
    try:
        found = detect()
    except UsageError:  # JAX could not list them: setup will say why
        return MAX_DEVICES
    return found.count if found is not None else MAX_DEVICES


CHIPS = _chip_count()
SIZES = [4096, 65536, 1 << 20]
ROUNDS = 6
REPEAT = (5, 10, 10.0)  # (min, max samples per round, max seconds per round)
WARMUP_S = 0.2
TRACK_ROUNDS = 4
#: podscale launches per track_* round; the tests lower it (PODSCALE_ASV_TRACK_LAUNCHES=1)
TRACK_LAUNCHES = int(os.environ.get("PODSCALE_ASV_TRACK_LAUNCHES", "2"))


def _measure(grid):
    """Run ``grid`` in ``TRACK_LAUNCHES`` launches: (samples, summary), or None where its
    layouts do not fit this machine's chips; wrong results fail."""
    from podscale.analysis import load_run, summarize
    from podscale.core.grid import expand
    from podscale.launch.runner import execute

    try:  # asv runs these against older commits too
        from podscale.launch.options import LaunchOptions
    except ImportError:  # before 0.4: launch options as keyword arguments
        options: dict = {"case_timeout": 300}
    else:
        try:
            options = {"options": _launch_options(LaunchOptions, grid)}
        except NotImplementedError:
            return None
    with tempfile.TemporaryDirectory() as out:
        run = execute(expand(grid), Path(out), "asv", progress=None, rounds=TRACK_LAUNCHES,
                      **options)
        loaded = load_run(run)
        # the summary with its facts where the commit has them (Run.table), else a frame
        table = loaded.table() if hasattr(loaded, "table") else \
            summarize(loaded.samples, loaded.cases)
    if getattr(table, "frame", table)["wrong"].sum():
        raise RuntimeError("wrong results")
    return loaded.samples, table


def _launch_options(LaunchOptions, grid):
    """podscale's launch on this machine's chips (skipped, as asv does with
    NotImplementedError, where the grid's layouts do not fit them), else simulated hosts."""
    if RUNTIME is None:
        return LaunchOptions(case_timeout=300)
    from podscale.launch.chips import detect, fits, loopback_opens

    chips = detect()
    if chips is None or not all(fits(chips, h, d) for h in grid.hosts
                                for d in grid.devices_per_host) or not loopback_opens():
        raise NotImplementedError(f"{grid.hosts} hosts x {grid.devices_per_host} devices do "
                                  f"not fit this machine's chips ({chips})")
    return LaunchOptions(case_timeout=300, simulate_cpu=False, chips=chips)


def _stats():
    """(per_iteration, round_medians), wherever the commit under test keeps them."""
    try:
        from podscale.analysis.models.stats import per_iteration, round_medians
    except ImportError:  # before analysis/ had sub-packages
        from podscale.analysis.stats import per_iteration, round_medians
    return per_iteration, round_medians


class Unfit(dict):
    """The cache of a benchmark whose layouts this machine cannot hold: every lookup skips
    the benchmark (asv's SkipNotImplemented, a result of n/a). asv passes no cache where
    setup_cache returned None, so None cannot say it."""

    def __init__(self, why: str = ""):
        super().__init__()
        self.why = why

    def __reduce__(self):  # pickled by asv between its processes
        return (Unfit, (self.why,))

    def __missing__(self, key):
        try:
            from asv_runner.benchmarks.mark import SkipNotImplemented
        except ImportError:  # asv before asv_runner: NotImplementedError skips in setup
            SkipNotImplemented = NotImplementedError
        raise SkipNotImplemented(self.why)


def _podscale_launches(grid, key) -> dict:
    """Per case ``key(row)``: per launch, (median time, GB/s, busbw at that time), and
    under ``("program", key)`` the compiled program's collectives per step and hash; an
    :class:`Unfit` cache where the grid's layouts do not fit this machine's chips."""
    per_iteration, round_medians = _stats()
    measured = _measure(grid)
    if measured is None:
        return Unfit(f"{grid.hosts} hosts x {grid.devices_per_host} devices do not fit "
                     "this machine's chips")
    samples, table = measured
    rm = round_medians(per_iteration(samples)).sort_values("round")
    result = {}
    for r in getattr(table, "frame", table).itertuples():
        times = rm.loc[rm["case_id"] == r.case_id, "median"].tolist()
        result[key(r)] = [(t, r.gbps * r.time_s / t, r.busbw * r.time_s / t) for t in times]
        prog = r.program if isinstance(r.program, dict) else {"collectives": [], "hash": "0"}
        result[("program", key(r))] = (sum(c["count"] for c in prog["collectives"]),
                                       int(prog["hash"], 16) % (1 << 31))
    return result


def _samples(values) -> dict:
    """A track value with its samples (one per launch) in asv's timing-result shape."""
    return {"samples": [float(v) for v in values], "number": 1}


def _tracks(cls):
    """Give every ``track_*`` method of ``cls`` ``TRACK_ROUNDS`` rounds (asv reads
    benchmark attributes from the function), and skip them where their layouts do not
    fit this machine's chips."""
    for name, fn in vars(cls).items():
        if name.startswith("track_"):
            fn.rounds = TRACK_ROUNDS
    def setup(self, cache, *params):
        if cache is None:  # setup_cache found the layouts do not fit: asv skips it
            raise NotImplementedError("its layouts do not fit this machine's chips")

    cls.setup = setup  # (setup_cache stays each class's own: asv keys its cache by source)
    return cls


class _SingleProcess:
    params = (SIZES, [1, 2, 4], ["pmap", "shard_map"], [PLATFORM])
    param_names = ["size", "devices", "variant", "platform"]
    suite = ""
    timeout = 120
    rounds, repeat, warmup_time = ROUNDS, REPEAT, WARMUP_S

    def setup(self, size, devices, variant, platform):
        if devices > CHIPS:  # more than this machine's chips: skipped before JAX starts
            raise NotImplementedError(f"{devices} devices, {CHIPS} here")
        import jax

        from podscale.core.checking import check
        from podscale.core.grid import Grid, expand
        from podscale.core.registry import load_source
        try:
            from podscale.startup import faults, runtime
        except ImportError:  # a commit before the start-up layer
            from podscale.worker import faults, runtime  # type: ignore[no-redef]
        from podscale.worker.compiling import compile_workload
        from podscale.worker.main import context

        if devices > jax.local_device_count():  # more than this machine's chips: skipped
            raise NotImplementedError(f"{devices} devices, {jax.local_device_count()} here")
        (case,) = expand(Grid((self.suite,), hosts=(1,), devices_per_host=(devices,),
                              variants=(variant,), params=(("size", (size,)),)))
        wl, ctx = load_source(case.source), context(case, runtime.start())
        local = wl.inputs(ctx)
        expected = wl.reference(ctx, local)
        step = compile_workload(wl, ctx, wl.place(ctx, local)).run
        # a planted fault (PODSCALE_FAULT, e.g. stretch=1.5@*:psum) reaches asv's timing too
        self.step = faults.wrap_step(faults.from_env(), 0, 0, step, case.workload)
        if check(wl.output(ctx, self.step()), expected, case.dtype).wrong:
            raise RuntimeError(f"{case.id}: wrong results")


class TimeDot(_SingleProcess):
    suite = "dot"

    def time_dot(self, size, devices, variant, platform):
        self.step()


class TimePsum(_SingleProcess):
    suite = "psum"

    def time_psum(self, size, devices, variant, platform):
        self.step()


@_tracks
class TrackMultiHost:
    """Two simulated hosts (real processes, gloo collectives), measured by podscale."""

    params = (["pmap", "shard_map"], [1, 2], [PLATFORM])
    param_names = ["variant", "devices_per_host", "platform"]
    timeout = 600
    size = 65536
    hosts = 2

    def setup_cache(self):
        from podscale.core.case import Settings
        from podscale.core.grid import Grid

        grid = Grid(("dot", "psum"), params=(("size", (self.size,)),), hosts=(self.hosts,),
                    devices_per_host=tuple(self.params[1]), variants=tuple(self.params[0]),
                    settings=Settings(iters=10))
        return _podscale_launches(grid, lambda r: (r.workload, r.variant, r.devices_per_host))

    def track_psum_time(self, cache, variant, devices_per_host, platform):
        return _samples(v[0] for v in cache[("psum", variant, devices_per_host)])

    track_psum_time.unit = "seconds"

    def track_psum_busbw(self, cache, variant, devices_per_host, platform):
        return _samples(v[2] for v in cache[("psum", variant, devices_per_host)])

    track_psum_busbw.unit = "GB/s"

    def track_dot_time(self, cache, variant, devices_per_host, platform):
        return _samples(v[0] for v in cache[("dot", variant, devices_per_host)])

    track_dot_time.unit = "seconds"

    def track_dot_gbps(self, cache, variant, devices_per_host, platform):
        return _samples(v[1] for v in cache[("dot", variant, devices_per_host)])

    track_dot_gbps.unit = "GB/s"


COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "ppermute",
               "broadcast"]


@_tracks
class TrackCollectives:
    """Every collective over each mesh axes on 2 simulated hosts x 2 devices (64 KiB per
    device, shard_map), measured by podscale: median time and busbw of each launch."""

    params = (COLLECTIVES, ["hosts", "local", "all"], [PLATFORM])
    param_names = ["collective", "axes", "platform"]
    timeout = 600
    size = 65536

    def setup_cache(self):
        from podscale.core.case import Settings
        from podscale.core.grid import Grid

        grid = Grid(tuple(COLLECTIVES), hosts=(2,), devices_per_host=(2,),
                    variants=("shard_map",), settings=Settings(iters=10),
                    params=(("size", (self.size,)), ("axes", tuple(self.params[1]))))
        return _podscale_launches(grid, lambda r: (r.workload, r.axes))

    def track_time(self, cache, collective, axes, platform):
        return _samples(v[0] for v in cache[(collective, axes)])

    track_time.unit = "seconds"

    def track_busbw(self, cache, collective, axes, platform):
        return _samples(v[2] for v in cache[(collective, axes)])

    track_busbw.unit = "GB/s"

    def track_collective_ops(self, cache, collective, axes, platform):
        """Collective instructions per step in the compiled program: a regression
        between commits that comes with a split or merged collective shows here."""
        return _samples([cache[("program", (collective, axes))][0]])

    track_collective_ops.unit = "instructions"

    def track_program(self, cache, collective, axes, platform):
        """The compiled program's fingerprint (podscale/worker/program.py) as a number:
        it changes exactly when the collectives, XLA flags or versions do."""
        return _samples([cache[("program", (collective, axes))][1]])

    track_program.unit = "fingerprint"


@_tracks
class TrackCollectiveFits:
    """t(S) = alpha + S/beta of every collective over all axes of 2 simulated hosts x 2
    devices, 4 KiB to 1 MiB per device (``analysis/models/fits.py``, one fit per launch): beta, a
    bus bandwidth (a drop is a bandwidth regression), and alpha (a rise is a fixed cost)."""

    params = (COLLECTIVES, [PLATFORM])
    param_names = ["collective", "platform"]
    timeout = 900

    def setup_cache(self):
        try:  # asv runs these against older commits too
            from podscale.analysis.models.fits import fits
        except ImportError:  # before analysis/ had sub-packages
            from podscale.analysis.fits import fits  # type: ignore[no-redef]
        per_iteration, round_medians = _stats()
        from podscale.core.case import Settings
        from podscale.core.grid import Grid

        grid = Grid(tuple(COLLECTIVES), hosts=(2,), devices_per_host=(2,),
                    variants=("shard_map",), settings=Settings(iters=10),
                    params=(("size", tuple(SIZES)),))
        measured = _measure(grid)
        if measured is None:
            return Unfit("2 hosts x 2 devices do not fit this machine's chips")
        samples, table = measured
        rm = round_medians(per_iteration(samples))
        out: dict = {}
        for _, launch in rm.groupby("round"):
            for r in fits(samples, table, boot=0, rm=launch).itertuples():
                beta = getattr(r, "beta_gbps", None)  # beta_GBps before the rename
                beta = r.beta_GBps if beta is None else beta
                out.setdefault(r.workload, []).append((r.alpha_us * 1e-6, beta))
        return out

    def track_alpha(self, cache, collective, platform):
        return _samples(a for a, _ in cache[collective])

    track_alpha.unit = "seconds"

    def track_beta(self, cache, collective, platform):
        return _samples(b for _, b in cache[collective])

    track_beta.unit = "GB/s"
