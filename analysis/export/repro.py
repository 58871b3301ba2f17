"""The command that reproduces one case of a run: ``podscale run`` of its workload (the
path the run named it by, for a workload of the user's), layout, variant, dtype, size,
every other parameter, and the settings the case was measured with; after the variables
its processes were given (an A/B arm's ``--env-b``)."""

from __future__ import annotations

import shlex
from typing import Any

from podscale.core.manifest import Manifest

SETTINGS = (("iters", "--iters"), ("warmup", "--warmup"), ("sync", "--sync"),
            ("timing", "--timing"))


def _workload_word(workload: str, manifest: Manifest) -> str:
    """The workload as the run's command line named it: ``path.py:NAME`` or
    ``module:NAME`` for one of the user's, else its name."""
    for word in manifest.command:
        for spec in word.split(","):
            where = spec.removesuffix(f":{workload}")
            if where != spec and "=" not in where and (
                    where.endswith(".py") or where.replace(".", "").isidentifier()):
                return spec
    return workload


def command_of(case: dict[str, Any], params: list[str], manifest: Manifest) -> str:
    """``podscale run ...`` of this case alone (one round: add --rounds to judge), after
    the variables the run's processes were given (an A/B arm's)."""
    env = [f"{k}={v}" for k, v in sorted((manifest.spec.get("env") or {}).items())]
    words = [*env, "podscale", "run", _workload_word(str(case["workload"]), manifest),
             "--hosts", str(int(case["hosts"])),
             "--devices-per-host", str(int(case["devices_per_host"]))]
    slices = case.get("slices")
    if slices and slices == slices and int(slices) > 1:
        words += ["--slices", str(int(slices))]
    words += ["--variants", str(case["variant"]), "--dtypes", str(case["dtype"])]
    if case.get("size") == case.get("size") and case.get("size") is not None:
        words += ["--sizes", str(int(case["size"]))]
    for p in params:
        v = case.get(p)
        if v is not None and v == v:
            words += ["-p", f"{p}={int(v) if isinstance(v, float) and v.is_integer() else v}"]
    for key, flag in SETTINGS:
        v = case.get(key)
        if v is not None and v == v:
            words += [flag, str(int(v) if isinstance(v, float) else v)]
    platform = manifest.spec.get("platform")
    if platform and platform != "auto":
        words += ["--platform", str(platform)]
    return shlex.join(words)
