"""A workload's parameters: grid axes with a kind, a default and a unit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podscale.core.errors import UsageError
from podscale.core.parsing import parse_size

KINDS = ("int", "float", "str", "bool", "size")
MAX_SIZE = 2**50  # a size parameter (bytes or elements per device or process) above is a typo


@dataclass(frozen=True)
class Param:
    """One parameter of a workload: a grid axis with a type and a default."""

    name: str
    default: Any
    kind: str = "int"  # int | float | str | bool | size (an int written 4K, 1M, 2**20, 1KiB)
    choices: tuple = ()
    help: str = ""
    unit: str = ""  # what a value counts (B, elements, rows): tables head its column with it

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"param {self.name}: kind must be one of {KINDS}")
        object.__setattr__(self, "default", self.parse(self.default))

    def parse(self, value: Any) -> Any:
        """One value from a CLI word or a TOML value; UsageError when it does not fit."""
        try:
            if self.kind == "size":
                v: Any = parse_size(value)
            elif self.kind == "int":
                v = int(value) if not isinstance(value, bool) else None
            elif self.kind == "float":
                v = float(value)
            elif self.kind == "bool":
                v = value if isinstance(value, bool) else {"true": True, "false": False}[
                    str(value).lower()]
            else:
                v = str(value)
        except (ValueError, KeyError, TypeError, UsageError):
            v = None
        if v is None:
            raise UsageError(f"parameter {self.name}: {value!r} is not of kind {self.kind}")
        if self.kind == "size" and not 1 <= v <= MAX_SIZE:
            raise UsageError(f"parameter {self.name}: {value!r} is out of range (a size is "
                             f"1 to 2**50)")
        if self.choices and v not in self.choices:
            raise UsageError(f"parameter {self.name}: {v!r} is not one of "
                             f"{', '.join(map(str, self.choices))}")
        return v

    def describe(self) -> str:
        text = f"{self.name}={self.default} ({self.kind}"
        text += f": {'|'.join(map(str, self.choices))})" if self.choices else ")"
        return text + (f"  {self.help}" if self.help else "")
