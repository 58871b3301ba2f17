"""OpenMetrics text (the Prometheus exposition format's standard): metric families with
type, unit and help, samples with escaped labels, ``# EOF`` last; written atomically for
node_exporter's textfile collector. Used by ``podscale export --format openmetrics`` and by
a profiled program's live feed; no dependency (``prometheus_client`` parses it in tests)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


@dataclass(frozen=True)
class Family:
    """One metric family: its name (ending in its unit, where it has one), type, unit,
    help and samples (labels, value)."""

    name: str
    kind: str  # gauge | counter | info
    help: str
    unit: str = ""
    samples: tuple[tuple[Mapping[str, str], float], ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not NAME.match(self.name) or (self.unit and not self.name.endswith(self.unit)):
            raise ValueError(f"bad metric name {self.name!r} (unit {self.unit!r})")
        if self.kind not in ("gauge", "counter", "info"):
            raise ValueError(f"bad metric type {self.kind!r}")


def _label(v: object) -> str:
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


def text(families: Iterable[Family]) -> str:
    """The families as OpenMetrics text, ending ``# EOF``."""
    out = []
    for f in families:
        out.append(f"# TYPE {f.name} {f.kind}")
        if f.unit:
            out.append(f"# UNIT {f.name} {f.unit}")
        out.append(f"# HELP {f.name} {_label(f.help)}")
        suffix = {"counter": "_total", "info": "_info"}.get(f.kind, "")
        for labels, value in f.samples:
            inner = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()
                             if NAME.match(k))
            out.append(f"{f.name}{suffix}{{{inner}}} {_value(value)}" if inner
                       else f"{f.name}{suffix} {_value(value)}")
    return "\n".join(out + ["# EOF"]) + "\n"


def write_atomically(path: Path, body: str) -> None:
    """Write ``body`` to ``path`` through a temporary file in the same folder and a
    rename: a reader (node_exporter's textfile collector) never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(body)
    os.replace(tmp, path)
