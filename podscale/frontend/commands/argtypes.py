"""Values of the command line's options, checked as argparse types or as a grid's values:
seconds, a port, an element count."""

from __future__ import annotations

import argparse

from podscale.core.errors import UsageError


def check_elements(value: object) -> int:
    """``--check-elements``: a count >= 1, or ``all`` (0: every element)."""
    text = str(value).strip().lower()
    if text == "all":
        return 0
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"bad --check-elements {value!r}: a count >= 1, or all")
    return int(text)


def seconds(text: str) -> float:
    """An argparse type: a finite number of seconds > 0 (``nan`` would never time out)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text}")
    return value


def port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be 0 (any free port) to 65535, got {text}")
    return value


def launcher_words(text: str) -> tuple[str, ...]:
    """``--launcher-args``' words, split as a shell would; a bad quote is one line."""
    import shlex

    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"bad --launcher-args: {exc}") from None
