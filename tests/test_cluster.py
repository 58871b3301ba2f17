"""Cluster launchers for real on this machine: Open MPI's mpirun and a single-node Slurm
cluster; generators for sbatch, TPU VM pods and Kubernetes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from podscale.analysis import load_run
from podscale.analysis.profile.load import load_profile
from tests.conftest import ROOT, only_run, podscale

pytestmark = pytest.mark.cluster

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_oob_tcp_if_include": "lo", "OMPI_MCA_btl_tcp_if_include": "lo",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
GRID = ["--hosts", "2", "--devices-per-host", "2", "--sizes", "4K", "--iters", "3",
        "--warmup", "1", "--platform", "cpu"]
needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None,
                                  reason="Open MPI's mpirun not installed (make test installs it)")


def env(**extra: str) -> dict:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PATH": path, **extra}


def sbatch_wait(script: Path, chdir: Path, environ: dict, timeout: float = 300) -> int:
    """Submit a batch script and wait for its end, polling the job's state every 0.25 s
    (``sbatch --wait`` polls at 2, 4, 8 ... 32 s: a 10 s job took 10 to 42 s); its exit
    code."""
    job = subprocess.run(["sbatch", "--parsable", f"--chdir={chdir}", str(script)],
                         capture_output=True, text=True, timeout=60, env=environ)
    assert job.returncode == 0, job.stderr
    job_id = job.stdout.strip().split(";")[0]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        show = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True,
                              text=True, env=environ).stdout
        fields = dict(f.split("=", 1) for f in show.split() if "=" in f)
        state = fields.get("JobState")
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                     "OUT_OF_MEMORY"):
            code = int(fields.get("ExitCode", "1:0").split(":")[0])
            return code if code or state == "COMPLETED" else 1
        time.sleep(0.25)
    subprocess.run(["scancel", job_id], env=environ)
    raise AssertionError(f"batch job {job_id} still running after {timeout:g}s")


@needs_mpirun
def test_mpirun_run_and_fault(tmp_path):
    res = podscale("run", "--rounds", "1",
                   "dot,psum", *GRID, "--launcher", "mpirun", "--out", str(tmp_path / "a"),
                   env=env(**MPI_ENV))
    assert res.returncode == 0, res.stderr + res.stdout
    run = load_run(only_run(tmp_path / "a"))
    manifest, cases, envs = run.manifest, run.cases, run.envs
    assert manifest.status == "complete" and manifest.spec["launcher"] == "mpirun"
    assert set(envs["process_count"]) == {2} and (cases["wrong"] == 0).all()
    # 2 workloads x 2 variants, each recorded by both processes (never an empty frame)
    assert cases["case_id"].nunique() == 4 and len(cases) == 8
    assert (cases["checked"] > 0).all()
    res = podscale("run", "--rounds", "1",
                   "dot", *GRID, "--launcher", "mpirun", "--out", str(tmp_path / "b"),
                   env=env(**MPI_ENV, PODSCALE_FAULT="raise@1:0"))
    assert res.returncode == 3
    assert "(mpirun): process 1 failed (mpirun exited with code 1)" in res.stderr
    assert "injected failure in process 1" in res.stderr


@needs_mpirun
def test_mpirun_hosts_run_podscale_worker_with_gather(tmp_path):
    run_dir = tmp_path / "run"
    cmd = ["mpirun", "-np", "2", "--tag-output", sys.executable, "-m", "podscale", "worker",
           "dot,psum", "--run-dir", str(run_dir), "--gather", "--platform", "cpu", "--sizes", "4K",
           "--devices-per-host", "1,2", "--iters", "3", "--variants", "shard_map",
           "--rounds", "2"]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=env(**MPI_ENV))
    assert res.returncode == 0, res.stdout[-3000:]
    run = load_run(run_dir)
    manifest, samples, cases = run.manifest, run.samples, run.cases
    assert manifest.status == "complete"
    assert sorted(manifest.layouts) == ["h2xd1", "h2xd2"]  # device subsets, same processes
    # two rounds one after another in the same job (a cluster job cannot relaunch itself)
    assert sorted(set(samples["round"])) == [0, 1] and manifest.spec["rounds"] == 2
    # process 0 wrote process 1's records, gathered with multihost_utils
    assert set(cases["process"]) == {0, 1} and set(samples["process"]) == {0, 1}


@needs_mpirun
def test_mpirun_seed(tmp_path):
    res = podscale("seed", "--hosts", "2", "--devices-per-host", "4", "--launcher", "mpirun",
                   "--platform", "cpu", "--out", str(tmp_path), env=env(**MPI_ENV))
    assert res.returncode == 0, res.stderr + res.stdout
    assert "## seed check passed" in res.stdout and "-- global device count: 8" in res.stdout


def free_port_pair() -> int:
    """A port p with p and p+1 free on loopback (slurmctld and slurmd)."""
    import socket

    from podscale.core.ports import listen_port

    for _ in range(50):
        with socket.socket() as a:
            port = listen_port()  # below the ephemeral range: no connection takes it
            a.bind(("127.0.0.1", port))
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
                return port
    raise RuntimeError("no free port pair")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    if shutil.which("slurmctld") is None or shutil.which("munged") is None:
        pytest.skip("Slurm (slurm-wlm) and munge are not installed (make test installs them)")
    if os.geteuid() != 0:
        pytest.skip("starting slurmctld/slurmd/munged for a local test cluster needs root")
    state = tmp_path_factory.mktemp("slurm")
    port = free_port_pair()
    up = subprocess.run(["bash", str(ROOT / "tests/cluster/slurm-up.sh"), str(state)],
                        capture_output=True, text=True, timeout=120,
                        env={**os.environ, "PODSCALE_SLURM_PORT": str(port)})
    if up.returncode != 0:
        pytest.fail(f"single-node Slurm did not start: {up.stderr}")
    yield {"SLURM_CONF": up.stdout.strip()}
    subprocess.run(["bash", str(ROOT / "tests/cluster/slurm-down.sh"), str(state)])


def test_srun_in_single_node_slurm(slurm, tmp_path):
    res = podscale("run", "--rounds", "1",
                   "dot,psum", *GRID, "--launcher", "srun", "--out", str(tmp_path),
                   env=env(**slurm))
    assert res.returncode == 0, res.stderr + res.stdout
    run = load_run(only_run(tmp_path))
    manifest, cases, envs = run.manifest, run.cases, run.envs
    assert manifest.status == "complete" and set(envs["process_count"]) == {2}
    assert cases["case_id"].nunique() == 4 and len(cases) == 8  # never an empty frame
    assert (cases["checked"] > 0).all() and (cases["wrong"] == 0).all()
    res = podscale("run", "--rounds", "1",
                   "psum", *GRID, "--launcher", "srun", "--out", str(tmp_path / "f"),
                   env=env(**slurm, PODSCALE_FAULT="exit@0:0"))
    assert res.returncode == 3 and "(srun): process 0 failed (srun exited" in res.stderr
    assert "injected fault: exit" in res.stderr


def test_generated_sbatch_script_runs(slurm, tmp_path):
    out = tmp_path / "out"
    res = podscale("sbatch", "--nodes", "1", "--time", "00:10:00", "--", "psum", "--hosts", "1",
                   "--devices-per-host", "2", "--sizes", "1K", "--iters", "2", "--platform", "cpu",
                   "--out", str(out))
    assert res.returncode == 0, res.stderr
    script = tmp_path / "job.sh"
    script.write_text(res.stdout)
    assert "#SBATCH --nodes=1" in res.stdout and "--launcher srun" in res.stdout
    code = sbatch_wait(script, tmp_path, env(**slurm))
    logs = "".join(p.read_text() for p in tmp_path.glob("podscale-*.out"))
    assert code == 0, logs
    assert "--report" in res.stdout  # the shared filesystem keeps the run; report at the end
    assert load_run(only_run(out)).status == "complete"
    assert (only_run(out) / "report" / "index.html").exists()


def test_k8s_manifest():
    res = podscale("k8s", "--hosts", "4", "--image", "ghcr.io/x/podscale:1", "--gpus-per-host",
                   "8", "--", "psum", "--sizes", "1M", "--devices-per-host", "8")
    assert res.returncode == 0, res.stderr
    service, job = list(yaml.safe_load_all(res.stdout))
    assert service["kind"] == "Service" and service["spec"]["clusterIP"] == "None"
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == 4
    container = spec["template"]["spec"]["containers"][0]
    assert container["command"][:2] == ["podscale", "worker"]
    env_vars = {e["name"]: e for e in container["env"]}
    assert env_vars["PODSCALE_NUM_PROCESSES"]["value"] == "4"
    assert env_vars["PODSCALE_COORDINATOR"]["value"].startswith("podscale-0.podscale.")
    assert "job-completion-index" in json.dumps(env_vars["PODSCALE_PROCESS_ID"])
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"


def test_unknown_launcher_and_missing_gcloud(tmp_path):
    res = podscale("run", "--rounds", "1", "dot", "--launcher", "pbs", "--out", str(tmp_path))
    assert res.returncode == 2 and "invalid choice" in res.stderr
    res = podscale("tpu", "--tpu", "x", "--zone", "z", "--", "psum",
                   env={**os.environ, "PATH": "/nonexistent"})
    assert res.returncode == 2 and "gcloud not found" in res.stderr


@needs_mpirun
def test_impossible_layout_on_a_cluster_is_a_usage_error(tmp_path):
    # --platform auto: JAX finds one CPU device per process, the grid asks for two
    res = podscale("run", "--rounds", "1",
                   "dot", "--hosts", "2", "--devices-per-host", "2", "--sizes", "4K",
                   "--launcher", "mpirun", "--platform", "auto", "--out", str(tmp_path),
                   env=env(**MPI_ENV))
    assert res.returncode == 2, res.stderr
    assert "needs 2 devices per process, process" in res.stderr and "has 1" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_split_by_rank_joins_interleaved_fragments():
    from podscale.launch.cluster import split_by_rank

    text = ("[1,0]<stdout>:-- global device count:[1,1]<stdout>:== W[1,0]<stdout>: 8\n"
            "[1,1]<stdout>:orker 1\n[1,0]<stderr>:RuntimeError: x\nmpirun's own line\n")
    assert split_by_rank(text, "mpirun") == {0: ["-- global device count: 8", "RuntimeError: x"],
                                             1: ["== Worker 1"]}
    assert split_by_rank("0: a\n1: b\nsrun: error: x\n0: c\n", "srun") == {0: ["a", "c"],
                                                                          1: ["b"]}


SAY_AT_ONCE = """
import sys, time
from podscale.core.lines import say
rank, at, count = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
time.sleep(max(0.0, at - time.time()))  # every rank at the same instant
for i in range(count):
    say(f"L {rank} {i} " + "x" * 300, err=True)
