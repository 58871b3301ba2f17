"""Real training programs' ways, planted in toy programs under tests/programs (never
edited): processes that never join are refused; a program that runs its own profiler is
never disturbed and podscale's window yields to it or is skipped, said; a process stopped
for 3 s is named at its step; a capture inside an annotation-defined step is booked to the
profiler, not to the step; compiles are start-up skew, not time lost."""

from __future__ import annotations

import re

import pytest

from podscale.analysis.profile.summary import summarize_profile
from podscale.analysis.verdicts.profilefindings import findings
from tests.conftest import ROOT, only_run, podscale

PROGRAMS = ROOT / "tests" / "programs"


def test_processes_that_never_join_are_refused(tmp_path):
    res = podscale("profile", "--hosts", "2", "--out", str(tmp_path),
                   str(PROGRAMS / "alone.py"))
    assert res.returncode == 2, res.stderr
    first = res.stderr.splitlines()[0]
    assert "never joined the job: the program computes without calling " \
           "jax.distributed.initialize() first" in first and "(--hosts 1)" in first, first
    said = findings(summarize_profile(only_run(tmp_path)))
    assert any("never joined the job" in line and "(exit code 2)" in line for line in said)


@pytest.fixture(scope="module")
def stalled(tmp_path_factory):
    """Steps marked by the program's own annotation, process 1 stopped (SIGSTOP) for 3 s
    before step 40, a capture window of steps 10-11."""
    out = tmp_path_factory.mktemp("stalled")
    res = podscale("profile", "--hosts", "2", "--out", str(out), "--profile-steps", "10:12",
                   str(PROGRAMS / "train.py"), "--steps", "60", "--work", "2",
                   "--annotate", "--stop", "1:40:3")
    assert res.returncode == 0, res.stderr + res.stdout[-3000:]
    return summarize_profile(only_run(out))


@pytest.mark.alone
def test_a_process_that_stood_still_is_named_at_its_step(stalled):
    s = stalled
    # (a process also stands still while a compile holds its interpreter: short spans)
    slow = s.slow[(s.slow["cause"] == "stood still") & (s.slow["seconds"] > 2.5)]
    assert len(slow) == 1 and int(slow["process"].iloc[0]) == 1, s.slow
    assert 2.5 < float(slow["silent_s"].iloc[0]) < 4.0 and float(slow["seconds"].iloc[0]) > 2.5
    step = int(slow["step"].iloc[0])
    assert any(line.startswith(f"step {step} took ") and "process 1 stood still for" in line
               for line in findings(s)), findings(s)
    # the backlog seen ready at once after the stop costs no more than the job spent
    wall = float(s.goodput["wall"].max())
    assert float(s.table["lost"].sum()) < 0.5 * wall, s.table
    assert not [line for line in findings(s) if line.startswith("defect: ")]


@pytest.mark.alone
def test_a_capture_inside_the_programs_step_is_the_profilers(stalled):
    """The window's start and stop fall inside annotation-defined steps: booked to the
    profiler column, those steps late for nobody and not anomalous for podscale's cost."""
    s = stalled
    assert s.step == "train"
    g = s.goodput.set_index("process")
    assert len(g) == 2 and (g["profiler"] > 0).all(), g
    captured = s.blame[s.blame["apart"] == "capture"]
    # the window's start and stop land at its edges (steps 9-10 and 11-12)
    assert len(captured) and set(captured["step"]) <= set(range(9, 14)), s.blame
    assert (captured["lost"] == 0).all() and not captured["late"].any()
    # what those steps took above the ideal step is the profiler's, not anomalous
    from podscale.analysis.profile.goodput import ideal_bound
    from podscale.analysis.profile.steps import waits

    led = s.ledger.assign(wait=waits(s.ledger))
    led["wait"] = led[["wait", "busy"]].min(axis=1)
    for p, mine in led.groupby("process"):
        pb = mine["profiler_busy"].clip(upper=(mine["busy"] - mine["wait"]).clip(lower=0))
        own = (mine["busy"] - mine["wait"] - pb).clip(lower=0)
        above = (own - ideal_bound(own)).clip(lower=0)
        ours = above[mine["step"].isin(captured["step"])].sum()
        assert abs(g.loc[p, "anomalous"] - (above.sum() - ours)) < 1e-6, (p, g.loc[p])
        assert g.loc[p, "anomalous"] < 3.5  # the 3 s stop at most


