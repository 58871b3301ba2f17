"""What a compiled program is, read once per compile (never raising into the program):
its fingerprint (a hash of its optimized HLO less debug metadata: the same program on every
process gives the same), whether it waits on other processes (a collective over devices of
several), XLA's cost analysis (FLOPs and bytes accessed, per device) with what it lacks
where the program loops (:mod:`podscale.core.hloflops`), and its memory analysis
(arguments, outputs, temporaries, per device)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podscale.core import hloidentity
from podscale.core.profilelines import ProgramFacts

#: the ops by which a program waits on other devices
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
               "collective-permute", "collective-broadcast", "send", "recv")


def program(compiled: Callable[[], Any], text: str | None = None) -> tuple[str, bool | None]:
    """A compiled program's fingerprint (a hash of its optimized HLO: the same program on
    every process gives the same) and whether it waits on other processes: it has a
    collective and its devices belong to more than this one (None where JAX does not
    say); ``text``: its HLO, where already read. Never raises: ("", None)."""
    import jax

    try:
        c = compiled()
        text = c.as_text() if text is None else text
    except Exception:  # noqa: BLE001 - the program runs on regardless
        return "", None
    fingerprint = hloidentity.fingerprint(text)
    if not any(f" {op}(" in text or f" {op}-start(" in text for op in COLLECTIVES):
        return fingerprint, False
    try:
        shardings = jax.tree_util.tree_leaves(c.input_shardings)
        owners = {d.process_index for s in shardings for d in s.device_set}
    except Exception:  # noqa: BLE001
        return fingerprint, None
    return fingerprint, len(owners) > 1


def describe(compiled: Callable[[], Any]) -> ProgramFacts:
    """Everything a ``compiled`` record says of a program: ``program`` (fingerprint),
    ``peers``, ``flops`` and ``bytes`` (per device; None where XLA does not say) and
    ``memory`` (bytes per device: arguments, outputs, temporaries). The program is
    compiled (answered from JAX's caches) once."""
    out: ProgramFacts = {"program": "", "peers": None, "flops": None, "bytes": None,
                         "memory": None}
    try:
        c = compiled()
        text = c.as_text()
    except Exception:  # noqa: BLE001 - the program runs on regardless
        return out
    out["program"], out["peers"] = program(lambda: c, text)
    if not out["program"]:
        return out
    out.update(_loops(text))
    try:  # its signature, ops by kind and precision: what changed where it differs
        found = hloidentity.identity(text)
        out["identity"] = {k: found[k] for k in ("parameters", "results", "ops", "precision")}
    except Exception:  # noqa: BLE001 - a module this reader does not know
        pass
    try:
        cost = c.cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        out["flops"] = float(cost.get("flops", 0.0))
        out["bytes"] = float(cost.get("bytes accessed", 0.0))
    except Exception:  # noqa: BLE001 - no cost analysis on this platform
        pass
    try:
        m = c.memory_analysis()
        out["memory"] = {k: int(getattr(m, f"{k}_size_in_bytes"))
                         for k in ("argument", "output", "temp", "generated_code")}
    except Exception:  # noqa: BLE001
        pass
    return out


def _loops(text: str) -> ProgramFacts:
    """What XLA's FLOPs lack where the program loops (its cost analysis counts a loop's
    body once): ``loop_flops``, the dots and convolutions of the bodies' further trips,
    and ``loops``, every while loop's trip count (None: not stated in the module)."""
    from podscale.core.hloflops import loop_flops

    try:
        found = loop_flops(text)
    except Exception:  # noqa: BLE001 - a module this reader does not know: XLA's stands
        return {}
    return {"loop_flops": found.extra, "loops": list(found.loops)} if found.loops else {}
