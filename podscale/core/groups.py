"""Group membership as text a person can read and a program can parse back:
``0-3 4-7`` (two groups of consecutive devices), ``0-6:2 1-7:2`` (strided), ``0,5,9``."""

from __future__ import annotations

import numpy as np


def _one(group: list[int]) -> str:
    if len(group) > 2:
        step = group[1] - group[0]
        if step > 0 and all(b - a == step for a, b in zip(group, group[1:])):
            return f"{group[0]}-{group[-1]}" + (f":{step}" if step > 1 else "")
    return ",".join(map(str, group))


def spell_groups(idx: np.ndarray) -> str:
    """Each group's global device indices, in rank order, groups separated by spaces."""
    return " ".join(_one([int(v) for v in row]) for row in np.asarray(idx))


def parse_groups(text: str) -> list[list[int]]:
    """The inverse of :func:`spell_groups`."""
    out = []
    for word in text.split():
        if "-" in word:
            span, _, step = word.partition(":")
            lo, hi = map(int, span.split("-"))
            out.append(list(range(lo, hi + 1, int(step or 1))))
        else:
            out.append([int(v) for v in word.split(",")])
    return out


def slice_words(ps: list[int], processes: int, slices: int) -> str:
    """Where processes ``ps`` of a job of ``slices`` slices sit, as words to follow their
    numbers: `` (slice 1)``, `` (all of slice 1)`` (every process of it), `` (slices 0,
    1)``; empty in a one-slice job (processes are slice-major, as JAX numbers a
    multi-slice job's)."""
    if slices < 2 or processes % slices or not ps:
        return ""
    per = processes // slices
    touched = sorted({p // per for p in ps})
    whole = set(ps) == {p for s in touched for p in range(s * per, (s + 1) * per)}
    which = "slice" + ("s " if len(touched) > 1 else " ") + ", ".join(map(str, touched))
    return f" (all of {which})" if whole else f" ({which})"
