"""podscale: benchmarking and profiling for JAX multi-controller programs."""

__version__ = "0.1.0"
