"""Real multi-process JAX: simulated hosts as OS processes over 127.0.0.1 with gloo."""

import json

from podscale.analysis import load, load_run, summarize
from tests.conftest import only_run, podscale


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


def test_seed_checks_every_dot_product(tmp_path):
    """Corrupted dot products on process 1 are found there (the global sum, computed
    before, still agrees): the seed check fails with the wrong-results exit code."""
    import os

    res = podscale("seed", "--hosts", "2", "--devices-per-host", "1", "--out", str(tmp_path),
                   env={**os.environ, "PODSCALE_FAULT": "corrupt@1:*"})
    assert res.returncode == 4, res.stderr + res.stdout[-2000:]
    assert "== Worker 0 dot products: 0 wrong of 1000000" in res.stdout
    assert "== Worker 1 dot products: 1000000 wrong of 1000000" in res.stdout
    assert "seed check failed on process(es) 1;" in res.stderr


def test_run_records_and_table(small_run):
    run = load_run(small_run)
    manifest, samples, cases, envs = run.manifest, run.samples, run.cases, run.envs
    assert manifest.status == "complete" and manifest.schema == "podscale.run/3"
    assert manifest.environment["versions"]["jax"]
    assert set(envs["process_count"]) == {1, 2}
    assert set(envs["platform"]) == {"cpu"}
    assert (cases["wrong"] == 0).all() and (cases["checked"] > 0).all()
    # raw samples: every process, every iteration of every round, every phase
    timed = samples[samples.phase == "timed"]
    per_case = timed.groupby("case_id").size()
    two_host = [c for c in per_case.index if c.endswith("h2xd2")]
    assert len(two_host) == 8 and all(per_case[c] == 2 * 5 * 2 for c in two_host)
    assert set(samples.phase) == {"compile", "warmup", "timed"}
    assert sorted(set(samples["round"])) == [0, 1] and sorted(set(cases["round"])) == [0, 1]
    # each round is its own launch: its own plan and logs; one env record per process
    assert (small_run / "plans" / "h2xd2-round1.json").is_file()
    assert (small_run / "logs" / "h2xd2-round1" / "process-1.log").is_file()
    assert len(envs) == 1 + 2 and manifest.spec["rounds"] == 2
    table = summarize(samples, cases)
    assert len(table) == 16 and (table["rounds"] == 2).all() and table["round_cv"].notna().all()
    # every time lies between the fastest sample of its case and the slowest
    timed_by_case = timed.groupby("case_id")["seconds"]
    lo, hi = timed_by_case.min(), timed_by_case.max()
    t = table.set_index("case_id")["time_s"]
    assert ((lo.loc[t.index] <= t) & (t <= hi.loc[t.index])).all()
    psum = table[table.workload == "psum"]
    assert psum.loc[psum.hosts == 2, "busbw"].notna().all()
    assert psum.loc[psum.hosts == 2, "participants"].eq(4).all()
    assert table.loc[table.workload == "dot", "busbw"].isna().all()  # not a collective
    # record columns come from the workloads' own parameters
    assert {"size", "width"} <= set(table.columns) and table.attrs["params"] == ["size", "width"]
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