say("\\n".join(f"B {rank} {i} " + "y" * 100 for i in range(count)))  # on stdout
"""


@needs_mpirun
@pytest.mark.alone
def test_lines_written_at_the_same_instant_stay_whole_under_mpirun(tmp_path):
    """6 ranks under ``mpirun --tag-output`` write 200 long lines each at the same instant
    on standard error (where podscale's messages go; a pipe there): every line reaches
    mpirun's output whole, tagged once with its own rank. Standard output is a
    pseudo-terminal under Open MPI, read in pieces as they arrive whatever the writer
    does: a 200-line block there comes back whole as messages, its fragments joined
    by rank (what ``podscale collect`` and the launcher's culprit read). (Alone on the
    machine: a line waits at most 0.5 s for mpirun's reader to take what the pipe holds,
    podscale.core.lines; beside three test workers and a busy loop the reader fell
    further behind, one line came in two pieces, and the readers joined them.)"""
    import re

    from podscale.core.lines import rejoin_mpirun

    script = tmp_path / "say.py"
    script.write_text(SAY_AT_ONCE)
    at, count = time.time() + 4, 200
    res = subprocess.run(["mpirun", "-np", "6", "--tag-output", "sh", "-c",
                          f'exec "{sys.executable}" {script} $OMPI_COMM_WORLD_RANK {at} {count}'],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=env(**MPI_ENV, PYTHONUNBUFFERED="1"))
    assert res.returncode == 0, res.stderr[-2000:]
    whole = re.compile(r"^\[1,(\d)\]<stderr>:L (\d) (\d+) x{300}$")
    said = [whole.match(line) for line in res.stderr.splitlines()]
    assert all(said), next(line for line, m in zip(res.stderr.splitlines(), said) if not m)
    assert all(m[1] == m[2] for m in said if m)
    assert len({(m[2], m[3]) for m in said if m}) == len(said) == 6 * count
    block = re.compile(r"^B (\d) (\d+) y{100}$")
    messages = [(rank, block.match(line)) for rank, line in rejoin_mpirun(res.stdout)]
    assert all(m and int(m[1]) == rank for rank, m in messages), messages[:3]
    assert len({m.groups() for _, m in messages if m}) == len(messages) == 6 * count


def messages(out: str) -> list[str]:
    """Every rank's messages in mpirun's tagged output (a message that came in several
    fragments joined: what a reader means by a line)."""
    from podscale.launch.cluster import split_by_rank

    return [line for lines in split_by_rank(out, "mpirun").values() for line in lines]


def mpirun_worker(tmp_path: Path, n: int, *extra: str, **env_extra: str
                  ) -> tuple[subprocess.CompletedProcess, float, Path]:
    run_dir = tmp_path / "run"
    cmd = ["mpirun", "-np", str(n), "--tag-output", sys.executable, "-m", "podscale",
           "worker", "psum", "--run-dir", str(run_dir), "--gather", "--platform", "cpu",
           "--sizes", "1K,2K", "--devices-per-host", "1", "--iters", "3",
           "--variants", "shard_map", "--rounds", "1", *extra]
    start = time_now()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240,
                         env=env(**MPI_ENV, **env_extra))
    return res, time_now() - start, run_dir


def time_now() -> float:
    import time

    return time.monotonic()


@needs_mpirun
def test_stuck_rank_named_where_no_supervisor_watches(tmp_path):
    """mpirun + podscale worker, 8 processes as 4 slices (a multi-slice job's
    ``MEGASCALE_NUM_SLICES``), process 5 hangs in its first case: every process ends
    within --case-timeout + 10 s, the output and run.json name process 5, its slice and
    where it stands, and how long the others waited."""
    import re

    res, took, run_dir = mpirun_worker(tmp_path, 8, "--case-timeout", "6",
                                       PODSCALE_FAULT="hang@5:0", MEGASCALE_NUM_SLICES="4")
    assert res.returncode != 0
    out = res.stdout + res.stderr
    # the first processes to see it say why the job ends (later ones may find the
    # coordination service already gone with process 0, and say that instead)
    lines = [line for line in messages(out) if "no progress for 6s" in line
             and "behind:" in line]
    assert lines, out[-3000:]
    assert all("behind: process 5 (slice 2) at case 0 (psum@1/" in line for line in lines), \
        lines[:3]
    assert all(re.search(r"the other 7 waited ([6-9]|1[0-2])s", line) for line in lines), lines[:3]
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "failed" and "behind: process 5" in manifest["error"]
    assert _verdict_after(manifest) <= 6 + 10, manifest  # by the run's own clock
    assert took < 200  # the job's start on two cores, whatever the load: not a hang
    assert not survivors(f"--run-dir {run_dir}")  # no process left


def _verdict_after(manifest: dict) -> float:
    """Seconds from the run's manifest being written (every process joined: the job's
    start, however long the processes took to start on a loaded machine, is not in it)
    to the stuck-rank verdict marking it failed, by the run's own clock (1 s stamps)."""
    from datetime import datetime

    created, finished = (datetime.fromisoformat(manifest[k]) for k in ("created", "finished"))
    return (finished - created).total_seconds() - 1


