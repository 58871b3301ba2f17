"""The commands of ``podscale``: one module each, registering its own parser."""

from __future__ import annotations

import argparse
from typing import TypeAlias

#: What each command's ``register(sub)`` is handed: ``add_subparsers()``'s result.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
