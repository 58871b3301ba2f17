"""A machine's own accelerator chips: the platform chosen once before any process starts,
each process's share of the chips by the runtimes' documented variables, the layouts
refused in one line naming those that fit, and a simulation on a machine with chips said
as such. The chips are planted (PODSCALE_ACCELERATORS): this machine has none."""

from __future__ import annotations

import json
import os

import pytest

from podscale.core.errors import UsageError
from podscale.launch.chips import Chips, check_layouts, fits, process_env
from podscale.launch.platform import choose
from tests.conftest import only_run, podscale, unwrap

V5E_4 = Chips("tpu", "TPU v5 lite", 4, "tpu")
V5E_8 = Chips("tpu", "TPU v5 lite", 8, "tpu")
H100_8 = Chips("gpu", "NVIDIA H100 80GB HBM3", 8, "cuda")
PORTS = [8476, 8477, 8478, 8479, 8480, 8481, 8482, 8483]


def tpu(chips: Chips, hosts: int, index: int) -> dict[str, str]:
    env = process_env(chips, hosts, index, PORTS[:hosts])
    return {k: v for k, v in env.items() if k.startswith(("TPU_", "CLOUD_TPU"))}


def test_four_processes_of_one_chip_on_a_four_chip_host(monkeypatch):
    """The Cloud TPU documentation's example: 4 processes x 1 chip of a 2x2 host."""
    monkeypatch.delenv("TPU_CHIPS_PER_HOST_BOUNDS", raising=False)
    assert tpu(V5E_4, 4, 2) == {
        "TPU_VISIBLE_CHIPS": "2", "TPU_CHIPS_PER_PROCESS_BOUNDS": "1,1,1",
        "TPU_PROCESS_BOUNDS": "2,2,1", "TPU_PROCESS_PORT": "8478", "CLOUD_TPU_TASK_ID": "2",
        "TPU_PROCESS_ADDRESSES": "localhost:8476,localhost:8477,localhost:8478,localhost:8479"}


def test_two_processes_of_two_chips_on_a_four_chip_host(monkeypatch):
    monkeypatch.delenv("TPU_CHIPS_PER_HOST_BOUNDS", raising=False)
    first, second = tpu(V5E_4, 2, 0), tpu(V5E_4, 2, 1)
    assert first["TPU_VISIBLE_CHIPS"] == "0,1" and second["TPU_VISIBLE_CHIPS"] == "2,3"
    assert first["TPU_CHIPS_PER_PROCESS_BOUNDS"] == "1,2,1" == second[
        "TPU_CHIPS_PER_PROCESS_BOUNDS"]
    assert first["TPU_PROCESS_BOUNDS"] == "2,1,1" and second["TPU_PROCESS_PORT"] == "8477"


def test_eight_and_four_processes_on_an_eight_chip_host(monkeypatch):
    """A v5e-8 or v6e-8 host (2x4): 8 x 1 and 4 x 2."""
    monkeypatch.setenv("TPU_CHIPS_PER_HOST_BOUNDS", "2,4,1")
    ones = [tpu(V5E_8, 8, i) for i in range(8)]
    assert [e["TPU_VISIBLE_CHIPS"] for e in ones] == [str(i) for i in range(8)]
    assert {e["TPU_PROCESS_BOUNDS"] for e in ones} == {"2,4,1"}
    assert {e["TPU_CHIPS_PER_PROCESS_BOUNDS"] for e in ones} == {"1,1,1"}
    pairs = [tpu(V5E_8, 4, i) for i in range(4)]
    assert [e["TPU_VISIBLE_CHIPS"] for e in pairs] == ["0,1", "2,3", "4,5", "6,7"]
    assert {(e["TPU_CHIPS_PER_PROCESS_BOUNDS"], e["TPU_PROCESS_BOUNDS"]) for e in pairs} == \
        {("1,2,1", "2,2,1")}
    assert len({e["TPU_PROCESS_PORT"] for e in pairs}) == 4


def test_gpus_and_one_process():
    assert process_env(H100_8, 4, 3, [])["CUDA_VISIBLE_DEVICES"] == "6,7"
    rocm = Chips("gpu", "AMD Instinct MI300X", 8, "rocm")
    assert process_env(rocm, 2, 1, [])["ROCR_VISIBLE_DEVICES"] == "4,5,6,7"
    assert process_env(V5E_8, 1, 0, []) == {"JAX_PLATFORMS": "tpu"}  # every chip its own


