"""Pod studies whose results come home: the worker part of every generated command runs
here for real, each process in its own directory (no shared filesystem), joined over
loopback as the pods would be; gcloud and kubectl stay structural (argv and manifests)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from podscale.analysis import load_run
from podscale.launch.local import free_port
from tests.conftest import ROOT, podscale

pytestmark = pytest.mark.cluster

GRID = ["psum,all_reduce", "--sizes", "4KiB", "--devices-per-host", "2", "--platform", "cpu",
        "--iters", "3", "--warmup", "1", "--variants", "shard_map"]


def hosts_run(words: list[str], hosts: int, tmp: Path, env: dict | None = None,
              each: Callable[[int], dict] | None = None) -> list[str]:
    """``words`` (a generated host command) on ``hosts`` processes, process i in
    ``tmp/host-i`` (``each(i)``: its own variables); each process's output. ``podscale``
    is this checkout's."""
    port = free_port()
    argv = [sys.executable, "-m", "podscale", *words[1:]] if words[0] == "podscale" else words
    procs = []
    for i in range(hosts):
        cwd = tmp / f"host-{i}"
        cwd.mkdir(parents=True)
        e = {**os.environ, **(env or {}), **(each(i) if each else {}),
             "PODSCALE_COORDINATOR": f"127.0.0.1:{port}",
             "PODSCALE_NUM_PROCESSES": str(hosts), "PODSCALE_PROCESS_ID": str(i)}
        procs.append(subprocess.Popen(argv, cwd=cwd, env=e, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outs = [p.communicate(timeout=300)[0] for p in procs]
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"host {i}:\n{out[-3000:]}"
    return outs


def test_tpu_study_runs_copies_back_and_reports(tmp_path):
    res = podscale("tpu", "--tpu", "pod; rm -rf /", "--zone", "us-central2-b", "--project", "p",
                   "--setup", "cd ~/podscale", "--run-dir", "run", "--out", str(tmp_path / "home"),
                   "--dry-run", "--", *GRID)
    assert res.returncode == 0, res.stderr
    ssh, mkdir, scp, report = (shlex.split(line) for line in res.stdout.splitlines())
    assert ssh[:6] == ["gcloud", "compute", "tpus", "tpu-vm", "ssh", "pod; rm -rf /"]
    assert "--worker=all" in ssh and "--zone=us-central2-b" in ssh and "--project=p" in ssh
    setup, remote = ssh[-1].removeprefix("--command=").split(" && ", 1)
    assert setup == "cd ~/podscale"
    words = shlex.split(remote)
    assert words[:5] == ["podscale", "worker", "--run-dir", "run", "--gather"]
    assert scp[:6] == ["gcloud", "compute", "tpus", "tpu-vm", "scp", "--recurse"]
    assert scp[6:8] == ["pod; rm -rf /:run", str(tmp_path / "home")] and "--worker=0" in scp
    assert report == ["podscale", "report", str(tmp_path / "home" / "run")]
    hosts_run(words, 2, tmp_path)  # the worker part, for real
    assert not list((tmp_path / "host-1").rglob("*.jsonl"))  # process 0 holds everything
    shutil.copytree(tmp_path / "host-0" / "run", tmp_path / "home" / "run")  # the scp
    res = podscale(*report[1:])
    assert res.returncode == 0, res.stderr
    run = load_run(tmp_path / "home" / "run")
    manifest, cases = run.manifest, run.cases
    assert manifest.status == "complete" and set(cases.process) == {0, 1}
    assert (tmp_path / "home" / "run" / "report" / "index.html").exists()


def test_k8s_job_without_a_volume_comes_home_through_its_log(tmp_path):
    res = podscale("k8s", "--hosts", "2", "--image", "ghcr.io/x/podscale:1", "--name", "ps",
                   "--run-dir", "run", "--", *GRID)
    assert res.returncode == 0, res.stderr
    assert "podscale collect" in res.stdout.splitlines()[1]  # how to collect, as a comment
    _, job = yaml.safe_load_all(res.stdout)
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert "volumes" not in pod and "--print-run" in container["command"]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    assert env["PODSCALE_COORDINATOR"] == "ps-0.ps.default.svc:8476"  # here: 127.0.0.1
    out0, _ = hosts_run(container["command"], int(env["PODSCALE_NUM_PROCESSES"]), tmp_path)
    log = tmp_path / "pod-0.log"
    log.write_text("".join(f"2026-12-03T12:00:00Z {line}\n" for line in out0.splitlines()))
    res = podscale("collect", str(log), "--out", str(tmp_path / "home"))
    assert res.returncode == 0, res.stderr
    run = tmp_path / "home" / "run"
    loaded = load_run(run)
    manifest, cases = loaded.manifest, loaded.cases
    assert manifest.status == "complete" and set(cases.process) == {0, 1}
    assert (run / "report" / "index.html").exists() and "collected" in res.stdout
    # a damaged or cut log is one line naming what is wrong, and nothing is written
    lines = log.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "PODSCALE-RUN 2/" in line)
    bad = lines.copy()  # one base64 character of chunk 2 changed (the crc is the last 8)
    bad[at] = bad[at][:-20] + ("A" if bad[at][-20] != "A" else "B") + bad[at][-19:]
    for name, text, want in (("bad", bad, "chunk 2 of"), ("cut", lines[:at], "chunk(s) 2")):
        (tmp_path / f"{name}.log").write_text("\n".join(text))
        res = podscale("collect", str(tmp_path / f"{name}.log"), "--out", str(tmp_path / name))
        assert res.returncode == 2 and want in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
        assert not (tmp_path / name / "run").exists()


def test_k8s_job_with_a_claim_mounts_it():
    res = podscale("k8s", "--hosts", "4", "--image", "img", "--results-pvc", "podscale-results",
                   "--name", "ps", "--", "psum")
    assert res.returncode == 0, res.stderr
    _, job = yaml.safe_load_all(res.stdout)
    pod = job["spec"]["template"]["spec"]
    assert pod["volumes"] == [{"name": "results",
                               "persistentVolumeClaim": {"claimName": "podscale-results"}}]
    (container,) = pod["containers"]
    assert container["volumeMounts"] == [{"name": "results", "mountPath": "/results"}]
    cmd = container["command"]
    assert cmd[cmd.index("--run-dir") + 1] == "/results/ps" and "--gather" in cmd
    assert "--print-run" not in cmd


def test_pods_run_a_users_program_under_attach(tmp_path):
    """--program: every TPU VM (gcloud ssh) or pod runs podscale attach (with
    --attach-args' options) on the user's program, its words quoted; on Kubernetes the
    records need the claim."""
    res = podscale("tpu", "--tpu", "pod", "--zone", "z", "--run-dir", "/tmp/r", "--out",
                   str(tmp_path), "--dry-run", "--program", "train.py", "--attach-args",
                   "--profile-every 100", "--", "--lr", "3; x")
    assert res.returncode == 0, res.stderr
    ssh = shlex.split(res.stdout.splitlines()[0])
    assert shlex.split(ssh[-1].removeprefix("--command=")) == [
        "podscale", "attach", "--run-dir", "/tmp/r", "--profile-every", "100",
        "--profile-length", "2", "train.py", "--lr", "3; x"]
    res = podscale("k8s", "--hosts", "2", "--image", "img", "--program", "/app/train.py")
    assert res.returncode == 2 and "--program needs --results-pvc" in res.stderr
    program = str(ROOT / "tests" / "programs" / "train.py")
    res = podscale("k8s", "--hosts", "2", "--image", "img", "--results-pvc", "claim",
                   "--name", "ps", "--run-dir", "run", "--program", program,
                   "--attach-args", "--step local_step --hang-timeout 60", "--", "--steps", "12")
    assert res.returncode == 0, res.stderr
    _, job = yaml.safe_load_all(res.stdout)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["podscale", "attach", "--run-dir", "run", "--step",
                                    "local_step", "--hang-timeout", "60.0", program,
                                    "--steps", "12"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["PODSCALE_NUM_PROCESSES"] == "2"  # what attach's initialize() joins with
    # the pods' part for real, each process in its own folder (no shared filesystem):
    # process 1's record reaches process 0's run directory through the key-value store
    hosts_run(container["command"], 2, tmp_path / "pods", env={"JAX_PLATFORMS": "cpu"})
    run = tmp_path / "pods" / "host-0" / "run"
    assert not (tmp_path / "pods" / "host-1" / "run" / "run.json").exists()
    from podscale.analysis.profile.summary import summarize_profile

    s = summarize_profile(run)
    assert s.ledger.groupby("process").size().to_dict() == {0: 12, 1: 12}
    assert s.profile.manifest.status == "complete"


def test_a_multi_slice_jobset_and_xpk_command_run_here_as_slices_of_hosts(tmp_path):
    """``podscale jobset`` (JobSet v1alpha2, GKE's multi-slice TPU example) checked field by
    field; its pods' command run here as 2 slices x 2 hosts with the MEGASCALE_* variables
    the JobSet gives them, the run back through podscale collect on process 0's log; the
    xpk command of the same job; a TPU type or host count that cannot be, one line."""
    res = podscale("jobset", "--slices", "2", "--tpu-type", "v5p-16", "--image", "img:1",
                   "--name", "ms", "--run-dir", "run", "--", *GRID, "--devices-per-host", "1")
    assert res.returncode == 0, res.stderr
    (js,) = yaml.safe_load_all(res.stdout)
    assert (js["apiVersion"], js["kind"]) == ("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert js["metadata"]["annotations"] == {
        "alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}
    (rj,) = js["spec"]["replicatedJobs"]
    job = rj["template"]["spec"]
    assert rj["replicas"] == 2 and job["parallelism"] == job["completions"] == 2
    pod = job["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
                                   "cloud.google.com/gke-tpu-topology": "2x2x2"}
    (c,) = pod["containers"]
    assert c["resources"]["limits"] == {"google.com/tpu": "4"}
    env = {e["name"]: e.get("value") or e["valueFrom"]["fieldRef"]["fieldPath"]
           for e in c["env"]}
    assert env == {
        "JOBSET_NAME": "metadata.annotations['jobset.sigs.k8s.io/jobset-name']",
        "MEGASCALE_NUM_SLICES": "metadata.labels['jobset.sigs.k8s.io/replicatedjob-replicas']",
        "MEGASCALE_SLICE_ID": "metadata.labels['jobset.sigs.k8s.io/job-index']",
        "MEGASCALE_COORDINATOR_ADDRESS": "$(JOBSET_NAME)-slice-0-0.$(JOBSET_NAME)"}
    outs = hosts_run(c["command"], 4, tmp_path, each=lambda i: {
        "MEGASCALE_NUM_SLICES": "2", "MEGASCALE_SLICE_ID": str(i // 2),
        "MEGASCALE_COORDINATOR_ADDRESS": "127.0.0.1"})
    (tmp_path / "pod-0.log").write_text(outs[0])
    res = podscale("collect", str(tmp_path / "pod-0.log"), "--out", str(tmp_path / "home"))
    assert res.returncode == 0, res.stderr
    run = load_run(tmp_path / "home" / "run")
    assert set(run.cases["case_id"].str.split("/").str[-1]) == {"s2xh2xd1"}
    assert sorted((int(p), e["slice"]) for p, e in zip(run.envs["process"], run.envs["extra"])
                  ) == [(0, 0), (1, 0), (2, 1), (3, 1)]
    res = podscale("xpk", "--slices", "4", "--tpu-type", "v6e-16", "--image", "img:1",
                   "--cluster", "c1", "--", "psum", "--sizes", "1M")
    *how, command = res.stdout.splitlines()
    assert res.returncode == 0 and command.startswith(
        "xpk workload create --cluster c1 --workload podscale --docker-image img:1 "
        "--tpu-type v6e-16 --num-slices 4 --command 'podscale worker --run-dir "), res.stdout
    assert command.endswith("psum --sizes 1M --slices 4'"), res.stdout
    # how the run comes home, said as a comment: process 0's log, by the JobSet's labels
    assert how[0].startswith("# results: process 0 prints the gathered run at the end of its")
    assert "jobset.sigs.k8s.io/jobset-name=podscale,jobset.sigs.k8s.io/job-index=0" in how[1]
    for bad, said in ((["--hosts", "3"], "a v5p-16 slice (2x2x2, 8 chips) has 2 host(s)"),
                      (["--tpu-type", "v7-16"], "bad --tpu-type 'v7-16'")):
        res = podscale("jobset", "--slices", "2", "--tpu-type", "v5p-16", "--image", "i",
                       *bad, "--", "psum")
        assert res.returncode == 2 and said in res.stderr and not res.stdout, res.stderr
