"""Case model, grid expansion, workload registry and plan round trips (no JAX)."""

import json

import pytest

from podscale.core.case import Case, Layout, Settings
from podscale.core.errors import UsageError
from podscale.core.grid import Grid, expand
from podscale.core.parsing import parse_size, parse_sizes
from podscale.core.plan import Plan, group_by_layout, launches
from podscale.core.registry import builtins, resolve


def test_parse_size_and_sweeps():
    assert parse_size("4096") == 4096
    assert parse_size("64K") == 65536
    assert parse_size("1m") == 1 << 20
    assert parse_size("4KiB") == 4096 and parse_size("1MiB") == 1 << 20
    assert parse_size("2**10") == 1024
    assert parse_sizes("1K:8K:x2") == [1024, 2048, 4096, 8192]
    assert parse_sizes("1K:64K:x4,3") == [1024, 4096, 16384, 65536, 3]
    for bad in ("lots", "1K:2K", "4K:1K:x2", "1K:4K:x1"):
        with pytest.raises(UsageError):
            parse_sizes(bad)


def test_builtins_are_discovered_with_sources():
    found = builtins()
    assert {"dot", "psum"} <= set(found)
    assert found["psum"].source == "podscale.suites.psum:psum"
    assert found["psum"].workload.collective == "all_reduce"
    assert found["dot"].workload.param("width").default == 3
    with pytest.raises(UsageError, match=r"unknown workload 'nope' \(known: .*dot.*psum"):
        resolve("nope")


def test_expand_groups_by_layout_and_declared_params():
    grid = Grid(("dot", "psum"), hosts=(1, 2), devices_per_host=(1, 2),
                params=(("size", ("8", "16")), ("width", ("3", "5"))))
    cases = expand(grid)
    # dot: 2 sizes x 2 widths; psum: 2 sizes (it has no width) -- per variant and layout
    assert len(cases) == 4 * (2 * 2 * 2 + 2 * 2)
    assert [k.key for k in group_by_layout(cases)] == ["h1xd1", "h1xd2", "h2xd1", "h2xd2"]
    assert len({c.id for c in cases}) == len(cases)
    assert {c.p.get("width") for c in cases if c.workload == "psum"} == {None}
    one = next(c for c in cases if c.workload == "dot")
    assert one.id.startswith("dot@1/pmap/float32/size=8/width=3/")


@pytest.mark.parametrize(
    "grid, message",
    [
        (Grid(("dot",), params=(("op", ("sum",)),)), "no selected workload has a parameter 'op'"),
        (Grid(("dot",), params=(("size", ("3",)),), devices_per_host=(2,)), "not divisible"),
        (Grid(("dot",), params=(("width", ("x",)),)), "parameter width: 'x' is not of kind int"),
        (Grid(("dot",), variants=("jit",)), "supports variants pmap, shard_map"),
        (Grid(("psum",), local_axes=(("a", 3),), devices_per_host=(2,)), "do not make 2"),
        (Grid(("psum",), local_axes=(("hosts", 2),), devices_per_host=(2,)), "distinct"),
    ],
)
def test_bad_grids(grid, message):
    with pytest.raises(UsageError, match=message):
        expand(grid)


def test_counts_below_one_are_refused_naming_the_option():
    for field, flag in (("hosts", "--hosts"), ("devices_per_host", "--devices-per-host"),
                        ("slices", "--slices")):
        with pytest.raises(UsageError, match=f"^{flag} 2,0: want counts >= 1, got 0"):
            Grid(("dot",), **{field: (2, 0)})


def test_layout_axes_and_keys():
    default = Layout(2, 4)
    assert default.axes == (("hosts", 2), ("local", 4)) and default.key == "h2xd4"
    cube = Layout(2, 4, (("chip", 2), ("core", 2)))
    assert cube.axis_names == ("hosts", "chip", "core") and cube.key == "h2xd4-chip2xcore2"
    assert Layout.from_dict(cube.to_dict()) == cube


def test_processes_are_every_process_and_hosts_are_per_slice():
    """One meaning per word (#66): a layout's ``processes`` are all of them, its
    ``hosts_per_slice`` what ``--hosts`` gives; ``.hosts`` on a layout or a case (which
    counted every process) warns, and mypy fails on any use of it in podscale."""
    lay = Layout(4, 2, slices=2)
    assert (lay.processes, lay.hosts_per_slice, lay.devices, lay.key) == (4, 2, 8, "s2xh2xd2")
    assert Layout.from_dict(lay.to_dict()) == lay  # records keep the form's word, "hosts"
    with pytest.warns(DeprecationWarning, match="read .processes"):
        assert lay.hosts == 4
    case = Case("psum", 1, "builtin:psum", "shard_map", "float32", lay, (("size", 8),),
                Settings())
    assert case.processes == 4
    with pytest.warns(DeprecationWarning, match="read .processes"):
        assert case.hosts == 4


