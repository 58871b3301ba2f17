"""This machine's accelerator device nodes and the JAX runtime installed for them, read
from the file system alone (the standard library only: no JAX is imported, no device
opened), so that it serves before anything is installed.

- ``make setup`` asks it which pip extra to install (``python3 -m podscale.core.machine``
  prints the extra, then why: ``tpu device nodes /dev/vfio/3``); asv's install step too.
- The front end tells a CPU machine from one whose chips JAX cannot use (device nodes,
  but no runtime package): a simulation beside such chips is said, ``--platform tpu``
  refused, with the fix.
- ``PODSCALE_ACCELERATORS`` plants what tests cannot have here: ``PLATFORM:KIND:COUNT``
  (usable chips), ``PLATFORM:no-runtime`` (device nodes and no runtime), ``none``.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys
from dataclasses import dataclass

from podscale.core import envnames, lines

#: make setup's ACCEL values: the project's pip extras (pyproject), each JAX's own
EXTRAS = ("cpu", "tpu", "cuda12", "cuda13", "rocm")
#: the runtime JAX_PLATFORMS names for each platform family's device nodes
PLATFORM_OF = {"tpu": "tpu", "cuda": "gpu", "rocm": "gpu"}
#: the modules JAX's runtime for each installs (any one will do)
RUNTIME_MODULES = {"tpu": ("libtpu",),
                   "cuda": ("jax_cuda12_plugin", "jax_cuda13_plugin"),
                   "rocm": ("jax_rocm7_plugin", "jax_rocm60_plugin")}
#: the pip extra of each runtime, and the words naming the runtime
EXTRA_OF = {"tpu": "tpu", "cuda": "cuda12", "rocm": "rocm"}
RUNTIME_WORDS = {"tpu": "JAX's TPU runtime (libtpu)",
                 "cuda": "JAX's CUDA plugin (jax-cuda12-plugin)",
                 "rocm": "JAX's ROCm plugin (jax-rocm7-plugin)"}
JAX_EXTRA = {"tpu": "tpu", "cuda12": "cuda12", "cuda13": "cuda13", "rocm": "rocm7-local"}
PLANTED = "planted by PODSCALE_ACCELERATORS"


@dataclass(frozen=True)
class Nodes:
    """What the device nodes say: ``runtime`` the JAX_PLATFORMS name they point to (tpu,
    cuda, rocm; None: no accelerator nodes), ``paths`` the nodes seen, ``modules`` the
    runtime's modules importable here (none: JAX cannot use the chips)."""

    runtime: str | None = None
    paths: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()

    @property
    def platform(self) -> str | None:
        """tpu or gpu (None: no accelerator nodes)."""
        return PLATFORM_OF.get(self.runtime or "")

    @property
    def usable(self) -> bool:
        """Whether the runtime JAX needs for these nodes is installed."""
        return self.runtime is not None and bool(self.modules)

    @property
    def extra(self) -> str:
        """The pip extra these nodes want (cpu where there are none)."""
        return EXTRA_OF.get(self.runtime or "", "cpu")

    def where(self) -> str:
        return ", ".join(self.paths[:3]) + (" ..." if len(self.paths) > 3 else "")

    def fix(self) -> str:
        """How to install what these nodes need."""
        return (f"pip install 'jax[{JAX_EXTRA[self.extra]}]' (or make setup "
                f"ACCEL={self.extra})")

    def unusable(self) -> str:
        """The sentence for chips JAX cannot use here (the fix included)."""
        name = (self.platform or "").upper()
        return (f"this machine has {name} device nodes ({self.where()}) but "
                f"{RUNTIME_WORDS[self.runtime or 'tpu']} is not installed: {self.fix()}")


def _seen() -> tuple[str | None, tuple[str, ...]]:
    tpu = sorted(glob.glob("/dev/accel[0-9]*") + glob.glob("/dev/vfio/[0-9]*"))
    if tpu:
        return "tpu", tuple(tpu)
    nvidia = sorted(glob.glob("/dev/nvidia[0-9]*"))
    if nvidia:
        return "cuda", tuple(nvidia)
    render = sorted(glob.glob("/dev/dri/renderD*"))
    if os.path.exists("/dev/kfd") and render:
        return "rocm", ("/dev/kfd", *render)
    return None, ()


def installed(runtime: str) -> tuple[str, ...]:
    """The modules of ``runtime``'s JAX runtime importable here."""
    return tuple(m for m in RUNTIME_MODULES.get(runtime, ())
                 if importlib.util.find_spec(m) is not None)


def planted(text: str) -> Nodes:
    """The nodes a planted ``PODSCALE_ACCELERATORS`` says (ValueError where malformed)."""
    if text == "none":
        return Nodes()
    platform, _, rest = text.partition(":")
    runtime = {"tpu": "tpu", "gpu": "cuda"}.get(platform)
    if runtime is None or not rest:
        raise ValueError(text)
    return Nodes(runtime, (PLANTED,), () if rest == "no-runtime" else (PLANTED,))


def read(env: dict[str, str] | None = None) -> Nodes:
    """This machine's nodes and runtime (the planted ones where the variable is set)."""
    text = (os.environ if env is None else env).get(envnames.ACCELERATORS)
    if text is not None:
        return planted(text)
    runtime, paths = _seen()
    return Nodes(runtime, paths, installed(runtime) if runtime else ())


def accel(given: str | None = None) -> tuple[str, str]:
    """(the extra, why) ``make setup`` installs: ``given`` (ACCEL) where set, else what
    the device nodes want."""
    if given:
        return given, f"ACCEL={given} given"
    nodes = read()
    if nodes.runtime is None:
        return "cpu", "no accelerator device nodes (/dev/accel*, /dev/vfio/N, /dev/nvidia*, " \
                      "/dev/kfd); ACCEL=tpu|cuda12 overrides"
    return nodes.extra, f"{nodes.platform} device nodes {nodes.where()}; ACCEL=cpu overrides"


def main() -> int:
    """``python3 -m podscale.core.machine``: the extra, then why, on one line."""
    extra, why = accel()
    lines.say(f"{extra} {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
