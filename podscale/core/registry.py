"""Finding workloads: built-ins from the packages the ``podscale.workloads`` entry point
group names (podscale's own: ``podscale.suites``), user workloads by reference.

A reference is a built-in name (``psum``), ``path/to/file.py:NAME`` or
``pkg.module:NAME`` (``:NAME`` may be left out where the file or module holds exactly one
workload). NAME is a module attribute: a :class:`Workload` instance or subclass. Every
workload gets a ``source`` (``module:attr`` or ``/abs/path.py:attr``) by which a worker
loads it again, on this machine or any host of a cluster.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from podscale.core.errors import UsageError
from podscale.core.workload import Workload

ENTRY_POINTS = "podscale.workloads"
#: where built-ins are when podscale runs from a checkout with no install metadata
FALLBACK_PACKAGES = ("podscale.suites",)


@dataclass(frozen=True)
class Found:
    workload: Workload
    source: str


#: protocol 1 spellings and what protocol 2 calls them
_RENAMED = {"step": "step(ctx, local) is split into place(ctx, local) -> placed arguments "
                    "and program(ctx) -> Program(fn)",
            "exact_inputs": "exact_inputs(ctx) is exact_check(ctx) -> ExactCheck(inputs, "
                            "expected)",
            "validate": "validate(case) is check_case(case), one per class (no super() call)",
            "unsupported": "unsupported(case) is unsupported_case(case)"}


def protocol_problem(cls: type) -> str | None:
    """What a workload class written to protocol 1 must change, in one line, or None."""
    own = [c for c in cls.__mro__ if c.__module__ == cls.__module__]
    for name, change in _RENAMED.items():
        if any(name in vars(c) for c in own):
            return f"{cls.__name__}: protocol 2: {change} (see docs/workloads.md)"
    body = next((vars(c)["body"] for c in own if "body" in vars(c)), None)
    if body is not None:
        import inspect

        names = list(inspect.signature(body).parameters)[1:2]
        if names == ["axes"]:
            return (f"{cls.__name__}: protocol 2: body(self, axes, ...) takes the case first: "
                    "body(self, case, axes, ...) (see docs/workloads.md)")
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    if missing:
        return (f"{cls.__name__}: does not implement {', '.join(missing)} (the abstract hooks "
                "of protocol 2; see docs/workloads.md)")
    return None


def _first_problem(module: ModuleType) -> str | None:
    for obj in list(vars(module).values()):
        if isinstance(obj, type) and issubclass(obj, Workload) and \
                obj.__module__ == module.__name__:
            problem = protocol_problem(obj)
            if problem:
                return problem
    return None


def _workloads_in(module: ModuleType) -> dict[str, Workload]:
    """attribute -> workload, for every workload defined at module level; a class written
    to protocol 1 is a one-line UsageError saying what changed."""
    problem = _first_problem(module)
    if problem:
        where = getattr(module, "__file__", None) or module.__name__
        raise UsageError(f"{where}: {problem}")
    out = {}
    for attr, obj in vars(module).items():
        if attr.startswith("_"):
            continue
        if isinstance(obj, type) and issubclass(obj, Workload) and obj is not Workload \
                and obj.__module__ == module.__name__ and obj.name:
            if not any(type(v) is obj for v in vars(module).values()):
                out[attr] = obj()
        elif isinstance(obj, Workload):
            out[attr] = obj
    return out


def builtin_packages() -> list[str]:
    """Packages of built-in workloads: the ``podscale.workloads`` entry points (a package
    of workload modules each), podscale's own first."""
    from importlib.metadata import entry_points

    names = sorted({ep.value for ep in entry_points(group=ENTRY_POINTS)},
                   key=lambda v: (v not in FALLBACK_PACKAGES, v))
    return names or list(FALLBACK_PACKAGES)


@functools.cache
def builtins() -> dict[str, Found]:
    """name -> built-in workload, from every public module of every built-in package."""
    found: dict[str, Found] = {}
    for name in builtin_packages():
        package = importlib.import_module(name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{name}.{info.name}")
            for attr, wl in _workloads_in(module).items():
                if wl.name in found:
                    raise RuntimeError(f"two built-in workloads named {wl.name!r}")
                found[wl.name] = Found(wl, f"{module.__name__}:{attr}")
    return found


def _load_file(path: Path) -> ModuleType:
    path = path.resolve()
    if not path.is_file():
        raise UsageError(f"{path}: no such workload file")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    name = f"podscale_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        problem = _first_problem(module) if isinstance(exc, TypeError) else None
        if problem:  # e.g. instantiating a protocol 1 class with abstract hooks left
            raise UsageError(f"{path}: {problem}") from None
        raise UsageError(f"{path}: cannot load workload file ({type(exc).__name__}: {exc})") \
            from None
    return module


def _load_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise UsageError(f"cannot import workload module {name!r} ({exc})") from None
    except Exception as exc:
        raise UsageError(f"workload module {name!r} failed to import "
                         f"({type(exc).__name__}: {exc})") from None


def resolve(ref: str) -> Found:
    """The workload a reference names; one-line UsageError listing the known ones."""
    ref = ref.strip()
    if ":" not in ref and not ref.endswith(".py") and "/" not in ref:
        known = builtins()
        if ref in known:
            return known[ref]
        if "." not in ref:
            raise UsageError(f"unknown workload {ref!r} (known: {', '.join(known)}; or "
                             "path/to/file.py:NAME, pkg.module:NAME)")
    target, _, attr = ref.rpartition(":") if ":" in ref else (ref, "", "")
    is_file = target.endswith(".py") or "/" in target
    module = _load_file(Path(target)) if is_file else _load_module(target)
    where = str(Path(target).resolve()) if is_file else target
    found = _workloads_in(module)
    if not attr:
        if len(found) != 1:
            names = ", ".join(found) or "none"
            raise UsageError(f"{target}: name the workload as {target}:NAME (workloads: {names})")
        attr = next(iter(found))
    if attr not in found:
        what = "is not a Workload" if hasattr(module, attr) else "is not defined"
        raise UsageError(f"{target}: {attr!r} {what} (workloads there: "
                         f"{', '.join(found) or 'none'})")
    wl = found[attr]
    if not wl.name:
        raise UsageError(f"{ref}: the workload has no name")
    return Found(wl, f"{where}:{attr}")


def load_source(source: str) -> Workload:
    """A worker's way back from a case's ``source`` to its workload."""
    return resolve(source).workload
