"""What a process keeps beside its records, for a benchmark worker and a profiled program
alike: the stamp that says what made a trace, and a compiled program's optimized HLO with
its devices' logical order (replay reads them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podscale.core.records import STAMP_MARK


def stamp(run: str, process: int) -> None:
    """Stamp the trace being taken with what made it: one ``podscale_session`` event whose
    arguments are the versions of jax, jaxlib and podscale, the run and the process
    (XProf shows them on the event; a reader checks a session's traces agree). Never
    raises: a trace without its stamp is said by the reader."""
    import jax
    import jaxlib

    from podscale.core.version import __version__

    try:
        with jax.profiler.TraceAnnotation(STAMP_MARK, jax=jax.__version__,
                                          jaxlib=jaxlib.__version__, podscale=__version__,
                                          run=run, process=process):
            pass
    except Exception:  # noqa: BLE001 - the capture stands without it
        pass


def save_hlo(compiled: Any, path: Path, **info: Any) -> None:
    """``PATH.hlo.txt`` (the optimized module) and ``PATH.json``: the global device ids in
    the module's logical order (replica groups name logical ids; null where JAX did not say),
    and ``info``."""
    import json

    from podscale.startup.jaxapi import device_order

    path.parent.mkdir(parents=True, exist_ok=True)
    side, text = Path(f"{path}.json"), Path(f"{path}.hlo.txt")
    part = Path(f"{path}.hlo.txt.part")
    try:  # the pair whole or neither: readers find programs by their .hlo.txt, moved last
        side.write_text(json.dumps({"logical_devices": device_order(compiled), **info}))
        part.write_text(compiled.as_text(), encoding="utf-8")
        part.replace(text)
    except OSError:
        for p in (side, part):
            p.unlink(missing_ok=True)
        raise


def file_name(text: str) -> str:
    """A file name for ``text`` (a case id holds slashes, a computation's name may)."""
    import re

    return re.sub(r"[^A-Za-z0-9_.=+-]", "_", text)