def survivors(pattern: str, grace: float = 5.0) -> list[str]:
    """``ps`` lines of the processes whose command line holds ``pattern`` still there
    ``grace`` seconds on (a process killed as mpirun returns may be mid-exit a moment)."""
    deadline = time.monotonic() + grace
    while True:
        found = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True,
                               text=True).stdout.split()
        if not found or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if not found:
        return []
    ps = subprocess.run(["ps", "-o", "pid,ppid,stat,etimes,args", "-p", ",".join(found)],
                        capture_output=True, text=True).stdout
    return ps.splitlines()[1:]


@needs_mpirun
def test_process_stuck_inside_a_step_named(tmp_path):
    """mpirun -np 4 podscale worker, process 2 stuck inside its step (host side) in case 1
    while the others wait for it at the collective: every line that says why names
    process 2 alone, and where; the others end with one line each, no runtime abort."""
    res, took, run_dir = mpirun_worker(tmp_path, 4, "--case-timeout", "6",
                                       PODSCALE_FAULT="stall@2:1")
    assert res.returncode != 0
    out = res.stdout + res.stderr
    said = [line for line in messages(out) if "no progress for 6s" in line]
    assert len(said) >= 3, out[-3000:]
    assert all("behind: process 2 at case 1 (psum@1/" in line and
               "warmup iteration 0, inside its step, not yet dispatched" in line
               for line in said), said
    manifest = json.loads((run_dir / "run.json").read_text())
    assert "behind: process 2 at case 1" in manifest["error"]
    assert _verdict_after(manifest) <= 6 + 10, manifest  # by the run's own clock
    for noise in ("Terminating process because the coordinator detected",
                  "RPC", "Check failure stack trace", "*** SIGABRT"):
        assert noise not in out, out[-3000:]
    assert took < 200


