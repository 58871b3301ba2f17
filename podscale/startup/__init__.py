"""The start-up layer of every JAX process podscale starts or joins, a benchmark worker
(:mod:`podscale.worker`) and a profiled program (:mod:`podscale.attach`) alike: the platform
a process takes (simulated CPU devices or its chips), joining the job (or not, for one
process), the JAX surface beyond its documented API (:mod:`~podscale.startup.jaxapi`), the
device's peaks, reading XSpace, planted faults, the lifeline to the launcher, the wall-time
ledger of a process's start, and the artifacts a process keeps (trace stamps, programs).
Imports neither pandas nor the layers above it."""
