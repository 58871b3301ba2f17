"""Human number formats for tables and reports: µs/ms/s, GB/s, KiB/MiB; never scientific
notation; N/A for missing values."""

from __future__ import annotations

import math


def missing(x: object) -> bool:
    """None or NaN: a value that does not apply."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def cell(v: object) -> object:
    """A table cell: integers as such, other floats to 3 significant figures, never in
    scientific notation; N/A for missing."""
    if not isinstance(v, float):
        return v
    return "N/A" if v != v else (str(int(v)) if v.is_integer() and abs(v) < 1e15 else sig(v))


def sig(x: float) -> str:
    """Three significant figures without an exponent."""
    if x == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(x)))))
    return f"{x:,.{digits}f}"


def time_h(seconds: float | None) -> str:
    if seconds is None or missing(seconds):
        return "N/A"
    s = float(seconds)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(s) >= scale:
            return f"{sig(s / scale)} {unit}"
    return f"{sig(s / 1e-9)} ns" if s else "0 µs"


def gbps_h(gbps: float | None) -> str:
    if gbps is None or missing(gbps):
        return "N/A"
    if math.isinf(gbps):
        return "∞"
    return f"{sig(float(gbps))} GB/s" if abs(gbps) >= 0.1 else f"{sig(gbps * 1e3)} MB/s"


def bytes_h(nbytes: float | None) -> str:
    if nbytes is None or missing(nbytes):
        return "N/A"
    b = float(nbytes)
    for scale, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if abs(b) >= scale:
            return f"{sig(b / scale)} {unit}"
    return f"{b:.0f} B"
