"""asv benchmarks of a multi-slice job's collectives (see ``benchmarks.py`` for how
track_* rounds and samples work): over the axis between slices and the axes inside one."""

from __future__ import annotations

from .benchmarks import PLATFORM, RUNTIME, Unfit, _podscale_launches, _samples, _tracks

SLICE_COLLECTIVES = ["all_reduce", "all_gather"]


@_tracks
class TrackSlices:
    """Collectives of a multi-slice job: 2 slices of 1 simulated host x 2 devices (64 KiB
    per device, shard_map), over the ``dcn`` axis (between the slices: the data-centre
    network on TPUs) and the ``ici`` axes (inside each slice), measured by podscale: the
    median time and busbw of each launch. Skipped on chips (one machine is one slice)."""

    params = (SLICE_COLLECTIVES, ["dcn", "ici"], [PLATFORM])
    param_names = ["collective", "axes", "platform"]
    timeout = 600
    size = 65536

    def setup_cache(self):
        if RUNTIME is not None:  # a machine's own chips are one slice: nothing to measure
            return Unfit("one machine's chips are one slice")
        from podscale.core.case import Settings
        from podscale.core.grid import Grid

        grid = Grid(tuple(SLICE_COLLECTIVES), hosts=(1,), devices_per_host=(2,), slices=(2,),
                    variants=("shard_map",), settings=Settings(iters=10),
                    params=(("size", (self.size,)), ("axes", tuple(self.params[1]))))
        return _podscale_launches(grid, lambda r: (r.workload, r.axes))

    def track_time(self, cache, collective, axes, platform):
        return _samples(v[0] for v in cache[(collective, axes)])

    track_time.unit = "seconds"

    def track_busbw(self, cache, collective, axes, platform):
        return _samples(v[2] for v in cache[(collective, axes)])

    track_busbw.unit = "GB/s"
