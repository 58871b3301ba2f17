"""What a compiled program is, from its optimized HLO text: its ``fingerprint`` (a hash of
the module less its debug metadata: the same program gives the same on every process and
run), its signature (the entry computation's ``parameters`` and ``results``, per device),
its instructions counted by kind (``ops``: fusions, dots, convolutions, custom calls,
collectives, copies, transposes, loops) and the ``precision`` its dots and convolutions
ask for. Two runs of a case ran "the same" program only where the fingerprints are equal;
otherwise these say what changed. Pure text: no JAX."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from podscale.core.hlotext import computations, instructions, without_metadata

#: the kinds counted, and the opcodes of each
KINDS = {"fusion": ("fusion",), "dot": ("dot",), "convolution": ("convolution",),
         "custom-call": ("custom-call",),
         "collective": ("all-reduce", "all-reduce-start", "all-gather", "all-gather-start",
                        "reduce-scatter", "all-to-all", "collective-permute",
                        "collective-permute-start", "ragged-all-to-all",
                        "collective-broadcast"),
         "copy": ("copy", "copy-start"), "transpose": ("transpose",), "while": ("while",)}
_KIND_OF = {op: kind for kind, ops in KINDS.items() for op in ops}
_SHAPE = re.compile(r"[a-z]\w*\[[\d,]*\]")
_PRECISION = re.compile(r"\b(operand_precision=\{[^}]*\}|algorithm=[\w]+)")


def fingerprint(text: str) -> str:
    """The module's hash less its debug metadata (12 hex digits)."""
    return hashlib.sha1(without_metadata(text).encode()).hexdigest()[:12]


def signature(text: str) -> tuple[list[str], str]:
    """The entry computation's parameter shapes and its result, as the module states
    them (per device in an SPMD program)."""
    for line in text.splitlines():
        if line.startswith("ENTRY "):
            head, _, result = line.partition("->")
            return _SHAPE.findall(head), result.strip().rstrip("{").strip()
    return [], ""


def identity(text: str) -> dict[str, Any]:
    """The program's identity (see the module)."""
    comps, _ = computations(text)
    ops = dict.fromkeys(KINDS, 0)
    precision = set()
    for _, _, _, opcode, attrs in instructions(comps):
        kind = _KIND_OF.get(opcode)
        if kind is not None:
            ops[kind] += 1
        if opcode in ("dot", "convolution"):
            precision.update(_PRECISION.findall(attrs))
    parameters, results = signature(text)
    return {"fingerprint": fingerprint(text), "parameters": parameters, "results": results,
            "ops": {k: v for k, v in ops.items() if v}, "precision": sorted(precision)}