@needs_mpirun
def test_mismatched_program_stops_before_timing(tmp_path):
    """8 processes, process 5 with another XLA_FLAGS (as a host with another environment
    would have): stopped before any case, in one line naming process 5 and the flag."""
    res, _, run_dir = mpirun_worker(
        tmp_path, 8, PODSCALE_FAULT_ENV="5:XLA_FLAGS=--xla_cpu_enable_fast_min_max=false")
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "differ, so they would run different programs" in out, out[-3000:]
    assert ("env XLA_FLAGS: process 5 '--xla_cpu_enable_fast_min_max=false' vs processes "
            "0-4,6,7 ''") in out
    assert not list(run_dir.glob("records/*/*.jsonl")) or all(
        '"type": "case"' not in p.read_text() for p in run_dir.glob("records/*/*.jsonl"))


@needs_mpirun
@pytest.mark.alone
def test_mpirun_attach_names_the_straggler(tmp_path):
    """Every rank runs ``podscale attach`` under Open MPI, no podscale front end: JAX's own
    cluster detection joins the job, rank 0 keeps the manifest, and the run directory gives
    the same straggler verdict as ``podscale profile`` (tests/test_profile.py). (Alone on
    the machine, as that test is: beside three test workers and a busy loop, the 4 ranks'
    steps took as long as the planted 80 ms sleep, and process 2, sleeping, gave its core
    to the others, so that at steps 30-32 nobody waited for it.)"""
    from podscale.analysis.profile.summary import summarize_profile

    program = ROOT / "tests" / "programs" / "train.py"
    run_dir = tmp_path / "run"
    cmd = ["mpirun", "-np", "4", "--tag-output", sys.executable, "-m", "podscale", "attach",
           "--run-dir", str(run_dir), str(program), "--slow", "2:30:0.08"]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=env(**MPI_ENV))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    s = summarize_profile(run_dir)
    assert s.profile.manifest.status == "complete" and s.step == "local_step"
    late = s.blame[s.blame["step"] >= 30]
    assert (late["last"] == 2).sum() >= 28, late
    assert 2.4 * 0.85 <= late.loc[late["last"] == 2, "lost"].sum() <= 2.4 * 1.15
    assert s.table.set_index("process").loc[2, "straggler"] == "chronic"


