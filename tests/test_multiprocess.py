"""Real multi-process JAX: simulated hosts as OS processes over 127.0.0.1 with gloo."""

import json

import pytest

from podscale.analysis import load, load_run, summarize
from tests.conftest import only_run, podscale


def _listing(out: str) -> list[str]:
    """The reference listing's own lines in a command's output (not the checks')."""
    return [line for line in out.splitlines() if line.startswith(("-- ", "== Running"))
            or line.startswith("== Worker ") and line.split()[3:5] in (["global", "sum:"],
                                                                   ["local", "sum:"])]


def test_seed_listing_checks_global_sum(tmp_path):
    res = podscale("seed", "--hosts", "2", "--devices-per-host", "4", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr + res.stdout
    out = res.stdout
    for line in ["-- global device count: 8", "-- local device count: 4", "-- JAX version:",
                 "-- v1sp shape:  (4, 250000, 3)", "-- dots shape:  (4, 250000)",
                 "== Worker 1 global sum:", "== Worker 0 local sum:", "== Worker 1 done"]:
        assert line in out
    assert "## seed check passed" in out
    seeds = [json.loads(p.read_text()) for p in (only_run(tmp_path) / "seed").glob("*.json")]
    total = sum(s["local_sum"] for s in seeds)
    for s in seeds:
        assert all(abs(g - total) < 1e-3 * max(1.0, abs(total)) for g in s["global_sum"])
    # the listing as printed (examples/reference.py calls jax.distributed.initialize() with
    # no arguments) runs unmodified under podscale profile and prints the same lines
    profiled = podscale("profile", "--hosts", "2", "--devices-per-host", "4", "--out",
                        str(tmp_path / "profiled"), "examples/reference.py")
    assert profiled.returncode == 0, profiled.stderr + profiled.stdout
    assert _listing(profiled.stdout) == _listing(out) and len(_listing(out)) == 13
    # one host: its call with no arguments joins a one-process job all the same
    alone = podscale("profile", "--hosts", "1", "--devices-per-host", "2", "--out",
                     str(tmp_path / "alone"), "examples/reference.py")
    assert alone.returncode == 0, alone.stderr + alone.stdout
    assert "-- global device count: 2" in alone.stdout and "coordinator" not in alone.stderr


@pytest.mark.parametrize("fault,devices,lines,bad", [
    # corrupted dot products on process 1 are found there (the global sum, computed before,
    # still agrees)
    ("corrupt@1:*", "1", ["== Worker 0 dot products: 0 wrong of 1000000",
                          "== Worker 1 dot products: 1000000 wrong of 1000000"], "1"),
    # process 1's share left out of the global sums: the float check's worst-case bound (a
    # million float32 terms) cannot see it, the exact global sum does
    ("drop@1:*", "2", ["== Worker 0 exact global sum: 3 (expected 10)",
                       "(worst-case bound); exact global sum 3 vs 10: MISMATCH"], "0, 1"),
])
def test_seed_finds_planted_faults(tmp_path, fault, devices, lines, bad):
    """The seed check fails with the wrong-results exit code, naming the processes."""
    import os

    res = podscale("seed", "--hosts", "2", "--devices-per-host", devices, "--out",
                   str(tmp_path), env={**os.environ, "PODSCALE_FAULT": fault})
    assert res.returncode == 4, res.stderr + res.stdout[-2000:]
    for line in lines:
        assert line in res.stdout
    assert f"seed check failed on process(es) {bad};" in res.stderr


def test_broken_all_reduce_over_256_devices_is_caught(tmp_path):
    """An all-zero bfloat16 all-reduce over 256 CPU devices in one process: gamma_256 is
    infinite, so the rounding bound passes anything (every element unchecked); the exact
    check on integer inputs finds every element wrong and the run fails."""
    wl = tmp_path / "broken.py"
    wl.write_text("from podscale.suites.all_reduce import AllReduce\n\n\n"
                  "class Broken(AllReduce):\n    name = 'broken_all_reduce'\n\n"
                  "    def body(self, case, axes, x):\n        import jax\n\n"
                  "        return jax.lax.psum(x, axes) * 0\n\n\nbroken = Broken()\n")
    res = podscale("run", f"{wl}:broken", "--hosts", "1", "--devices-per-host", "256",
                   "--dtypes", "bfloat16", "--sizes", "1K", "--variants", "shard_map",
                   "--iters", "2", "--warmup", "1", "--rounds", "1", "--out", str(tmp_path))
    assert res.returncode == 4, res.stderr + res.stdout[-2000:]
    cases = load_run(only_run(tmp_path)).cases
    (row,) = cases.itertuples()
    assert row.exact_checked == 256 * 512 and row.wrong == row.exact_checked
    assert row.group_members == "0-255"


def envs_devices(envs):
    """The device ids of every process of the run's layouts (a process's devices are
    ``process * 2048 + local`` on the CPU client)."""
    return {p * 2048 + d for p, n in zip(envs["process"], envs["local_device_count"])
            for d in range(n)}


def test_run_records_and_table(small_run):
    run = load_run(small_run)
    manifest, samples, cases, envs = run.manifest, run.samples, run.cases, run.envs
    assert manifest.status == "complete" and manifest.schema == "podscale.run/4"
    assert manifest.environment["versions"]["jax"]
    assert set(envs["process_count"]) == {1, 2}
    assert set(envs["platform"]) == {"cpu"}
    assert (cases["wrong"] == 0).all() and (cases["checked"] > 0).all()
    # raw samples: every process, every iteration of every round, every phase
    timed = samples[samples.phase == "timed"]
    per_case = timed.groupby("case_id").size()
    two_host = [c for c in per_case.index if c.endswith("h2xd2")]
    assert len(two_host) == 12 and all(per_case[c] == 2 * 5 * 2 for c in two_host)
    assert set(samples.phase) == {"compile", "warmup", "timed", "chain", "device"}
    # chain: 3 chains per process and round; device: every execution of every device
    chain = samples[samples.phase == "chain"].groupby("case_id").size()
    assert all(chain[c] == 2 * 3 * 2 for c in two_host)
    device = samples[samples.phase == "device"]
    per_device = device.groupby(["case_id", "process", "device", "round"],
                                observed=True).size()
    assert set(per_device) == {5}, per_device[per_device != 5]
    assert set(device["device"].dropna()) == set(envs_devices(envs))
    assert sorted(set(samples["round"])) == [0, 1] and sorted(set(cases["round"])) == [0, 1]
    # each round is its own launch: its own plan and logs; one env record per process
    assert (small_run / "plans" / "h2xd2-round1.json").is_file()
    assert (small_run / "logs" / "h2xd2-round1" / "process-1.log").is_file()
    assert len(envs) == 1 + 2 and manifest.spec["rounds"] == 2
    table = summarize(samples, cases, prefer=run.prefer)
    assert len(table) == 24 and (table["rounds"] == 2).all() and table["round_cv"].notna().all()
    # on CPU the headline is the chain (run.prefer); every time lies between the fastest
    # sample of its case and the slowest
    assert run.prefer == ("chain", "each", "device") and set(table["method"]) == {"chain"}
    assert table[["each_s", "chain_s", "device_s"]].notna().all().all()
    timed = samples[samples.phase == "chain"]
    timed_by_case = timed.groupby("case_id")["seconds"]
    lo, hi = timed_by_case.min(), timed_by_case.max()
    t = table.set_index("case_id")["time_s"]
    assert ((lo.loc[t.index] <= t) & (t <= hi.loc[t.index])).all()
    psum = table[table.workload == "psum"]
    assert psum.loc[psum.hosts == 2, "busbw"].notna().all()
    assert psum.loc[psum.hosts == 2, "participants"].eq(4).all()
    assert table.loc[table.workload == "dot", "busbw"].isna().all()  # not a collective
    # record columns come from the workloads' own parameters
    assert {"size", "width"} <= set(table.columns) and run.params == ("size", "width")
    assert table.loc[table.workload == "psum", "width"].isna().all()
    df = load(small_run)
    assert {"run_id", "workload", "version", "variant", "size", "hosts", "phase", "seconds",
            "iters", "sync"} <= set(df.columns)


def test_show_prints_nccl_style_table(small_run):
    res = podscale("show", str(small_run))
    assert res.returncode == 0, res.stderr
    assert "busbw" in res.stdout and "#wrong" in res.stdout
    assert "Out of bounds values : 0 OK" in res.stdout


def test_variants_agree(small_run):
    run = load_run(small_run)
    cases = run.cases
    keys = ["workload", "size", "hosts", "devices_per_host", "process", "variant"]
    results = cases.groupby(keys)["result"].first().unstack("variant")
    assert ((results["pmap"] - results["shard_map"]).abs() <= 1e-3 * results["pmap"].abs().clip(
        lower=1)).all()
