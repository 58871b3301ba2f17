"""The reference program (JAX in Action, listing 7.30), run unchanged on every process.

Prints the listing's lines, then checks every dot product against float64 dot products
of the same vectors within a sound float32 rounding bound (gamma_3 * sum|x*y| + u*|dot|),
runs the listing's global-sum program once more on integer inputs with an exact total,
and writes ``seed/process-<i>.json`` with the outcome and the sums, which the launcher
checks against each other (``PODSCALE_FAULT=corrupt@P:*`` corrupts process P's dot
products before the check).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podscale.core import runfolder as rf
from podscale.core.lines import say
from podscale.core.workload import seed_for
from podscale.startup.ledger import peak_rss_mb

if TYPE_CHECKING:
    from podscale.startup.runtime import Runtime


def main(rt: Runtime, run_dir: Path) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np

    say(f"== Running worker:  {jax.process_index()}")
    rng_key = jax.random.PRNGKey(seed_for(jax.process_index()))
    vs = jax.random.normal(rng_key, shape=(2_000_000, 3))
    v1s, v2s = vs[:1_000_000, :], vs[1_000_000:, :]
    ldc = jax.local_device_count()
    lead = jax.process_index() == 0
    if lead:
        say(f"-- global device count: {jax.device_count()}")
        say(f"-- local device count: {ldc}")
        say(f"-- JAX version: {jax.__version__}")
    v1sp = v1s.reshape((ldc, v1s.shape[0] // ldc, v1s.shape[1]))
    v2sp = v2s.reshape((ldc, v2s.shape[0] // ldc, v2s.shape[1]))
    if lead:
        say(f"-- v1sp shape:  {v1sp.shape}")
    dots = jax.pmap(jax.vmap(jnp.vdot))(v1sp, v2sp)
    if lead:
        say(f"-- dots shape:  {dots.shape}")
    psum_of_sums = jax.pmap(lambda x: jax.lax.psum(jnp.sum(x), axis_name="p"), axis_name="p")
    global_sum = psum_of_sums(dropped(rt.process, dots))
    if lead:
        say(f"-- global_sum shape:  {global_sum.shape}")
    say(f"== Worker {jax.process_index()} global sum: {global_sum}")
    dots = dots.reshape(dots.shape[0] * dots.shape[1])
    if lead:
        say(f"-- result shape:  {dots.shape}")
    local_sum = jnp.sum(dots)
    say(f"== Worker {jax.process_index()} local sum: {local_sum}")
    check = check_dots(rt.process, np.asarray(dots), np.asarray(v1s), np.asarray(v2s))
    check.update(exact_global_sum(rt.process, psum_of_sums, dots.reshape(ldc, -1).shape))
    out = run_dir / rf.SEED / rf.process_name(jax.process_index(), ".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "process": jax.process_index(),
                "global_sum": [float(v) for v in np.asarray(global_sum)],
                "local_sum": float(local_sum),
                "abs_sum": float(jnp.sum(jnp.abs(dots))),
                "dots": int(dots.shape[0]),
                "peak_rss_mb": peak_rss_mb(),  # what admission's estimate is calibrated on
                **check,
            }
        )
    )
    say(f"== Worker {jax.process_index()} done")


def dropped(process: int, dots: Any) -> Any:
    """``PODSCALE_FAULT=drop@P:*``: process P's contribution to the global sum left out."""
    from podscale.startup import faults

    fault = faults.from_env()
    if fault is not None and fault.kind == "drop" and fault.applies(process, 0, "seed"):
        return dots * 0
    return dots


def exact_global_sum(process: int, psum_of_sums: Any, shape: tuple[int, int]) -> dict:
    """The listing's global-sum program again on integer inputs whose total is exact in
    float32: device g (global index) holds g + 1 once, so the total is D(D+1)/2 and a
    missing, doubled or misplaced process changes it (the float check's bound, sound for
    a million float32 terms, is far larger than one process's share)."""
    import jax
    import numpy as np

    ldc, width = shape
    ints = np.zeros((ldc, width), np.float32)
    ints[:, 0] = process * ldc + np.arange(ldc) + 1
    got = np.asarray(psum_of_sums(dropped(process, ints)))
    devices = jax.device_count()
    expected = devices * (devices + 1) // 2
    say(f"== Worker {process} exact global sum: {got[0]:.0f} (expected {expected})")
    return {"exact_global_sum": [float(v) for v in got], "exact_expected": float(expected)}


def check_dots(process: int, dots: Any, v1: Any, v2: Any) -> dict:
    """Every computed dot product against float64, within a sound float32 bound."""
    import numpy as np

    from podscale.core.bounds import sum_bound
    from podscale.core.checking import check
    from podscale.core.workload import Expected
    from podscale.startup import faults

    dots = faults.corrupt(faults.from_env(), process, 0, dots, "seed")
    a, b = v1.astype(np.float64), v2.astype(np.float64)
    exact = np.einsum("ij,ij->i", a, b)
    bound = sum_bound(a.shape[1], "float32", np.einsum("ij,ij->i", np.abs(a), np.abs(b)),
                      exact)
    result = check(dots, Expected(exact, bound))
    say(f"== Worker {process} dot products: {result.wrong} wrong of {result.checked} "
        f"(max error {result.max_error:.3g} x bound)")
    # for the global sum: the exact total, and how far the float32 dots may be from it
    return {"dots_wrong": result.wrong, "dots_max_error": result.max_error,
            "sum64": float(np.sum(exact)),
            "abs_sum64": float(np.sum(np.abs(exact))), "dots_bound": float(np.sum(bound))}