def test_generated_sbatch_script_attaches_a_program(slurm, tmp_path):
    """podscale sbatch --program: srun podscale attach runs the user's program on every
    node of the allocation (JAX's Slurm detection joins the job) with the capture window of
    --attach-args, then podscale replay of the step it saved (srun), then its report."""
    program = ROOT / "tests" / "programs" / "train.py"
    res = podscale("sbatch", "--nodes", "1", "--time", "00:10:00", "--program", str(program),
                   "--run-dir", str(tmp_path / "run"), "--attach-args", "--profile-steps 5:7",
                   "--", "--steps", "12")
    assert res.returncode == 0, res.stderr
    assert "srun podscale attach --run-dir \"$RUN\" --profile-steps 5:7 " in res.stdout
    assert "podscale replay \"$RUN\" --launcher srun || true" in res.stdout
    script = tmp_path / "job.sh"
    script.write_text(res.stdout)
    code = sbatch_wait(script, tmp_path, env(**slurm, JAX_PLATFORMS="cpu",
                                             XLA_FLAGS="--xla_force_host_platform_device_count=2"))
    logs = "".join(p.read_text() for p in tmp_path.glob("podscale-*.out"))
    assert code == 0, logs
    from podscale.analysis.profile.summary import summarize_profile

    (run_dir,) = tmp_path.glob("run-*")
    s = summarize_profile(run_dir)
    assert s.profile.manifest.status == "complete" and s.step == "local_step" and s.steps == 12
    assert "process 0: final loss" in logs
    assert (run_dir / "report" / "summary.md").exists()
    # the step's all-reduce over the process's 2 devices, replayed alone by srun
    assert (run_dir / "hlo" / "h1xd2" / "local_step.hlo.txt").exists()
    assert len(list(run_dir.glob("*-replay/run.json"))) == 1
    assert "# in the step vs alone" in logs and "In the step vs alone" in (
        run_dir / "report" / "summary.md").read_text()