@pytest.mark.alone
def test_an_annotated_steps_figures_are_its_working_programs(stalled):
    """The step the program marks runs local_step, then apply_update: the figures are
    local_step's (the most FLOPs), the other named; its batch is local_step's."""
    from podscale.analysis.profile.figures import figures

    f = figures(stalled)
    assert f["program"] == "local_step" and f["programs"] == ["local_step", "apply_update"]
    assert f["from"].startswith("the leading dimension of local_step's input float32[") and \
        f["from"].endswith(", 32], an input it does not return"), f
    assert f["flops"] > 2 * 256 ** 3  # --work 2: two 256x256 products
    assert any(line.startswith("train: ") and "figures of local_step, the program doing the "
               "step's work (the most FLOPs of its 2 programs; also apply_update)" in line
               for line in findings(stalled)), findings(stalled)


@pytest.mark.alone
def test_start_up_skew_is_no_time_lost(stalled):
    first = stalled.blame.set_index("step").loc[0]
    assert first["apart"] == "compile" and first["lost"] == 0 and not first["late"]


@pytest.mark.parametrize("window,said", [
    ("5:8", "a capture was skipped on every process: the program holds the profiler"),
    ("2:5", "a capture was skipped on every process: the program started its own profiler "
            "session: podscale's capture stopped there (cut short)")])
def test_a_program_running_its_own_profiler_is_never_disturbed(tmp_path, window, said):
    """The program traces itself over steps 4-6 (as MaxText's profiler=xplane): a window
    that finds the profiler held is skipped; one open when the program starts its own
    session stops first. Either way the program finishes and writes its own trace."""
    own = tmp_path / "own"
    res = podscale("profile", "--hosts", "2", "--out", str(tmp_path / "out"),
                   "--profile-steps", window, str(PROGRAMS / "selftrace.py"), str(own),
                   "4", "7", "20")
    assert res.returncode == 0, res.stderr + res.stdout[-3000:]
    for p in (0, 1):
        assert list((own / f"process-{p}").glob("plugins/profile/*/*.xplane.pb")), p
    assert any(line.startswith(said) for line in findings(
        summarize_profile(only_run(tmp_path / "out")))), res.stdout


@pytest.mark.alone
def test_the_figures_a_training_user_reads_and_a_host_bound_step(tmp_path):
    """One process of 2 devices, 512 rows a step (256 per device), a weight of 32 x 1024
    (larger than the batch, its leading dimension 32), load_batch sleeping 10 ms a step:
    throughput is the planted batch over the step time (the weight comes back updated:
    not the batch), MFU the cost analysis' FLOPs over the time over the given peak, the
    step host-bound with load_batch named."""
    from podscale.analysis.profile.figures import figures

    res = podscale("profile", "--hosts", "1", "--devices-per-host", "2", "--out",
                   str(tmp_path), "--peak-tflops", "0.05", "--flops-per-step", "2e6",
                   str(PROGRAMS / "train.py"), "--steps", "30", "--loader", "0:0.01",
                   "--width", "1024")
    assert res.returncode == 0, res.stderr + res.stdout[-3000:]
    s = summarize_profile(only_run(tmp_path))
    f = figures(s)
    assert f["samples"] == 512 and f["unit"] == "samples", f
    assert f["per_s"] == pytest.approx(512 / f["step_s"], rel=0.02)
    assert 0.0095 < f["step_s"] < 0.02, f
    assert f["flops"] > 0 and f["hfu"] == pytest.approx(f["flops"] / f["step_s"] / 0.05e12)
    assert f["memory"]["argument"] >= 256 * 32 * 4  # this device's rows, at least
    # the model's own count beside the hardware's, each with its TFLOP/s: MFU and HFU
    assert f["flops_given"] == 2e6 and f["mfu"] == pytest.approx(
        2e6 / f["step_s"] / 0.05e12) and f["mfu"] != f["hfu"]
    assert f["host_bound"] and f["busy_share"] < 0.5
    said = findings(s)
    assert any(line.startswith("local_step is host-bound: the device is busy") and
               "load_batch (train.py:" in line for line in said), said
    assert any(line.startswith("local_step: ") and "512 samples a step: the leading dimension "
               "of local_step's input float32[512, 32], an input it does not return" in line
               and "(--peak-tflops)" in line and "--flops-per-step 0.002 GFLOP per device a "
               "step (the model's count): " in line and "(the hardware's count is " in line
               for line in said), said
    assert not any(line.startswith("defect:") for line in said)
    # a peak far below the chip's (--peak-tflops 1e-12): an HFU over 100% is a defect
    from podscale.analysis.profile.figures import findings as said_of

    wrong = said_of(s, {**f, "hfu": f["flops"] / f["step_s"] / 1, "peak_tflops": 1e-12})
    assert wrong[0].startswith("defect: local_step's HFU of ") and "exceeds 100%" in wrong[0]