def test_case_identity_includes_version_params_layout_and_settings():
    lay = Layout(1, 2)
    a = Case("psum", "1", "podscale.suites.psum:psum", "pmap", "float32", lay, (("size", 8),))
    b = Case("psum", "2", "podscale.suites.psum:psum", "pmap", "float32", lay, (("size", 8),))
    c = Case("psum", "1", "podscale.suites.psum:psum", "pmap", "float32", lay, (("size", 8),),
             Settings(sync="once"))
    assert a.id != b.id  # the version is part of the id
    assert a.id == c.id and a != c  # settings: same id, different identity (compare refuses)
    assert Case.from_dict(json.loads(json.dumps(c.to_dict()))) == c


def test_plan_roundtrip_and_launches(tmp_path):
    cases = expand(Grid(("dot", "psum"), hosts=(1, 2), devices_per_host=(1, 2),
                        params=(("size", ("8",)),)))
    groups = launches(cases)
    assert [(k.key, [lp.layout.key for lp in g]) for k, g in groups] == [
        ("h1xd2", ["h1xd1", "h1xd2"]), ("h2xd2", ["h2xd1", "h2xd2"])]
    launched, layouts = groups[1]
    plan = Plan(str(tmp_path), launched, tuple(layouts), gather=True,
                env=(("XLA_FLAGS", "--xla_cpu_enable_fast_math=false"),))
    assert Plan.read(plan.write(tmp_path / "p.json")) == plan
    with pytest.raises(UsageError, match="bad environment variable name"):
        Plan(str(tmp_path), launched, tuple(layouts), env=(("NOT-A-NAME", "1"),))
    assert [c.id for c in plan.cases] == [c.id for c in cases if c.processes == 2]
    (tmp_path / "bad.json").write_text(json.dumps({**plan.to_dict(), "schema": "x/0"}))
    with pytest.raises(UsageError, match="plan schema 'x/0'"):
        Plan.read(tmp_path / "bad.json")


def test_user_workload_file_by_path(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("from podscale import Mapped, Param, Work\n"
                    "class Mine(Mapped):\n    name = 'mine'\n"
                    "    params = (Param('n', 4),)\n"
                    "    def body(self, case, axes, x): return x\n"
                    "    def inputs(self, ctx): return ()\n"
                    "    def reference(self, ctx, local): return None\n"
                    "    def work(self, case): return Work(0)\n"
                    "mine = Mine()\nother = 3\n")
    found = resolve(f"{path}:mine")
    assert found.workload.name == "mine" and found.source == f"{path.resolve()}:mine"
    assert resolve(str(path)).source == found.source  # the file's only workload
    with pytest.raises(UsageError, match="'other' is not a Workload"):
        resolve(f"{path}:other")
    with pytest.raises(UsageError, match="no such workload file"):
        resolve(str(tmp_path / "missing.py") + ":x")
    (tmp_path / "broken.py").write_text("import nonexistent_module_xyz\n")
    with pytest.raises(UsageError, match="cannot load workload file.*ModuleNotFoundError"):
        resolve(str(tmp_path / "broken.py") + ":x")
    # incomplete, or written to protocol 1: one line saying what to change, before any start
    (tmp_path / "half.py").write_text("from podscale import Workload\n"
                                      "class Half(Workload):\n    name = 'half'\n"
                                      "half = Half()\n")
    with pytest.raises(UsageError, match=r"Half: does not implement inputs, output, place, "
                                         r"program, reference, work \(the abstract hooks"):
        resolve(str(tmp_path / "half.py"))
    (tmp_path / "old.py").write_text("from podscale import Mapped\n"
                                     "class Old(Mapped):\n    name = 'old'\n"
                                     "    def body(self, axes, x): return x\n")
    with pytest.raises(UsageError, match=r"Old: protocol 2: body\(self, axes, ...\) takes the "
                                         r"case first"):
        resolve(str(tmp_path / "old.py"))
    (tmp_path / "older.py").write_text("from podscale import Workload\n"
                                       "class Older(Workload):\n    name = 'older'\n"
                                       "    def step(self, ctx, local): pass\n"
                                       "older = Older()\n")
    with pytest.raises(UsageError, match=r"Older: protocol 2: step\(ctx, local\) is split "
                                         r"into place"):
        resolve(str(tmp_path / "older.py"))
    with pytest.raises(UsageError, match="cannot import workload module"):
        resolve("no_such_pkg_xyz.mod:thing")


def test_a_coordinator_port_is_below_the_ephemeral_range(tmp_path):
    """A port an outgoing connection could be handed meanwhile is never chosen: below the
    kernel's ephemeral range, and free; the range read from its file (a default without)."""
    from podscale.core.ports import LOWEST, ephemeral_start, listen_port

    (tmp_path / "range").write_text("40000\t60999\n")
    assert ephemeral_start(tmp_path / "range") == 40000
    assert ephemeral_start(tmp_path / "none") == 32768
    ports = {listen_port() for _ in range(20)}
    assert all(LOWEST <= p < ephemeral_start() for p in ports) and len(ports) > 1
