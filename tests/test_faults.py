"""A failed, killed, hung or interrupted worker stops the whole run promptly, names the
process, leaves no orphans and keeps the records already written."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from podscale.analysis import load_run
from podscale.core.records import read_manifest
from tests.conftest import ROOT, only_run, podscale, unwrap

RUN = ["run", "--rounds", "1", "dot", "--hosts", "2", "--devices-per-host", "1", "--sizes",
       "4K,8K,16K", "--variants", "pmap,shard_map", "--iters", "3", "--warmup", "1"]


#: SIGINT as a terminal's foreground job has it, then podscale: a suite started in the
#: background by a non-interactive shell passes SIGINT on ignored, and Python then never
#: sees Ctrl-C. Set in the child before it execs podscale, not in a ``preexec_fn`` (a fork
#: of this process, which may hold JAX's threads: JAX warns, and the warning fails a test)
AS_A_TERMINAL_JOB = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                     "os.execv(sys.executable, [sys.executable, '-m', 'podscale', *sys.argv[1:]])")


def start(out: Path, *extra: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", AS_A_TERMINAL_JOB, *RUN, "--out", str(out), *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})}, start_new_session=True,
    )


def wait_for(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)


def worker_pids(run: Path) -> dict[int, int]:
    """Each process's pid, from its env record (the records are read as the workers write
    them: the last line may be half written, and is read on the next look)."""
    pids = {}
    for path in run.glob("records/*/process-*.jsonl"):
        for line in path.read_text().splitlines():
            if '"type": "env"' in line:
                with contextlib.suppress(json.JSONDecodeError):
                    rec = json.loads(line)
                    pids[rec["process"]] = rec["pid"]
    return pids


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def cases_done(run: Path, process: int) -> int:
    return sum(path.read_text().count('"type": "case"')
               for path in run.glob(f"records/*/process-{process}.jsonl"))


def assert_clean_failure(run: Path, pids: dict[int, int], status: str = "failed") -> None:
    assert len(pids) == 2
    wait_for(lambda: not any(alive(p) for p in pids.values()), timeout=5)
    loaded = load_run(run)
    manifest, samples, cases = loaded.manifest, loaded.samples, loaded.cases
    assert manifest.status == status and manifest.error
    # records already written are kept: every case a process recorded has its timed
    # samples, iters x rounds per process, and nothing of a case that never finished
    assert len(cases) >= 1
    timed = samples[samples.phase == "timed"]
    assert set(timed["case_id"]) == set(cases["case_id"])
    per = timed.groupby(["case_id", "process"]).size()
    iters = cases.groupby(["case_id", "process"])["iters"].first() * \
        cases.groupby(["case_id", "process"])["round"].nunique()
    assert (per == iters.loc[per.index]).all() and len(per) == len(iters)


def started_run(out: Path, process: int) -> tuple[subprocess.Popen, Path, dict[int, int]]:
    """A run in the background, once ``process`` has finished its first case; its other
    cases take seconds (1000 iterations each), so the test's signal or kill finds it
    running however fast the machine."""
    proc = start(out, "--iters", "1000")
    wait_for(lambda: any(out.iterdir()))
    run = only_run(out)
    wait_for(lambda: cases_done(run, process) >= 1 and len(worker_pids(run)) == 2)
    return proc, run, worker_pids(run)


@pytest.mark.parametrize("sig, said", [
    (signal.SIGKILL, "process 1 killed by SIGKILL"),
    # JAX's preemption service caught it once the worker had joined: the run went on and
    # ended "complete", exit 0, nothing said
    (signal.SIGTERM, "process 1 received SIGTERM (a preemption, or a scheduler stopping it?)"),
])
def test_killed_worker_stops_run(tmp_path, sig, said):
    proc, run, pids = started_run(tmp_path, 1)
    os.kill(pids[1], sig)
    killed = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - killed < 10
    assert proc.returncode == 3
    assert said in err and "last output:" in err
    assert len(err.strip().splitlines()) == 1
    assert_clean_failure(run, pids)
    res = podscale("report", str(run))  # a failed run still has a report of what it kept
    assert res.returncode == 0, res.stderr
    assert "failed" in (run / "report" / "index.html").read_text()


def test_raising_worker_is_named(tmp_path):
    t0 = time.monotonic()
    res = podscale(*RUN, "--out", str(tmp_path), env={**os.environ, "PODSCALE_FAULT": "raise@1:2"})
    assert res.returncode == 3
    assert "process 1 exited with code 1" in res.stderr
    assert "RuntimeError: injected failure in process 1" in res.stderr
    assert time.monotonic() - t0 < 150  # not a hang; how promptly: the message's own figure
    run = only_run(tmp_path)
    assert_clean_failure(run, worker_pids(run))
    assert cases_done(run, 0) == 2  # cases 0 and 1 completed before the fault


def test_hung_worker_hits_case_timeout(tmp_path):
    t0 = time.monotonic()
    res = podscale(*RUN, "--out", str(tmp_path), "--case-timeout", "4",
                   env={**os.environ, "PODSCALE_FAULT": "hang@1:1"})
    assert res.returncode == 3
    assert "no progress for 4s (case timeout)" in res.stderr
    assert "process 1: [podscale p1] injected fault: hang" in res.stderr
    assert time.monotonic() - t0 < 150  # not a hang; how promptly: the message's own figure
    run = only_run(tmp_path)
    assert_clean_failure(run, worker_pids(run))


def test_a_start_up_is_bounded_by_the_join_not_the_case_timeout(tmp_path):
    """Process 1 starts 4 s late (planted before its join), beyond a 2 s case timeout: a
    start-up is no case, the join's own timeout bounds it, and the run completes. Both
    processes stuck before joining, past the case timeout and the join's 2 s together: the
    launch ends then (at 3 s, before the planted 6 s), naming both as never joined."""
    grid = ["run", "psum", "--hosts", "2", "--devices-per-host", "1", "--sizes", "1K",
            "--iters", "2", "--rounds", "1", "--case-timeout"]
    res = podscale(*grid, "2", "--out", str(tmp_path / "late"),
                   env={**os.environ, "PODSCALE_FAULT": "late=4@1:*"})
    assert res.returncode == 0, res.stderr
    res = podscale(*grid, "1", "--out", str(tmp_path / "stuck"),
                   env={**os.environ, "PODSCALE_FAULT": "late=6@*:*",
                        "PODSCALE_INIT_TIMEOUT": "2"})
    assert res.returncode == 3 and "no progress for 3s before process(es) 0,1 joined the " \
        "job (case timeout 1s + PODSCALE_INIT_TIMEOUT 2s)" in res.stderr, res.stderr


def test_the_end_after_the_last_case_is_no_case_either(tmp_path):
    """Process 1 lingers 5 s after its last case (planted, before the job's end), beyond a
    2 s case timeout: every case is done, the end is no case, and the run completes (it
    failed with exit 3, both processes "done, 0 wrong"). One that lingers past the case
    timeout and the join's 6 s together is stopped then (at 8 s, before the planted 20 s),
    said as an end that hangs (a join's 2 s was once too few beside three busy workers)."""
    grid = ["run", "dot", "--hosts", "2", "--devices-per-host", "1", "--sizes", "4K",
            "--iters", "2", "--rounds", "1", "--variants", "shard_map", "--case-timeout", "2"]
    res = podscale(*grid, "--out", str(tmp_path / "slow"),
                   env={**os.environ, "PODSCALE_FAULT": "linger=5@1:*"})
    assert res.returncode == 0, res.stderr
    assert read_manifest(only_run(tmp_path / "slow")).status == "complete"
    res = podscale(*grid, "--out", str(tmp_path / "stuck"),
                   env={**os.environ, "PODSCALE_FAULT": "linger=20@1:*",
                        "PODSCALE_INIT_TIMEOUT": "6"})
    assert res.returncode == 3 and "no progress for 8s after every process finished its " \
        "cases (case timeout 2s + PODSCALE_INIT_TIMEOUT 6s)" in res.stderr, res.stderr


def test_ctrl_c_shuts_down_cleanly(tmp_path):
    proc, run, pids = started_run(tmp_path, 0)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does to the foreground group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted" in err and "Traceback" not in err
    assert_clean_failure(run, pids, status="interrupted")


def test_busy_coordinator_port_is_avoided(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        res = podscale("run", "--rounds", "1",
                       "psum", "--hosts", "2", "--devices-per-host", "1", "--sizes", "1K",
                       "--iters", "2", "--coordinator-port", str(busy), "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert f"coordinator port {busy} is busy" in res.stderr
    assert read_manifest(only_run(tmp_path)).status == "complete"


DAMAGED = ["not json at all\n", '{"type": "sample", "case_id": 1}\n',
           '{"type": "samples", "case_id": "x", "process": 0, "phase": "timed", '
           '"iterations": [0], "seconds": [-1.0]}\n']


def test_damaged_record_lines_are_left_out_and_named(small_run, tmp_path):
    """Three kinds of damaged line and a line cut off by a killed writer: show, report
    and compare leave them out and say which file, which line and how many; the rest is
    read."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(small_run, copy, ignore=shutil.ignore_patterns("cache", ".cache-*"))
    victim = sorted(copy.glob("records/*/process-0.jsonl"))[0]
    victim.write_text("".join(DAMAGED) + victim.read_text() + '{"type": "samples", "case_')
    res = podscale("show", str(copy))
    assert res.returncode == 0, res.stderr
    note = unwrap(res.stdout).splitlines()[1]  # said in comment lines of 120 columns
    assert note.startswith("# 4 unreadable record line(s) in 1 file(s) left out:"), note
    for line in (1, 2, 3):
        assert f"{victim}:{line}: not a podscale record" in note
    assert "and 1 more" in note  # the cut-off last line, beyond the first three named
    assert "busbw" in res.stdout  # everything else is shown
    assert podscale("report", str(copy)).returncode == 0
    assert "4 unreadable record line(s)" in (copy / "report" / "summary.md").read_text()
    res = podscale("compare", str(small_run), str(copy))
    assert res.returncode == 0 and "B (copy): 4 unreadable record line(s)" in res.stdout
    problems = load_run(copy).problems
    assert problems[-1].endswith("cut off (its writer was stopped mid-line)")


def test_foreign_run_directory(tmp_path):
    (tmp_path / "run.json").write_text('{"schema": "someone-else/3"}')
    res = podscale("show", str(tmp_path))
    assert res.returncode == 2 and "schema 'someone-else/3'" in res.stderr
    (tmp_path / "run.json").write_text("{broken")
    res = podscale("report", str(tmp_path))
    assert res.returncode == 2 and "unreadable manifest" in res.stderr


def test_fault_specs_select_processes_and_workloads():
    from podscale.startup.faults import Fault, parse, wrap_step

    assert parse("stretch=2@*:psum") == Fault("stretch", None, "psum", 2.0)
    assert parse("slow@1:*") == Fault("slow", 1, None, None)
    assert parse("corrupt@0:3") == Fault("corrupt", 0, 3, None)
    f = parse("stretch=2@*:all_reduce")
    assert f.applies(5, 0, "all_reduce") and not f.applies(5, 0, "psum")
    from podscale.core.errors import UsageError

    for bad in ("stretch@*:bad-name", "slow=abc@0:0", "slow=nan@0:0", "nosuch@0:0"):
        with pytest.raises(UsageError, match="CASE an index"):
            parse(bad)

    own = []

    def step():
        t0 = time.perf_counter()
        time.sleep(0.05)
        own.append(time.perf_counter() - t0)

    stretched = wrap_step(f, 0, 0, step, "all_reduce")
    assert wrap_step(f, 0, 0, step, "psum") is step
    ratios = []
    for _ in range(3):  # a loaded machine oversleeps now and then: the least of three
        start = time.perf_counter()
        stretched()
        ratios.append((time.perf_counter() - start) / own[-1])
    assert all(r >= 2 for r in ratios) and min(ratios) < 2.5, ratios  # twice the step's own


#: simulated hosts, each case slow enough that the signal lands mid-run
HOSTS = 4
WIDE = ["run", "--rounds", "1", "psum", "--hosts", str(HOSTS), "--devices-per-host", "1",
        "--sizes", "1K:512K:x2", "--variants", "shard_map", "--iters", "30", "--warmup", "1"]


def wide_run(out: Path) -> tuple[subprocess.Popen, Path, dict[int, int]]:
    """HOSTS processes in the background, once every one has started and process 0 has
    finished its first case."""
    proc = subprocess.Popen([sys.executable, "-m", "podscale", *WIDE, "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    wait_for(lambda: any(out.iterdir()), timeout=180)
    run = only_run(out)
    wait_for(lambda: cases_done(run, 0) >= 1 and len(worker_pids(run)) == HOSTS,
             timeout=240)
    return proc, run, worker_pids(run)


@pytest.mark.parametrize("sig, wide", [(signal.SIGTERM, True), (signal.SIGHUP, False)])
def test_scheduler_signal_stops_every_process(tmp_path, sig, wide):
    """What scancel, a Kubernetes eviction or timeout send, to the front end alone: every
    one of 4 processes (2 for SIGHUP, the same path) stopped, the manifest interrupted
    with the signal, records kept, exit 128 + the signal."""
    proc, run, pids = wide_run(tmp_path) if wide else started_run(tmp_path, 0)
    # every process's first case written: a worker now ends at its SIGTERM at once (JAX's
    # preemption service had held it until the SIGKILL)
    wait_for(lambda: all(cases_done(run, p) >= 1 for p in pids), timeout=60)
    os.kill(proc.pid, sig)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"interrupted by {signal.Signals(sig).name}" in err and "Traceback" not in err
    wait_for(lambda: not any(alive(p) for p in pids.values()), timeout=5)
    assert time.monotonic() - sent < 15
    manifest = read_manifest(run)
    assert manifest.status == "interrupted" and signal.Signals(sig).name in manifest.error
    assert cases_done(run, 0) >= 1 and len(load_run(run).cases) >= len(pids)


def test_killed_front_end_leaves_no_worker_and_is_shown_abandoned(tmp_path):
    """SIGKILL (or the out-of-memory killer) of the front end: its 4 workers end within
    5 s, and show names the run abandoned, with the records it kept."""
    proc, run, pids = wide_run(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    wait_for(lambda: not any(alive(p) for p in pids.values()), timeout=5)
    assert read_manifest(run).status == "running"  # nobody closed it
    res = podscale("show", str(run))
    assert res.returncode == 0, res.stderr
    first = res.stdout.splitlines()[0]
    assert f"abandoned: its front end (pid {proc.pid}" in first and "is gone" in first
    assert "psum" in res.stdout
    assert podscale("report", str(run)).returncode == 0
    assert "abandoned" in (run / "report" / "summary.md").read_text()


SPLIT_WORKLOAD = '''
import os

import numpy as np

from podscale import Collective, sum_bound


class Split(Collective):
    """an all-reduce compiled as one psum, or as two halves where SPLIT is set"""

    name, version, collective = "split", "1", "all_reduce"

    def body(self, case, axes, x):
        import jax
        import jax.numpy as jnp

        if not os.environ.get("SPLIT"):
            return jax.lax.psum(x, axes)
        h = x.shape[-1] // 2
        return jnp.concatenate([jax.lax.psum(x[..., :h], axes),
                                jax.lax.psum(x[..., h:], axes)], axis=-1)

    def combine(self, x, case):
        n = x.shape[-2]
        total = x.sum(axis=-2, keepdims=True)
        bound = sum_bound(n, case.dtype, np.abs(x).sum(axis=-2, keepdims=True), total)
        return np.broadcast_to(total, x.shape), np.broadcast_to(bound, x.shape)


split = Split()
'''


def test_processes_that_compiled_different_collectives_stop_before_running(tmp_path):
    """A workload whose compiled collectives depend on the environment, process 1 with
    another: stopped in one line naming the case and the processes before the step ran
    (the per-case fingerprint of the compiled collectives); the same everywhere: it runs."""
    (tmp_path / "split.py").write_text(SPLIT_WORKLOAD)
    args = ["run", str(tmp_path / "split.py"), "--hosts", "2", "--devices-per-host", "1",
            "--sizes", "4K", "--variants", "shard_map", "--iters", "2", "--rounds", "1"]
    res = podscale(*args, "--out", str(tmp_path / "a"),
                   env={**os.environ, "PODSCALE_FAULT_ENV": "1:SPLIT=1"})
    assert res.returncode == 2, res.stderr
    assert "the processes compiled different collectives" in res.stderr
    assert "collectives: process 0 '" in res.stderr and "vs process 1 '" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    run = only_run(tmp_path / "a")
    assert '"type": "samples"' not in "".join(
        p.read_text() for p in run.glob("records/*/*.jsonl"))  # nothing was measured
    same = podscale(*args, "--out", str(tmp_path / "b"), env={**os.environ, "SPLIT": "1"})
    assert same.returncode == 0, same.stderr


def test_a_failed_join_names_who_never_joined(tmp_path):
    """Process 1 pointed at a coordinator that is not there: the join times out, and the
    one line says why (JAX runtime's status) and which processes never joined."""
    res = podscale(*RUN, "--out", str(tmp_path), env={
        **os.environ, "PODSCALE_INIT_TIMEOUT": "3",
        "PODSCALE_FAULT_ENV": "1:PODSCALE_COORDINATOR=127.0.0.1:9"})
    assert res.returncode == 3, res.stderr
    assert "DEADLINE_EXCEEDED" in res.stderr and "never joined the job: process(es) 0,1" \
        in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "@ 0x" not in res.stderr  # not a line of the C++ stack trace


def test_the_dispatched_mark_spans_only_the_wait_for_a_result():
    """A step marks itself dispatched while it waits for its result and clears the mark
    when the result is ready, so a process that stalls host-side before its second step
    ranks behind peers waiting at the collective (not level with them)."""
    import jax
    import jax.numpy as jnp

    from podscale.core.workload import Step
    from podscale.worker.compiling import compile_step
    from podscale.worker.watchdog import Progress

    seen: list[bool] = []
    compiled = compile_step(Step(jax.jit(lambda x: x + 1), (jnp.ones(3),), True),
                            on_dispatch=seen.append)
    compiled.run()
    compiled.run()
    assert seen == [True, False, True, False]
    stalled, waiting = Progress(2), Progress(0)
    for p in (stalled, waiting):
        p.mark(1, "c", "warmup")
    waiting.dispatched = True  # its second warm-up step, waiting for the stalled peer
    assert stalled.position() < waiting.position()
    assert "not yet dispatched (host side)" in stalled.describe()
    assert "warmup iteration 0" in stalled.describe()
    waiting.mark(1, "c", "check")
    assert "iteration" not in waiting.describe()



WATCHED_EXIT = """
import sys, threading, time, jax
from podscale.core.ports import listen_port
from podscale.startup import jaxapi
from podscale.worker import watchdog

jax.distributed.initialize(f"127.0.0.1:{listen_port()}", num_processes=1, process_id=0)
client = jaxapi.coordination_client()

class SlowService:  # the real client; its answer to a publish comes 1.5 s late
    def __getattr__(self, name):
        return getattr(client, name)

    def key_value_set(self, *args, **kwargs):
        print("publishing", flush=True)
        try:
            client.blocking_key_value_get("podscale/never", 1500)
        except Exception:
            pass
        return client.key_value_set(*args, **kwargs)

stop = watchdog.start(watchdog.Progress(0), SlowService(), 1, 100.0)
time.sleep(2.5)  # the watchdog's first publish (at 2 s) is waiting for its answer
if sys.argv[1] == "stop":
    stop()
alive = [t.name for t in threading.enumerate() if t.name == "podscale-watchdog"]
print("watching:", alive, flush=True)
jax.distributed.shutdown()
"""


def test_the_watchdog_has_ended_before_the_job_is_left():
    """A watchdog call still waiting on the coordination service when the interpreter
    finalizes aborts a process whose run succeeded (CI saw host 0 of a 4-process job end
    with SIGABRT, "FATAL: exception not rethrown", after its run block): the worker stops
    the watchdog before it leaves the job, and stopping it waits out a call in flight.
    Planted: a publish answered 1.5 s late, in flight when the run ends."""
    def leave(how: str) -> str:
        res = subprocess.run([sys.executable, "-c", WATCHED_EXIT, how], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert res.returncode in (0, -signal.SIGABRT), res.stderr[-2000:]
        assert "publishing" in res.stdout, res.stdout
        return res.stdout

    assert "watching: ['podscale-watchdog']" in leave("left")  # the plant holds it
    assert "watching: []" in leave("stop")