def test_the_flops_of_a_step_that_loops_count_each_trip(tmp_path):
    """tests/programs/scanned.py: 2 microbatches (a fori_loop) of 4 layers (a scan), each a
    64x128 @ 128x128 product: the step's hardware count is 8 products (XLA's cost analysis
    alone counts one, its loops' bodies once), its loops named with their trips."""
    from podscale.analysis.profile.figures import figures

    res = podscale("profile", "--hosts", "1", "--out", str(tmp_path),
                   str(PROGRAMS / "scanned.py"), "12", "4", "2")
    assert res.returncode == 0, res.stderr + res.stdout[-3000:]
    s = summarize_profile(only_run(tmp_path))
    f = figures(s)
    products = 2 * 4 * 2 * 64 * 128 * 128
    assert products <= f["flops"] < 1.02 * products, f["flops"]  # and the tanh, once each
    assert sorted(f["loops"]) == [2, 4], f["loops"]
    assert any("by the hardware's count (XLA's, with 2 loop bodies times their trip counts "
               "(" in line for line in findings(s)), findings(s)


@pytest.mark.alone
def test_compiles_as_a_table_and_checkpoints_as_events(tmp_path):
    """local_step compiled ahead of time (for its memory statistics, as MaxText does) and
    again at its first call; a 0.3 s checkpoint after every 15th step of 50; an eval
    computation first called (compiled) before step 25: each slow step gets its cause."""
    res = podscale("profile", "--hosts", "2", "--out", str(tmp_path),
                   str(PROGRAMS / "train.py"), "--steps", "50", "--aot",
                   "--save-every", "15:0.3", "--late-eval", "25")
    assert res.returncode == 0, res.stderr + res.stdout[-3000:]
    s = summarize_profile(only_run(tmp_path))
    c = s.compiles
    mine = c[c["name"] == "local_step"].groupby("process")["kind"].apply(list).to_dict()
    assert set(mine) == {0, 1}, c
    assert all(k[:2] == ["ahead of time", "first call"] for k in mine.values()), c
    assert (c["backend_s"] > 0).all()  # no 0 µs entries
    said = findings(s)
    assert any(line.startswith("local_step was compiled twice on every process: ahead of "
                               "time (") and "again at its first call (" in line
               for line in said), said
    ph = s.phases.set_index("what")
    (save,) = [w for w in ph.index if w.startswith("save_checkpoint")]
    assert ph.loc[save, "count"] == 3 and ph.loc[save, "steps"] == [15, 30, 45], ph
    assert 0.28 < ph.loc[save, "median"] < 0.36, ph
    assert any(line.startswith(f"{save}: 3 time(s) on every process, after step(s) 15, 30, "
                               "45") for line in said), said
    assert not any(line.startswith("between steps") and "save_checkpoint" in line
                   for line in said), said  # said as events, not averaged per step
    host = s.slow[s.slow["cause"] == "host"]
    assert sorted(host["step"]) == [16, 31, 46], s.slow
    from podscale.analysis.profile import stalls

    # (the Findings list the first five slow steps: under load there may be more)
    saves = stalls.findings(host)
    assert len(saves) == 3 and all("'s host in save_checkpoint" in line for line in saves), \
        saves
    late = s.slow.set_index("step").loc[25]
    assert late["cause"] == "compile" and late["late_s"] > 0.5 * (late["seconds"] -
                                                                  late["median"]), s.slow
    assert any(line.startswith("step 25 took ") and "compiled for" in line
               for line in stalls.findings(s.slow[s.slow["step"] == 25]))
    # (a step the machine's load slowed is the device's: only the planted ones are asserted)
    # goodput and badput by cause: the saves (2 processes x 3 x 0.3 s) are checkpointing,
    # late_eval's device time eval; the causes and the productive time sum to the wall
    from podscale.analysis.profile.badput import CAUSES, badput

    b = badput(s).set_index("process")
    assert 0.8 * 1.8 < b.loc["job", "checkpointing"] < 1.3 * 1.8, b.T
    assert b.loc["job", "eval"] > 0 and b.loc["job", "compile"] > 0.1, b.T
    total = b[list(CAUSES)].sum(axis=1) + b["productive"]
    assert ((total - b["wall"]).abs() < 1e-6).all(), b.T
    assert any(line.startswith("goodput ") and "checkpointing " in line and
               "(UNPRODUCTIVE_CHECKPOINT_SAVE_TIME)" in line for line in said), said