def test_layouts_the_chips_cannot_hold_are_refused_naming_those_that_fit(monkeypatch):
    monkeypatch.delenv("TPU_CHIPS_PER_HOST_BOUNDS", raising=False)
    assert fits(V5E_4, 1, 4) and fits(V5E_4, 2, 1) and not fits(V5E_4, 1, 8)
    assert not fits(V5E_4, 3, 1)  # 3 does not divide 4 chips
    with pytest.raises(UsageError) as err:
        check_layouts(V5E_4, [(1, 1), (3, 1)], sockets=True)
    assert str(err.value) == (
        "--hosts 3 --devices-per-host 1 does not fit this machine's 4 TPU v5 lite chips; "
        "what fits: --hosts 1 --devices-per-host 1,2,3,4; --hosts 2 --devices-per-host 1,2; "
        "--hosts 4 --devices-per-host 1")
    with pytest.raises(UsageError, match="opens no socket"):
        check_layouts(V5E_4, [(2, 2)], sockets=False)
    check_layouts(V5E_4, [(1, 4)], sockets=False)  # one process never joins: no socket
    odd = Chips("tpu", "TPU v4", 6, "tpu")  # no host grid of 6 chips to split
    assert fits(odd, 1, 6) and not fits(odd, 2, 3)


def test_the_platform_is_chosen_once_and_said(monkeypatch):
    monkeypatch.setenv("PODSCALE_ACCELERATORS", "tpu:TPU v5 lite:4")
    auto = choose("auto", "local")
    assert auto.chips == Chips("tpu", "TPU v5 lite", 4, "tpu") and not auto.simulate_cpu
    cpu = choose("cpu", "local")
    assert cpu.simulate_cpu and cpu.chips is None and cpu.note == (
        "simulated hosts on the CPU, though this machine has 4 TPU v5 lite chips "
        "(--platform auto measures it)")
    with pytest.raises(UsageError, match="--platform gpu: this machine has 4 TPU v5 lite"):
        choose("gpu", "local")
    assert choose("auto", "mpirun").chips is None  # the cluster's hosts decide
    monkeypatch.setenv("PODSCALE_ACCELERATORS", "none")
    assert choose("auto", "local").simulate_cpu and choose("cpu", "local").note is None
    with pytest.raises(UsageError, match="--platform tpu: this machine has no accelerator"):
        choose("tpu", "local")
    monkeypatch.setenv("PODSCALE_ACCELERATORS", "tpu:4")
    with pytest.raises(UsageError, match="bad PODSCALE_ACCELERATORS"):
        choose("auto", "local")


def test_unasked_layouts_fit_to_the_chips_and_the_rest_said():
    from podscale.core.grid import Grid
    from podscale.launch.chips import fit_layouts

    one = Chips("tpu", "TPU v5 lite", 1, "tpu")
    gs = [Grid(("psum",), hosts=(1, 2), devices_per_host=(1, 2)),
          Grid(("all_reduce",), hosts=(1,), devices_per_host=(2, 4))]
    kept, said = fit_layouts(gs, one, hosts_given=False, devices_given=False)
    assert [(g.workloads, g.hosts, g.devices_per_host) for g in kept] == [(("psum",), (1,), (1,))]
    assert said == ("left out what this machine's 1 TPU v5 lite chip cannot hold: "
                    "--devices-per-host 2, --devices-per-host 4, --hosts 2")
    kept, said = fit_layouts(gs[:1], V5E_4, hosts_given=True, devices_given=True)
    assert kept == gs[:1] and said is None  # given: refused later if it does not fit


def test_dry_run_prints_each_process_share_and_refusals_are_one_line(tmp_path):
    env = {**os.environ, "PODSCALE_ACCELERATORS": "tpu:TPU v5 lite:4"}
    env.pop("TPU_CHIPS_PER_HOST_BOUNDS", None)
    res = podscale("run", "psum", "--sizes", "1K", "--hosts", "2", "--devices-per-host", "2",
                   "--dry-run", "--out", str(tmp_path), env=env)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "# platform: tpu (4 TPU v5 lite chips)"
    procs = [line for line in lines if line.startswith("process ")]
    assert len(procs) == 2 and "TPU_VISIBLE_CHIPS=0,1" in procs[0] and \
        "TPU_VISIBLE_CHIPS=2,3" in procs[1] and "JAX_PLATFORMS=tpu" in procs[0]
    assert "PODSCALE_CPU_DEVICES" not in res.stdout and not list(tmp_path.iterdir())
    res = podscale("run", "psum", "--sizes", "1K", "--hosts", "3", "--out", str(tmp_path),
                   env=env)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "what fits: --hosts 1 --devices-per-host 1,2,3,4;" in res.stderr
    assert not list(tmp_path.iterdir())  # nothing started


def test_a_simulation_beside_chips_says_so(tmp_path):
    """A planted accelerator (a fake device list): the CPU simulation says once, in its
    output, its manifest and its table's header, that chips sat beside it."""
    env = {**os.environ, "PODSCALE_ACCELERATORS": "gpu:NVIDIA H100 80GB HBM3:8"}
    res = podscale("run", "psum", "--sizes", "1K", "--hosts", "1", "--devices-per-host", "1",
                   "--iters", "2", "--warmup", "1", "--rounds", "1", "--platform", "cpu",
                   "--variants", "shard_map", "--out", str(tmp_path), env=env)
    assert res.returncode == 0, res.stderr
    said = ("simulated hosts on the CPU, though this machine has 8 NVIDIA H100 80GB HBM3 "
            "chips (--platform auto measures it)")
    out = unwrap(res.stdout)  # comment lines wrap at 120 columns
    assert out.count(f"# note: {said}") == 1 and max(map(len, res.stdout.splitlines())) <= 120
    assert f"# platform cpu: hosts simulated on this machine's CPU (cpu); note: {said}" in out
    manifest = json.loads((only_run(tmp_path) / "run.json").read_text())
    assert manifest["spec"]["platform"] == "cpu" and manifest["spec"]["platform_note"] == said


