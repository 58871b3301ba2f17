"""The FLOPs a compiled program runs a step, counted from its optimized HLO text: each dot
and convolution's 2 x output elements x contracted elements, times how many times one run
of the entry computation runs its computation (:func:`podscale.core.hlotext.counts`: a
``while`` body its known trip count). XLA's own cost analysis counts every computation
once, so a scanned stack of layers, a ``fori_loop`` or gradient accumulation read as one
trip of their body; the difference (``run - once``) is added to XLA's count. A loop whose
trip count the module does not state is counted once, and said (``unknown``). Pure text:
no JAX."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from podscale.core.hlotext import balanced, computations, counts

_DIMS = re.compile(r"^[a-z]\w*\[([\d,]*)\]")
_OP = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(\S+)\s+(dot|convolution)\(")
_NAMED = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*([a-z]\w*\[[\d,]*\])")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"')


@dataclass(frozen=True)
class LoopFlops:
    """Dot and convolution FLOPs of one run of a module: ``once`` counting each computation
    once (as XLA's cost analysis does), ``run`` each as many times as a run runs it;
    ``loops`` the trip counts of its ``while`` loops (None: not stated), ``unknown`` the
    dots and convolutions inside such loops (counted once)."""

    once: float
    run: float
    loops: tuple[int | None, ...]
    unknown: int

    @property
    def extra(self) -> float:
        """What XLA's count lacks: the loop bodies' trips after the first."""
        return self.run - self.once


def _dims(shape: str) -> list[int] | None:
    m = _DIMS.match(shape.strip())
    return [int(d) for d in m.group(1).split(",") if d] if m else None


def _operands(line: str, opcode: str) -> list[str]:
    start = line.index(f"{opcode}(") + len(opcode)
    inner = line[start + 1:balanced(line, start) - 1]
    out, depth, word = [], 0, ""
    for c in inner:
        depth += c in "([{"
        depth -= c in ")]}"
        if c == "," and depth == 0:
            out.append(word.strip())
            word = ""
        else:
            word += c
    return [*out, word.strip()] if word.strip() else out


def _shape_of(operand: str, shapes: dict[str, list[int]]) -> list[int] | None:
    """An operand's dimensions: printed beside it, else its instruction's."""
    inline = _dims(operand)
    if inline is not None:
        return inline
    return shapes.get(operand.split()[-1].lstrip("%"))


def _attr(line: str, name: str) -> str:
    m = re.search(rf"\b{name}=([^\s,]+(?:\{{[^}}]*\}})?)", line)
    return m.group(1) if m else ""


def op_flops(line: str, opcode: str, out: list[int], shapes: dict[str, list[int]]
             ) -> float:
    """One dot's or convolution's FLOPs (0 where its shapes cannot be read)."""
    ops = _operands(line, opcode)
    if len(ops) < 2:
        return 0.0
    lhs, rhs = (_shape_of(o, shapes) for o in ops[:2])
    if lhs is None or rhs is None:
        return 0.0
    if opcode == "dot":
        contracted = [int(d) for d in re.findall(r"\d+", _attr(line, "lhs_contracting_dims"))]
        inner = math.prod(lhs[d] for d in contracted if d < len(lhs))
    else:
        labels = _attr(line, "dim_labels").split("->")[0].split("_")
        kernel = labels[1] if len(labels) == 2 else ""
        o = kernel.find("o")
        if o < 0 or o >= len(rhs):
            return 0.0
        inner = math.prod(rhs) // max(rhs[o], 1)
    return 2.0 * math.prod(out) * inner


def loop_flops(text: str) -> LoopFlops:
    """The module's dot and convolution FLOPs, once and as run (see the module)."""
    comps, entry = computations(text)
    times = counts(comps, entry) if entry else {}
    once = run = 0.0
    unknown = 0
    for comp, lines in comps.items():
        shapes = {m.group(1): d for line in lines if (m := _NAMED.match(line))
                  and (d := _dims(m.group(2))) is not None}
        for line in lines:
            m = _OP.match(line)
            out = _dims(m.group(2)) if m else None
            if m is None or out is None:
                continue
            flops = op_flops(line, m.group(3), out, shapes)
            n = times.get(comp, 1)
            once += flops
            run += flops * (1 if n is None else n)
            unknown += n is None
    loops: list[int | None] = []
    for line in (line for lines in comps.values() for line in lines if " while(" in line):
        trip = _TRIP.search(line)
        loops.append(int(trip.group(1)) if trip else None)
    return LoopFlops(once, run, tuple(loops), unknown)