def test_a_program_keeps_the_device_count_it_asks_for_and_a_replaced_one_is_said(tmp_path):
    """As flax's 10_fsdp_and_optimizer.py: the program sets its own 8 CPU devices and a
    (2, 4) mesh. Without --devices-per-host it keeps them and runs; with 4 on 2 hosts
    the replacement is said once, and the processes that die before joining get the
    never-joined hint, each named."""
    program = str(PROGRAMS / "owndevices.py")
    res = podscale("profile", "--hosts", "1", "--out", str(tmp_path / "own"), program)
    assert res.returncode == 0 and "8 devices, sum" in res.stdout, res.stderr + res.stdout
    assert "has no effect" not in res.stdout + res.stderr
    res = podscale("profile", "--hosts", "2", "--devices-per-host", "4", "--out",
                   str(tmp_path / "four"), program)
    said = res.stdout + res.stderr
    assert res.returncode == 1, said
    assert said.count("--devices-per-host gives each process 4 CPU device(s); the program's "
                      "XLA_FLAGS --xla_force_host_platform_device_count=8 has no effect") == 1
    for p in (0, 1):  # the program's own error first, then the hint
        assert re.search(rf"process {p} ended \(exit code 1: \w+Error: .+\) before it joined "
                         "the job: each of its 2 processes ran alone until then", said), said


def test_a_program_that_fails_before_any_jax_keeps_its_own_error(tmp_path):
    """A program that fails at import, and one that never imports JAX and exits 2: the
    error line shows the program's own last error, not the never-joined hint (which
    told them to call jax.distributed.initialize() before computing)."""
    (tmp_path / "imports.py").write_text("import nosuchmodule_of_podscale\n")
    (tmp_path / "usage.py").write_text("import sys\nprint('usage: usage.py DATA', "
                                       "file=sys.stderr)\nsys.exit(2)\n")
    for name, code, said in (("imports", 1, "ModuleNotFoundError: No module named "
                                             "'nosuchmodule_of_podscale'"),
                             ("usage", 2, "usage: usage.py DATA")):
        res = podscale("profile", "--hosts", "2", "--out", str(tmp_path / name),
                       str(tmp_path / f"{name}.py"))
        assert res.returncode == code, res.stderr
        # (the other process may be said not to have joined yet: it is still starting)
        assert f"exited with code {code}; last output: {said}" in res.stderr, res.stderr
        assert "before it joined" not in res.stderr + res.stdout


