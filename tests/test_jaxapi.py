"""The JAX surface podscale leans on beyond JAX's documented API (podscale/startup/jaxapi.py):
every hook resolves in the JAX CI installs, no other module names one, the floor pyproject
declares is the JAX tested, and each fallback gives the public answer and is said."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.conftest import ROOT

#: what only jaxapi.py may name: JAX's private modules and attributes, its monitoring
#: events
INTERNALS = re.compile(r"jax\._src|_cache_size|_device_assignment|runtime_executable|"
                       r"trace_state_clean|global_state|[\"']/jax/")


def test_every_hook_resolves_in_the_installed_jax():
    from podscale.startup import jaxapi

    assert jaxapi.hooks() == dict.fromkeys(
        ["tracing", "cache_size", "device_order", "module_name", "start_trace",
         "coordination_client", "detected_join", "detected_cluster", "computed"], True)
    assert not jaxapi.DEGRADED


def test_no_other_module_names_a_jax_internal():
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
             for root in ("podscale", "analysis", "suites")
             for p in sorted((ROOT / root).rglob("*.py")) if p.name != "jaxapi.py"
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if INTERNALS.search(line)]
    assert not found, "\n".join(found)
    # and the pattern finds what it is for
    assert INTERNALS.search((ROOT / "podscale/startup/jaxapi.py").read_text())


#: XProf's names only podscale/core/xprof.py may spell (in a string, not a docstring)
XPROF = re.compile(r"XLA Modules|XLA Ops|hlo_module|hlo_op|device_ordinal|"
                   r"profile_start_time|plugins/profile|xplane\.pb")


def xprof_literals(roots: list) -> list[str]:
    """Every string literal naming one of XProf's lines, stats or session layout, outside
    docstrings and podscale/core/xprof.py."""
    import ast

    found = []
    for root in roots:
        for p in sorted(root.rglob("*.py")):
            if p.name == "xprof.py" and p.parent.name == "core":
                continue
            tree = ast.parse(p.read_text())
            docs = {id(n.body[0].value) for n in ast.walk(tree)
                    if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                      ast.AsyncFunctionDef)) and n.body
                    and isinstance(n.body[0], ast.Expr)
                    and isinstance(n.body[0].value, ast.Constant)}
            found += [f"{p}:{n.lineno}: {n.value!r}" for n in ast.walk(tree)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)
                      and id(n) not in docs and XPROF.search(n.value)]
    return found


def test_one_door_to_xplane(tmp_path):
    """XProf's line and stat names and the session layout are spelt once
    (podscale/core/xprof.py), for both readers (JAX's ProfileData, XProf's trace viewer
    JSON); the check finds a planted one."""
    assert xprof_literals([ROOT / d for d in ("podscale", "analysis", "suites", "tools")]) == []
    (tmp_path / "m.py").write_text('"""names "XLA Ops" in its docstring: fine"""\n'
                                   'LINE = "XLA Ops"\n')
    assert len(xprof_literals([tmp_path])) == 1


def test_the_jax_floor_is_the_jax_tested():
    """pyproject admits one JAX minor release, the one CI installs and these canaries
    passed on: a newer one is admitted by raising both bounds once they pass on it."""
    import jax

    from podscale.startup.jaxapi import JAX_FLOOR

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    bounds = {d.split(">=")[0].strip(): d.split(">=")[1] for d in deps if ">=" in d}
    minor = tuple(int(x) for x in JAX_FLOOR.split("."))
    assert bounds["jax"] == bounds["jaxlib"] == f"{JAX_FLOOR},<{minor[0]}.{minor[1] + 1}"
    assert tuple(int(x) for x in jax.__version__.split(".")[:2]) == minor


@pytest.fixture
def degraded():
    from podscale.startup import jaxapi

    before = dict(jaxapi.DEGRADED)
    jaxapi.DEGRADED.clear()
    yield jaxapi.DEGRADED
    jaxapi.DEGRADED.clear()
    jaxapi.DEGRADED.update(before)


def test_tracing_falls_back_on_a_tracer_among_the_arguments(degraded, monkeypatch):
    """Without trace_state_clean: inside a trace, a call with a traced argument is seen as
    traced; outside, one with concrete arrays is not; the fallback is said."""
    import jax
    import jax.numpy as jnp

    from podscale.startup import jaxapi

    monkeypatch.setattr(jaxapi, "_tracing", jaxapi._tracer_among)
    seen = []
    jax.jit(lambda x: seen.append(jaxapi.tracing((x,), {})) or x)(jnp.ones(2))
    assert seen == [True] and jaxapi.tracing((jnp.ones(2),), {}) is False
    monkeypatch.setattr(jaxapi, "_tracing", None)
    assert jaxapi.tracing((jnp.ones(2),), {}) is False and not degraded  # the hook itself


def test_device_order_falls_back_on_the_mesh_or_says_none(degraded):
    """A program whose shardings no longer carry a device assignment: a NamedSharding's
    mesh order, said; with no mesh either, None (replay refuses), never a guessed order."""
    import jax

    from podscale.startup import jaxapi

    mesh = jax.make_mesh((1,), ("d",))

    class Sharding:
        def __init__(self, mesh):
            self.mesh = mesh

    class Program:
        def __init__(self, *shardings):
            self.input_shardings = (list(shardings), {})
            self.output_shardings = ()

    assert jaxapi.device_order(Program(Sharding(mesh))) == [d.id for d in mesh.devices.flat]
    assert "device_order" in degraded
    assert jaxapi.device_order(Program(object())) is None


def test_module_name_falls_back_on_the_programs_text(degraded):
    import jax
    import jax.numpy as jnp

    from podscale.startup import jaxapi

    compiled = jax.jit(lambda x: x * 2).lower(jnp.ones(2)).compile()

    class Older:
        def as_text(self):
            return compiled.as_text()

    assert jaxapi.module_name(compiled) == jaxapi.module_name(Older()) == "jit__lambda"
    assert "module_name" in degraded


def test_a_pmap_without_a_cache_size_is_no_degradation(degraded):
    """A pmapped function never said its cache size: nothing is lost there, and nothing is
    said; a jitted one that stopped saying it is a degradation."""
    import jax

    from podscale.startup import jaxapi

    assert jaxapi.cache_size(jax.pmap(lambda x: x), jitted=False) is None and not degraded
    assert jaxapi.cache_size(object(), jitted=True) is None and "cache_size" in degraded