def test_a_worker_whose_detected_cluster_never_answers_says_so_in_one_line(tmp_path):
    """``podscale worker`` as rank 1 of an Open MPI job whose coordinator is gone (planted:
    mpirun's variables, no mpirun): one line naming the coordinator, exit 2, within the
    join timeout (JAX itself would end the process with a C++ abort); and with no cluster
    at all, a one-process job that says so."""
    env = {**os.environ, "OMPI_MCA_orte_hnp_uri": "1234.0;tcp://127.0.0.1:1",
           "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "1",
           "OMPI_COMM_WORLD_LOCAL_RANK": "0", "PODSCALE_INIT_TIMEOUT": "2"}
    grid = ["psum", "--sizes", "1K", "--iters", "2", "--warmup", "1", "--rounds", "1",
            "--variants", "shard_map"]
    res = podscale("worker", *grid, "--run-dir", str(tmp_path / "a"), env=env)
    assert res.returncode == 2, res.stdout + res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("podscale: error: process 1 could not reach this job's "
                           "coordinator at 127.0.0.1:") and "within 2s" in line, line
    res = podscale("worker", *grid, "--run-dir", str(tmp_path / "b"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "podscale: no cluster environment found (mpirun, Slurm, TPU VM, Kubernetes, or " \
        "JAX_COORDINATOR_ADDRESS): running as a one-process job" in res.stderr
    # the default devices per host (1,2) fitted to the one CPU device JAX gives it
    assert "each process has 1 device(s): left out --devices-per-host 2" in res.stderr
    manifest = json.loads((tmp_path / "b" / "run.json").read_text())
    assert manifest["status"] == "complete" and manifest["layouts"] == ["h1xd1"]


def test_history_keeps_machines_and_software_apart():
    """The history series key: another chip count, device kind, CPU model or jax release
    is another series; the same machine and software the same one."""
    from podscale.analysis.verdicts.history import hardware

    env = {"platform": "tpu", "device_kind": "TPU v5 lite", "local_device_count": 1}
    soft = {"versions": {"jax": "0.10.2", "jaxlib": "0.10.2", "libtpu": "0.0.30"}}
    key = hardware(env, soft)
    assert key == "tpu:TPU v5 lite x1 (jax 0.10.2, jaxlib 0.10.2, libtpu 0.0.30)"
    assert hardware({**env, "local_device_count": 4}, soft) != key
    assert hardware({**env, "device_kind": "TPU v6 lite"}, soft) != key
    assert hardware(env, {"versions": {**soft["versions"], "jax": "0.10.3"}}) != key
    cpu = {"platform": "cpu", "device_kind": "cpu", "local_device_count": 2}
    a = hardware(cpu, {"cpu_model": "AMD EPYC 7B13", "cpu_governor": "performance"})
    assert a == "cpu:cpu x2 [AMD EPYC 7B13, performance]"
    assert hardware(cpu, {"cpu_model": "Intel Xeon"}) != a


def test_bench_self_measures_the_chips_in_the_stages_that_can(monkeypatch, tmp_path):
    """``bench-self --platform``: a platform the machine lacks is one line before anything
    starts; with chips (planted), the chip-capable stages get them and say so, the rest
    simulate hosts and say that (the stages' own work is replaced: no chip is here)."""
    from podscale.selfbench import stages

    env = {**os.environ, "PODSCALE_ACCELERATORS": "tpu:TPU v5 lite:4"}
    res = podscale("bench-self", "--platform", "gpu", "--out", str(tmp_path / "b.json"),
                   env=env)
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [
        "podscale: error: --platform gpu: this machine has 4 TPU v5 lite chips (--platform auto "
        "takes what it has; cpu simulates hosts)"] and not list(tmp_path.iterdir())
    given = {}
    for name in ("methods", "scale"):
        key, what, _ = stages.RUNNERS[name]
        monkeypatch.setitem(stages.RUNNERS, name, (key, what, lambda w, log, n, chips=None,
                                                   name=name: given.setdefault(name, chips)))
    lines: list[str] = []
    out = stages.run_all(None, log=lines.append, only=("methods", "scale"), chips=V5E_4)
    assert given == {"methods": V5E_4, "scale": None}
    assert lines[0].endswith("on 4 TPU v5 lite chips ...") and \
        lines[1].endswith("(simulated hosts on the CPU) ...")
    assert out["platform"] == {"chips": "4 TPU v5 lite chips",
                               "on_chips": ["methods", "study", "attach"]}