@needs_mpirun
def test_attach_names_the_process_that_stopped(tmp_path):
    """Under mpirun, no podscale front end: every process pauses 5 s together at step 2
    (no alarm: an idle pause of all is not a hang), then process 1 stops before step 5
    and stays alive. With --hang-timeout 3 every process is gone promptly, the job exits
    non-zero, and the verdict names process 1 at the program's own line and the others
    inside step 5's computation; every process's stacks are kept."""
    program = ROOT / "tests" / "programs" / "hangs.py"
    run_dir = tmp_path / "run"
    cmd = ["mpirun", "-np", "3", sys.executable, "-m", "podscale", "attach", "--run-dir",
           str(run_dir), "--hang-timeout", "3", str(program), "5"]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=env(**MPI_ENV))
    assert res.returncode != 0, res.stdout[-2000:]
    verdict = next(line for line in res.stderr.splitlines()
                   if line.startswith("podscale: hang: no progress for 3s"))
    assert "process 1 at hangs.py:" in verdict and "time.sleep(3600)" in verdict, verdict
    assert "in Python after local_step #4" in verdict, verdict
    assert "processes 0, 2 inside local_step #5" in verdict, verdict
    assert "desync" not in verdict  # a process behind the others launched nothing else
    assert "Traceback" not in res.stderr
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "failed" and manifest["error"].startswith("hang: ")
    assert "hangs.py" in (run_dir / "hang" / "process-1.txt").read_text()
    calls = load_profile(run_dir).calls  # the steps before the hang are kept
    steps = calls[calls["name"] == "local_step"]
    assert steps.groupby("process").size().to_dict() == {0: 5, 1: 5, 2: 5}
    pids = [json.loads(p.read_text().splitlines()[0])["pid"]
            for p in (run_dir / "profile").glob("process-*.jsonl")]

    def alive(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
        except (FileNotFoundError, IndexError):
            return False

    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids):
        assert len(pids) == 3 and time.monotonic() < deadline, f"left running: {pids}"
        time.sleep(0.05)


@needs_mpirun
def test_replay_of_a_program_attached_under_mpirun(tmp_path):
    """``podscale replay RUN`` for a program that mpirun ran under ``podscale attach`` (no
    front end): the step program saved at the first capture, its all-reduce replayed alone
    by workers mpirun starts, beside its time in the captured steps."""
    from podscale.analysis.profile.summary import summarize_profile
    from podscale.analysis.verdicts.interference import interference
    from podscale.analysis.verdicts.replay import replay_run
    from podscale.core.manifest import read_manifest

    program = ROOT / "tests" / "programs" / "train.py"
    run_dir = tmp_path / "run"
    cmd = ["mpirun", "-np", "2", sys.executable, "-m", "podscale", "attach", "--run-dir",
           str(run_dir), "--profile-steps", "5:7", str(program), "--steps", "10"]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=env(**MPI_ENV))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert (run_dir / "hlo" / "h2xd1" / "local_step.hlo.txt").exists()
    res = podscale("replay", str(run_dir), "--launcher", "mpirun", "--platform", "cpu",
                   "--rounds", "1", env=env(**MPI_ENV))
    assert res.returncode == 0, res.stderr + res.stdout
    rep = replay_run(run_dir)
    assert rep is not None and read_manifest(rep).spec["replay_of"] == "run"
    t = interference(run_dir, summarize_profile(run_dir))
    assert list(t["kind"]) == ["all_reduce"] and list(t["rounds"]) == [1], t
    assert t["alone"].iloc[0] > 0 and t["in_step"].iloc[0] > 0
    assert "# in the step vs alone" in res.stdout


def test_mpiruns_root_refusal_said_in_words_that_say_it():
    from podscale.launch.cluster import _launcher_says

    log = ("# mpirun -np 2 ...\n" + "-" * 74 + "\nmpirun has detected an attempt to run as "
           "root.\n\nRunning as root is *strongly* discouraged ...\nWe reiterate our advice "
           "against doing so - please proceed at your own risk.\n" + "-" * 74 + "\n")
    said = _launcher_says(log)
    assert said.startswith("mpirun refuses to run as root: set OMPI_ALLOW_RUN_AS_ROOT=1"), said
