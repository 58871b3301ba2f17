"""JAX's own profiler and runtime, as capture windows use them: the profiler's start and stop
taken before the program's are wrapped, why a session would not start, a computation's XLA
module name, and a wait for a step's outputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: the profiler's start and stop as JAX defines them, taken before the program's are
#: wrapped (:mod:`.entry`): podscale's own sessions use these
_ORIGINAL: list[Callable[..., Any]] = []


def profiler() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """JAX's own ``start_trace`` and ``stop_trace`` (not the program's wrapped ones)."""
    if not _ORIGINAL:
        import jax.profiler

        _ORIGINAL[:] = [jax.profiler.start_trace, jax.profiler.stop_trace]
    return _ORIGINAL[0], _ORIGINAL[1]


def held(exc: Exception) -> str:
    text = str(exc)
    if "already" in text:
        return "the program holds the profiler (its own session was running)"
    return f"the profiler would not start: {type(exc).__name__}: {text.splitlines()[0]}"


def module_name(program: Callable[[], Any]) -> str | None:
    """The XLA module name of a computation's compiled program (``program()``, answered
    from JAX's caches), or None where the runtime does not say."""
    from podscale.startup.jaxapi import module_name as of

    try:
        return of(program())
    except Exception:  # noqa: BLE001 - the trace reduction falls back on the names
        return None


def ready(out: Any) -> None:
    """Wait for a step's outputs (one donated meanwhile is already consumed: skipped)."""
    import jax

    for leaf in jax.tree_util.tree_leaves(out):
        try:
            leaf.block_until_ready()
        except Exception:  # noqa: BLE001 - deleted by donation, or not an array
            continue
