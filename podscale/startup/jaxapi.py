"""The JAX surface podscale leans on beyond JAX's documented API, in one place.

Each private or undocumented thing (``jax._src`` modules, underscored attributes, the
runtime executable, monitoring event names) sits behind one name here, with a public
fallback where JAX has one. A fallback taken is kept in :data:`DEGRADED` (hook: what is
lost), which the process records (a ``degraded`` record, a manifest note) and the Findings
say: when a JAX release moves one, a feature narrows in words, never silently or by
raising into a user's program. :func:`hooks` is the canary a quick test reads; a lint test
holds every other module to these names (``tests/test_jaxapi.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

#: the oldest JAX release CI installs and tests (pyproject's ``jax>=`` floor)
JAX_FLOOR = "0.10"

#: ``jax.monitoring``'s duration events of a compile (trace, lowering, backend compile)
COMPILE_EVENTS = "/jax/core/compile/"
#: the last of a compile's duration events: the backend is done
BACKEND_COMPILE = "backend_compile_duration"
#: ``jax.monitoring``'s events of the persistent compilation cache
CACHE_HIT, CACHE_MISS = ("/jax/compilation_cache/cache_hits",
                         "/jax/compilation_cache/cache_misses")

#: fallbacks taken in this process: hook -> what is lost
DEGRADED: dict[str, str] = {}


def _degrade(hook: str, lost: str) -> None:
    DEGRADED.setdefault(hook, lost)


class CoordinationClient(Protocol):
    """The coordination service's client (``jax.distributed``'s, jaxlib's
    ``DistributedRuntimeClient``): the key-value store and barriers podscale uses."""

    def key_value_set(self, key: str, value: str, allow_overwrite: bool = ...) -> None: ...

    def key_value_try_get(self, key: str) -> str: ...

    def blocking_key_value_get(self, key: str, timeout_in_ms: int) -> str: ...

    def key_value_dir_get(self, key: str) -> list[tuple[str, str]]: ...

    def key_value_delete(self, key: str) -> None: ...

    def wait_at_barrier(self, barrier_id: str, timeout_in_ms: int,
                        process_ids: Sequence[int] | None = ...) -> None: ...


def coordination_client() -> CoordinationClient | None:
    """The joined job's coordination client (None in a one-process job, or where JAX no
    longer exposes it: then hang roll-calls, record drains and barriers of the store go)."""
    try:
        from jax._src import distributed
    except ImportError:
        _degrade("coordination_client", "jax._src.distributed moved: no key-value store")
        return None
    state = getattr(distributed, "global_state", None)
    if state is None:
        _degrade("coordination_client", "jax._src.distributed.global_state moved: no "
                 "key-value store")
        return None
    client = getattr(state, "client", None)
    return client if hasattr(client, "wait_at_barrier") else None


#: how :func:`tracing` tells, resolved at its first call
_tracing: Callable[[tuple, dict], bool] | None = None


def tracing(args: tuple, kwargs: dict) -> bool:
    """Whether JAX is tracing (a call made inside another computation's trace):
    ``trace_state_clean()``, else a ``Tracer`` among the arguments (misses a traced call
    whose arguments are all constants)."""
    global _tracing
    if _tracing is None:
        try:
            from jax._src.core import trace_state_clean
        except ImportError:
            _degrade("tracing", "jax._src.core.trace_state_clean moved: a call traced with "
                     "constant arguments only is recorded as a call")
            _tracing = _tracer_among
        else:
            _tracing = lambda args, kwargs: not trace_state_clean()  # noqa: E731
    return _tracing(args, kwargs)


def _tracer_among(args: tuple, kwargs: dict) -> bool:
    import jax

    return any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves((args, kwargs)))


def cache_size(fn: Any, jitted: bool = True) -> int | None:
    """How many programs a jitted function's cache holds (a re-compile grows it), or None
    (then re-compiles are seen from the monitoring events only). ``jitted``: ``fn`` is
    ``jax.jit``'s, which has said it (a pmap's never has: no loss there)."""
    size = getattr(fn, "_cache_size", None)
    if not callable(size):
        if jitted:  # a jitted function that no longer says
            _degrade("cache_size", "jit's _cache_size moved: re-compiles found from "
                     "monitoring events only, without the shapes that changed")
        return None
    try:
        return int(size())
    except Exception:  # noqa: BLE001 - its signature changed
        _degrade("cache_size", "jit's _cache_size() failed: re-compiles found from "
                 "monitoring events only")
        return None


def device_order(compiled: Any) -> list[int] | None:
    """The global device ids of a compiled program in its logical order (replica groups
    name logical ids): its shardings' device assignment (inputs', else outputs'), else a
    ``NamedSharding``'s mesh order; None where neither says (replay then refuses rather
    than guess)."""
    import jax

    leaves = jax.tree.leaves((compiled.input_shardings, compiled.output_shardings))
    for s in leaves:
        order = getattr(s, "_device_assignment", None)
        if order:
            return [d.id for d in order]
    if not leaves:  # a program of no inputs and no outputs: nothing to say it
        return None
    _degrade("device_order", "shardings' _device_assignment moved: replay's device "
             "order from the mesh")
    for s in leaves:
        mesh = getattr(s, "mesh", None)
        if mesh is not None and hasattr(mesh, "devices"):
            return [d.id for d in mesh.devices.flat]
    return None


def module_name(compiled: Any) -> str | None:
    """The XLA module name of a compiled program: the runtime executable's, else the
    first line of its text (``HloModule NAME, ...``: the whole module printed)."""
    try:
        return str(compiled.runtime_executable().hlo_modules()[0].name)
    except Exception:  # noqa: BLE001 - moved: the text says it too, at a cost
        _degrade("module_name", "runtime_executable() moved: module names read from the "
                 "program's text")
    try:
        return text_module_name(compiled.as_text())
    except Exception:  # noqa: BLE001
        return None


def text_module_name(hlo_text: str) -> str | None:
    """An HLO module's name from its text (``HloModule jit_step, ...`` -> ``jit_step``):
    the name its executions carry in a trace."""
    found = re.match(r"\s*HloModule ([^\s,]+)", hlo_text)
    return found.group(1) if found else None


def start_trace_owners() -> list[Any]:
    """The modules whose ``start_trace`` a program reaches: ``jax.profiler`` and the one
    ``jax.profiler.trace()`` calls (``jax._src.profiler``), where it is another."""
    import jax.profiler

    owners: list[Any] = [jax.profiler]
    try:
        from jax._src import profiler as src
    except ImportError:
        _degrade("start_trace", "jax._src.profiler moved: a program's jax.profiler.trace() "
                 "is not seen (podscale's window may refuse to start instead)")
        return owners
    if src is not jax.profiler and hasattr(src, "start_trace"):
        owners.append(src)
    return owners


def detected_join() -> tuple[str | None, int | None, int | None]:
    """(coordinator address, process count, this process's index) of the cluster JAX's
    own detection finds, as ``jax.distributed.initialize()`` would join it; raises what
    the detection raises (a ValueError where none is found). (None, None, None) where
    JAX no longer exposes its detection (then a join that cannot reach its coordinator
    ends the process inside JAX, as JAX does)."""
    try:
        from jax._src.clusters import ClusterEnv

        detect = ClusterEnv.auto_detect_unset_distributed_params
    except (ImportError, AttributeError):
        _degrade("detected_join", "jax._src.clusters moved: an unreachable coordinator "
                 "ends the worker inside JAX, not in one line")
        return None, None, None
    address, count, index, _ = detect(None, None, None, None, None, None)
    return address, count, index


def computed() -> bool:
    """Whether this process's JAX has started a backend (computed, or listed devices):
    what makes a later ``jax.distributed.initialize()`` fail. False where JAX was never
    imported; where the hook is gone, whether JAX was imported at all."""
    import sys

    if "jax" not in sys.modules:
        return False
    try:
        from jax._src.xla_bridge import backends_are_initialized
    except ImportError:
        _degrade("computed", "jax._src.xla_bridge moved: a process that failed before it "
                 "joined may be told it computed first")
        return True
    return bool(backends_are_initialized())


def detected_cluster() -> str | None:
    """The name of the cluster environment JAX's own detection finds here (its first
    non-opt-in ``ClusterEnv`` present: ``SlurmCluster``, ``OmpiCluster``,
    ``GkeTpuCluster``, ...), or None; a check that raises counts as absent."""
    try:
        from jax._src.clusters import ClusterEnv

        kinds = list(ClusterEnv._cluster_types)
    except (ImportError, AttributeError):
        _degrade("detected_cluster", "jax._src.clusters moved: podscale doctor cannot say "
                 "which cluster JAX would join")
        return None
    for kind in kinds:
        try:
            if not getattr(kind, "opt_in_only_method", False) and kind.is_env_present():
                return str(kind.__name__)
        except Exception:  # noqa: BLE001, S112 - a detection that fails finds nothing
            continue
    return None


def hooks() -> dict[str, bool]:
    """Each hook, whether it resolves in the installed JAX (the canary a test reads)."""
    import jax
    import jax.numpy as jnp

    jitted = jax.jit(lambda x: x + 1)
    compiled = jitted.lower(jnp.ones(2)).compile()
    before = dict(DEGRADED)
    DEGRADED.clear()
    try:
        tracing((), {})
        size = cache_size(jitted)
        found = {"tracing": "tracing" not in DEGRADED,
                 "cache_size": size is not None,
                 "device_order": bool(device_order(compiled)) and "device_order" not in
                 DEGRADED,
                 "module_name": bool(module_name(compiled)) and "module_name" not in DEGRADED,
                 "start_trace": len(start_trace_owners()) == 2,
                 "coordination_client": _client_type_resolves(),
                 "detected_join": _detection_resolves(),
                 "detected_cluster": _cluster_types_resolve(),
                 "computed": computed() and "computed" not in DEGRADED}
    finally:
        DEGRADED.clear()
        DEGRADED.update(before)
    return found


def _client_type_resolves() -> bool:
    """The coordination client's class has every method of :class:`CoordinationClient`."""
    try:
        from jax._src import distributed
        from jax._src.lib import _jax
    except ImportError:
        return False
    names = [n for n in vars(CoordinationClient) if not n.startswith("_")]
    return hasattr(distributed, "global_state") and all(
        hasattr(_jax.DistributedRuntimeClient, n) for n in names)


def _detection_resolves() -> bool:
    try:
        from jax._src.clusters import ClusterEnv
    except ImportError:
        return False
    return callable(getattr(ClusterEnv, "auto_detect_unset_distributed_params", None))


def _cluster_types_resolve() -> bool:
    try:
        from jax._src.clusters import ClusterEnv
    except ImportError:
        return False
    return bool(getattr(ClusterEnv, "_cluster_types", None))