def test_a_program_reading_its_rank_from_a_launchers_variables(tmp_path):
    """As MaxText's CPU mode reads a Kubernetes Indexed Job's JOB_COMPLETION_INDEX:
    --rank-env k8s gives each process its index there, the program's plain initialize()
    joins podscale's coordinator with the same rank; a program that joins as MaxText's
    hardware=cpu does (every variable of an xpk pod) joins its own; no launcher's own
    detection variables are set (JAX would take that launcher for the job's)."""
    import os

    from podscale.launch.local import RANK_ENVS

    # the program's own device count, which --devices-per-host replaces: said once
    flags = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    res = podscale("profile", "--hosts", "2", "--devices-per-host", "1", "--rank-env", "k8s",
                   "--out", str(tmp_path),
                   str(PROGRAMS / "ranked.py"), "JOB_COMPLETION_INDEX", env=flags)
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    assert "rank 1 of 2 from JOB_COMPLETION_INDEX" in res.stdout
    assert res.stdout.count("--xla_force_host_platform_device_count=8 has no effect") == 1
    # as MaxText's hardware=cpu joins: its rank from JOB_INDEX, PROCESSES_IN_JOB and
    # JOB_COMPLETION_INDEX, JAX_PROCESS_COUNT processes, its own coordinator's port
    from podscale.core.ports import listen_port

    port = str(listen_port())  # below the ephemeral range: no connection takes it meanwhile
    res = podscale("profile", "--hosts", "2", "--rank-env", "k8s", "--out",
                   str(tmp_path / "maxtext"), str(PROGRAMS / "ranked.py"), "maxtext", port)
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    assert "rank 1 of 2 from maxtext" in res.stdout
    for kind, env in RANK_ENVS.items():
        names = set(env(1, 2))
        assert not names & {"SLURM_JOB_ID", "OMPI_MCA_orte_hnp_uri",
                            "KUBERNETES_SERVICE_HOST"}, kind
    bare = podscale("profile", "--hosts", "2", "--out", str(tmp_path / "bare"),
                    str(PROGRAMS / "ranked.py"), "JOB_COMPLETION_INDEX")
    assert bare.returncode == 1 and "KeyError: 'JOB_COMPLETION_INDEX'" in bare.stdout


@pytest.mark.alone
def test_a_straggler_of_a_multi_slice_job_is_named_by_slice_and_host(tmp_path):
    """Two slices of one host each (the MEGASCALE_* variables a multi-slice job's processes
    get): each process records its slice, and the straggler (process 1 sleeping 40 ms
    before each step from step 10) is named by slice and host."""
    res = podscale("profile", "--hosts", "1", "--slices", "2", "--out", str(tmp_path),
                   str(PROGRAMS / "train.py"), "--steps", "30", "--slow", "1:10:0.04")
    assert res.returncode == 0, res.stderr + res.stdout[-3000:]
    s = summarize_profile(only_run(tmp_path))
    assert s.profile.processes.set_index("process")["slice"].to_dict() == {0: 0, 1: 1}
    said = findings(s)
    assert any(line.startswith("slice 1, host 0 (process 1) was last in ") for line in said), \
        said


def test_an_asynchronous_save_is_named_at_the_steps_it_slows(tmp_path):
    """#64: a thread of the program's own ("checkpoint", pickling its state for 0.5 s
    from step 100, holding the interpreter through each call) is read by its CPU clock:
    its time and frame are in both processes' records, none before it started; the slow
    steps while it ran are named with it, never with the host it starved (the steps of a
    run without it are the device's or the host's, tests/test_profile_analysis.py). The
    steps it slows are those on the device meanwhile: on the CPU the host dispatches tens
    of steps ahead, so they are numbered below 100."""
    from podscale.analysis.profile.load import load_profile
    from podscale.analysis.profile.stalls import threads

    res = podscale("profile", "--hosts", "2", "--out", str(tmp_path), str(PROGRAMS / "train.py"),
                   "--steps", "300", "--work", "2", "--async-save", "100:0.5")
    assert res.returncode == 0, res.stderr + res.stdout[-3000:]
    run = only_run(tmp_path)
    bg = load_profile(run).background
    assert set(bg["thread"]) == {"checkpoint"} and set(bg["process"]) == {0, 1}, bg
    assert bg["frame"].str.fullmatch(r"save_async \(train\.py:\d+\)").all(), bg
    cpu = bg.groupby("process")["seconds"].sum()
    assert cpu.between(0.1, 0.6).all(), cpu  # at most its 0.5 s of wall, give or take
    s = summarize_profile(run)
    started = s.ledger[s.ledger["step"] == 100].set_index("process")["seq"]
    assert (bg.groupby("process")["seq"].min() >= started).all(), (bg, started)
    spread = threads(s.profile.background, s.ledger)
    assert abs(spread["seconds"].sum() - cpu.sum()) < 1e-3, (spread, cpu)
    during = s.slow[s.slow["step"].between(100, spread["step"].max())]
    named = during[during["cause"] == "thread"]
    assert len(named) and named["what"].str.startswith("checkpoint in save_async").all(), \
        s.slow
    assert not (during["cause"] == "host").any(), during
    said = "\n".join(findings(s))
    assert re.search(r"process \d's thread checkpoint in save_async \(train\.py:\d+\) used "
                     r"[\d.]+ ms of CPU in it", said), said
