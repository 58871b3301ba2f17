"""Bad input: one line on stderr, exit 2, nothing started."""

import os
import re

import pytest

from tests.conftest import ROOT, only_run, podscale


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "nosuch"], "unknown workload 'nosuch' (known: all_gather, all_reduce,"),
        (["run", "psum", "--param", "op=max"], "no selected workload has a parameter 'op'"),
        (["run", "psum", "--param", "op"], "bad --param 'op'"),
        (["run", "psum", "--sizes", "4K:1K:x2"], "bad size sweep"),
        (["run", "psum", "--local-axes", "a=3", "--devices-per-host", "2"], "do not make 2"),
        (["run", "/nonexistent/w.py:f"], "no such workload file"),
        (["list", "/nonexistent/w.py:f"], "no such workload file"),
        (["run", "dot", "--sizes", "5", "--devices-per-host", "2"], "not divisible"),
        (["run", "dot", "--hosts", "0"], "--hosts 0: want counts >= 1, got 0"),
        (["run", "dot", "--hosts", "a,b"], "bad hosts list"),
        (["run", "dot", "--sizes", "huge"], "bad size"),
        (["run", "dot", "--bogus"], "unrecognized arguments"),
        (["run", "dot", "--timing", "each,wall"], "bad timing 'each,wall': name one or more"),
        (["run", "dot", "--timing", ","], "name one or more of each, chain, device"),
        (["compare", "/nonexistent/a", "/nonexistent/b", "--judge", "wall"],
         "bad --judge 'wall'"),
        (["history", "/nonexistent", "--judge", "wall"], "invalid choice: 'wall'"),
        (["run", "matmul", "-p", "shape=8x9", "--hosts", "1"], "matmul: bad shape '8x9'"),
        (["show", "/nonexistent/run"], "no such run directory"),
        (["replay", "dot", "--hosts", "1,2"], "podscale replay takes one case"),
        (["run", "all_reduce", "--group-sizes", "3", "--hosts", "2"], "group 3 does not divide"),
        (["collect", "/nonexistent.log"], "cannot read /nonexistent.log"),
        (["frobnicate"], "invalid choice"),
        (["run", "psum", "--name", "../../x"], "bad run name '../../x'"),
        (["k8s", "--hosts", "2", "--image", "x", "--", "nosuch"], "unknown workload 'nosuch'"),
        (["k8s", "--hosts", "2", "--image", "x"], "name the workloads after --"),
        (["k8s", "--hosts", "0", "--image", "x", "--", "psum"], "--hosts must be >= 1"),
        (["k8s", "--hosts", "2", "--gpus-per-host", "-1", "--image", "x", "--", "psum"],
         "--gpus-per-host must be >= 0"),
        (["k8s", "--hosts", "3", "--image", "x", "--", "all_reduce", "--group-sizes", "2"],
         "group 2 does not divide the 3 devices"),
        (["tpu", "--tpu", "t", "--zone", "z", "--dry-run", "--", "nosuch"], "unknown workload"),
        (["tpu", "--tpu", "t", "--zone", "z", "--dry-run"], "name the workloads after --"),
        (["sbatch", "--nodes", "2", "--", "psum", "--hosts", "0"], "--hosts 0: want counts >= 1"),
        (["sbatch", "--nodes", "2", "--", "psum", "--sizes", "0"], "out of range"),
        (["report", "/nonexistent/run"], "no such run directory"),
        (["fit", "/nonexistent/run"], "no such run directory"),
        (["run", "psum", "--case-timeout", "nan"], "must be a finite number of seconds > 0"),
        (["seed", "--case-timeout", "inf"], "must be a finite number of seconds > 0"),
        (["replay", "psum", "--predict", "-4"], "--predict takes participant counts >= 2"),
        (["replay", "psum", "--predict", "0"], "--predict takes participant counts >= 2"),
        (["bench-self", "--only", ""], "--only names no stage"),
        (["k8s", "--hosts", "4", "--image", "x", "--", "psum", "--hosts", "2"],
         "--hosts 2 after -- contradicts the job's 4 process(es)"),
        (["sbatch", "--nodes", "1", "--", "psum"], "the grid runs 2 hosts but the job "
                                                   "allocates 1 node(s)"),
        (["worker", "--run-dir", "/nonexistent/run", "--hosts", "1,2", "psum"],
         "a job has one process count"),
        (["ab", "psum", "--env-b", "PODSCALE_PROCESS_ID=3"],
         "podscale sets PODSCALE_PROCESS_ID itself"),
        (["sbatch", "--nodes", "1", "--program", "tests/programs/train.py", "--attach-args",
          "--profile-steps 5"], "bad --attach-args: --profile-steps '5': want A:B"),
        (["sbatch", "--nodes", "1", "--attach-args", "--step x", "--", "psum"],
         "--attach-args are podscale attach's options: give --program too"),
        (["k8s", "--hosts", "2", "--image", "x", "--results-pvc", "r", "--program", "/a/t.py",
          "--attach-args", "--run-dir /x"], "the job's run directory is --run-dir's own"),
        (["tpu", "--tpu", "t", "--zone", "z", "--dry-run", "--program", "/a/t.py",
          "--attach-args", "--hang-timeout soon"], "bad --attach-args: argument --hang-timeout"),
    ],
)
def test_bad_input_one_line_exit_2(args, message, tmp_path):
    res = podscale(*args, "--out", str(tmp_path)) if args[0] == "run" else podscale(*args)
    assert res.returncode == 2, res.stderr
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr
    assert not any(tmp_path.iterdir())


def test_replay_of_a_run_refuses_what_it_cannot_replay(tmp_path):
    """``podscale replay RUN``: a folder that is not a profiled run, one that saved no step
    program, and grid options the run itself decides: one line, exit 2."""
    plain = tmp_path / "plain"
    plain.mkdir()
    bare = tmp_path / "bare"
    (bare / "profile").mkdir(parents=True)
    saved = tmp_path / "saved"
    (saved / "profile").mkdir(parents=True)
    (saved / "hlo" / "h2xd1").mkdir(parents=True)
    (saved / "hlo" / "h2xd1" / "step.hlo.txt").write_text("HloModule step")
    (saved / "hlo" / "h2xd1" / "step.json").write_text('{"hosts": 2, "devices_per_host": 1}')
    for args, message in (([plain], "not a run of podscale profile or podscale attach"),
                          ([bare], "no step program was saved"),
                          ([saved, "--hosts", "2", "--sizes", "4K"],
                           "leave out --sizes, --hosts"),
                          ([saved, "--check-elements", "5"], "leave out --check-elements"),
                          ([saved, "--rounds", "0"], "--rounds must be >= 1")):
        res = podscale("replay", *map(str, args))
        assert res.returncode == 2 and message in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


@pytest.mark.parametrize(
    "content, message",
    [
        ('workloads = ["dot"\n', "not valid TOML"),
        ('workloads = "dot"\n', "workloads must be a list of strings"),
        ('suites = ["dot"]\n', "unknown key(s) suites"),
        ('workloads = ["dot"]\nhosts = [1.5]\n', "hosts must be a list of integers"),
        ('workloads = ["dot"]\nsizes = [5]\ndevices_per_host = [2]\n', "not divisible"),
        ('workloads = ["dot"]\nsync = "sometimes"\n', "sync must be"),
        ('workloads = ["dot"]\ntiming = 3\n', "timing must be a string or a list of strings"),
        ('workloads = ["dot"]\ntiming = ["each", "bogus"]\n', "bad timing 'each,bogus'"),
        ('workloads = ["dot"]\niters = "x"\n', "iters must be an integer"),
        ('workloads = ["dot"]\nparams = 3\n', "params must be a table"),
        ('workloads = ["dot"]\n[params]\nwidth = []\n', "params.width must be a non-empty"),
        ('workloads = ["dot"]\n[params]\nwidth = ["x"]\n', "'x' is not of kind int"),
        ('hosts = [1]\nsweep = 3\n', "sweep must be an array of tables"),
        ('hosts = [1]\n[[sweep]]\nworkloads = ["dot"]\n[[sweep]]\nsizes = 4\n',
         "sweep 2: sizes must be a list"),
        ('[[sweep]]\nworkloads = ["dot"]\n[[sweep]]\nhost = [2]\n', "sweep 2: unknown key"),
    ],
)
def test_malformed_suite_files(content, message, tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(content)
    res = podscale("run", "--rounds", "1",
                   "--suite-file", str(path), "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_suite_file_runs_and_cli_overrides(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text('workloads = ["dot"]\nsizes = ["1K"]\nhosts = [1]\ndevices_per_host = [2]\n'
                    'variants = ["pmap"]\niters = 2\nwarmup = 0\ntiming = ["each", "chain"]\n'
                    '[params]\nwidth = [5]\n')
    res = podscale("run", "--rounds", "1",
                   "--suite-file", str(path), "--sizes", "2K", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    (heading,) = [line for line in res.stdout.splitlines() if line.startswith("# dot: ")]
    # size from the CLI, width from the file; each with its unit
    assert "size=2048 rows" in heading and "width=5 elements" in heading
    from podscale.analysis import load_run

    run = load_run(next(p for p in tmp_path.iterdir() if p.is_dir()))
    assert set(run.methods()) == {"each", "chain"}  # the file's timing list


def test_suite_file_sweeps_run_together(tmp_path):
    """Two sweeps with different sizes and axes in one run (as suites/study.toml has); a
    case both sweeps ask for runs once; CLI options apply to every sweep."""
    path = tmp_path / "grid.toml"
    path.write_text('hosts = [1, 2]\ndevices_per_host = [2]\niters = 2\nwarmup = 0\n'
                    'sizes = ["1K"]\nvariants = ["pmap"]\n'
                    '[[sweep]]\nworkloads = ["dot"]\n'
                    '[[sweep]]\nworkloads = ["dot"]\nhosts = [1]\n'
                    '[[sweep]]\nworkloads = ["all_gather"]\nvariants = ["shard_map"]\n'
                    '[sweep.params]\naxes = ["local"]\n')
    res = podscale("run", "--rounds", "1",
                   "--suite-file", str(path), "--hosts", "2", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    from podscale.analysis import load_run, summarize

    run = load_run(only_run(tmp_path))
    manifest, samples, cases = run.manifest, run.samples, run.cases
    table = summarize(samples, cases)
    assert sorted(zip(table.workload, table.hosts, table["size"])) == [("all_gather", 2, 1024),
                                                                    ("dot", 2, 1024)]
    assert len(manifest.spec["sweeps"]) == 3


def test_list_prints_workloads_and_params(tmp_path):
    res = podscale("list")
    assert res.returncode == 0, res.stderr
    assert "psum@1" in res.stdout and "collective all_reduce" in res.stdout
    assert "--param width=3 (int)" in res.stdout
    assert max(map(len, res.stdout.splitlines())) <= 100  # wrapped as --help is
    res = podscale("list", f"{ROOT}/examples/mlp.py:mlp_step")
    assert "mlp_step@1" in res.stdout and "--param batch=256 (size)" in res.stdout


@pytest.mark.parametrize("args, message", [
    (["run", "psum", "--hosts", "1000"], "1000 processes would need about 210.0 GiB"),
    (["seed", "--hosts", "10000"], "10000 processes would need about"),
    (["run", "all_reduce", "--hosts", "2", "--sizes", "16G"], "2 processes would need about"),
    (["run", "psum", "--sizes", "0"], "parameter size: 0 is out of range"),
    (["run", "psum", "--sizes", "2**70"], "is out of range (a size is 1 to 2**50)"),
])
def test_admission_refuses_before_starting_anything(args, message, tmp_path):
    """One line, exit 2, no run directory and no process: the estimate (210 MB a process
    plus the largest case's buffers) against this machine's available memory."""
    res = podscale(*args, "--out", str(tmp_path / "out"))
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert not (tmp_path / "out").exists()


def test_admission_estimate_and_force():
    from podscale.core.errors import UsageError as Usage
    from podscale.core.grid import Grid, expand
    from podscale.launch.admission import BUFFER_FACTOR, PROCESS_MB, admit, estimate_mb

    cases = expand(Grid(workloads=("psum",), hosts=(4,), devices_per_host=(1,),
                        params=(("size", (1 << 20,)),)))
    most, need = estimate_mb(cases)
    # 4 processes, psum of 2**20 float32 per process: 4 MiB x BUFFER_FACTOR each, however
    # many processes (the checks gather only the compared elements)
    assert most == 4 and need == pytest.approx(4 * (PROCESS_MB + 4 * BUFFER_FACTOR))
    wide = expand(Grid(workloads=("psum",), hosts=(8,), devices_per_host=(1,),
                       params=(("size", (1 << 20,)),)))
    assert estimate_mb(wide)[1] == pytest.approx(2 * need)
    with pytest.raises(Usage, match="4 processes would need about"):
        admit(cases, have_mb=need - 1)
    admit(cases, have_mb=need + 1)
    admit(cases, have_mb=need - 1, force=True)


@pytest.mark.parametrize("args, message", [
    (["--rounds", "1"], "--rounds 1: podscale ab judges a change against the variation "
                        "between launches, which needs 2 or more launches of each arm"),
    (["--env-b", "NOVALUE"], "bad --env-b 'NOVALUE': expected NAME=VALUE"),
])
def test_ab_bad_input(args, message, tmp_path):
    res = podscale("ab", "psum", *args, "--out", str(tmp_path))
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


@pytest.mark.alone
def test_ab_interleaves_arms_and_finds_planted_slowdown(tmp_path):
    """Arm B's processes get the environment (a planted 8x stretch of psum's steps), arms
    alternate launch by launch, and the comparison flags psum, not dot. (Alone on the
    machine: beside another test worker, 4 rounds a side once read psum 16.9x with an
    interval of 1.5-186 and p 0.012, noisy at alpha 0.01.)"""
    res = podscale("ab", "dot,psum", "--hosts", "1", "--devices-per-host", "2", "--sizes", "4K",
                   "--variants", "shard_map", "--rounds", "4", "--iters", "5", "--warmup", "1",
                   "--alpha", "0.01", "--env-b", "PODSCALE_FAULT=stretch=8@*:psum",
                   "--fail-on-regression", "--name", "t", "--out", str(tmp_path))
    assert res.returncode == 1, res.stderr + res.stdout
    run_a, run_b = sorted(tmp_path.iterdir())
    assert run_a.name.endswith("-t-A") and run_b.name.endswith("-t-B")
    arms = [line.split("[")[1].split("]")[0][-1] for line in res.stdout.splitlines()
            if line.startswith("# layout ")]
    assert arms == ["A", "B", "B", "A"] * 2
    rows = {line.split()[0].split("/")[0]: line.split()[-1] for line in res.stdout.splitlines()
            if line.lstrip().startswith(("dot@", "psum@"))}
    assert rows == {"psum@1": "slower", "dot@1": rows["dot@1"]} and rows["dot@1"] != "slower"
    from podscale.analysis import load_run

    ma, mb = load_run(run_a).manifest, load_run(run_b).manifest
    assert ma.spec["interleaved_with"] == [run_b.name] and ma.spec["env"] == {}
    assert mb.spec["env"] == {"PODSCALE_FAULT": "stretch=8@*:psum"}
    assert "Welch t-test" in res.stdout and "launches alternated" in res.stdout
    paired = podscale("compare", str(run_a), str(run_b), "--paired", "--out",
                      str(tmp_path / "p"))
    assert paired.returncode == 0 and "paired t-test" in paired.stdout, paired.stderr
    alone = podscale("compare", str(run_a), str(run_a), "--paired", "--out", str(tmp_path / "q"))
    assert alone.returncode == 2 and "are the same run" in alone.stderr
    _verdicts_exported(run_a, run_b, tmp_path)


def _verdicts_exported(run_a, run_b, tmp_path) -> None:
    """The A/B's verdicts where users read them: JUnit fails the slower case alone (its
    reproduce command in the failure), compare prints the same, OpenMetrics carries the
    ratio, the digest each case's verdict."""
    import json
    import xml.etree.ElementTree as ET

    res = podscale("export", str(run_b), "--format", "junit", "--against", str(run_a),
                   "--alpha", "0.01", "--fail-on-regression")
    assert res.returncode == 1, res.stderr
    suite = ET.fromstring(res.stdout.split("\n", 1)[1])
    failed = [c for c in suite.findall("testcase") if c.find("failure") is not None]
    assert [c.get("name").split("/")[0] for c in failed] == ["psum@1"], res.stdout
    assert "reproduce: 'PODSCALE_FAULT=stretch=8@*:psum' podscale run psum " in failed[
        0].find("failure").text  # arm B's variable, then the case
    res = podscale("compare", str(run_a), str(run_b), "--alpha", "0.01", "--format", "junit",
                   "--out", str(tmp_path / "j" / "c"))
    assert res.returncode == 0 and res.stdout.count("<failure") == 1, res.stderr
    res = podscale("export", str(run_b), "--format", "openmetrics", "--against", str(run_a))
    assert "podscale_case_ratio{" in res.stdout and 'verdict="slower"' in res.stdout
    res = podscale("digest", str(run_b), "--against", str(run_a), "--alpha", "0.01")
    verdicts = {c["name"].split("/")[0]: c["verdict"]["verdict"]
                for c in json.loads(res.stdout)["cases"]}
    assert verdicts["psum@1"] == "slower" and verdicts["dot@1"] != "slower", verdicts


def test_every_option_has_help_and_shows_its_default():
    """One parser per command module; every option says what it does, and every option
    with a default states it in --help (from the one defaults table where it is shared)."""
    import argparse

    from podscale.frontend.cli import COMMANDS, build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(sub.choices) == len(COMMANDS)
    for name, p in sub.choices.items():
        for action in p._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"podscale {name} {action.option_strings or action.dest}"
            shown = action.default not in (None, "", False, argparse.SUPPRESS) \
                and action.option_strings and action.nargs != 0
            if shown:
                assert "default" in p._get_formatter()._format_action(action), \
                    f"podscale {name} {action.option_strings}: default not shown"
        assert p.description, name
        text = p.format_help()  # plain words: the docstrings' markup was printed as is
        assert not re.search(r"``|:[a-z]+:`", text), (name, re.findall(r".*`.*", text))
        assert max(map(len, text.splitlines())) <= 100, name
    run_help = sub.choices["run"].format_help()
    for option, default in (("--iters", "20"), ("--warmup", "3"), ("--rounds", "3"),
                            ("--out", "results"), ("--case-timeout", "300")):
        line = run_help.split(f"\n  {option}", 1)[1][:300]
        assert f"default: {default}" in " ".join(line.split()), option


def test_version():
    from podscale import __version__

    res = podscale("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"podscale {__version__}"


def test_paths_that_cannot_be_written_or_compared(tmp_path):
    """A read-only or missing output folder and a run compared with itself: one line,
    exit 2, nothing written."""
    from tests.synth import make_run

    run = make_run(tmp_path / "run")
    for args, message in (
            (["report", str(run), "--out", "/proc/podscale-report"],
             "/proc/podscale-report: No such file or directory"),
            (["compare", str(run), str(run)], "are the same run"),
            (["run", "psum", "--hosts", "1", "--out", "/proc/podscale-out"],
             "cannot create run directory under /proc/podscale-out")):
        res = podscale(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_worker_refuses_a_host_count_the_job_does_not_have(tmp_path):
    """podscale worker --hosts 2 in a one-process job (no cluster here): one line, exit 2."""
    res = podscale("worker", "psum", "--run-dir", str(tmp_path / "r"), "--hosts", "2",
                   "--platform", "cpu", "--sizes", "1K")
    assert res.returncode == 2, res.stderr
    assert "this job has 1 process(es) but --hosts asks for 2" in res.stderr
    assert not (tmp_path / "r" / "records").exists()


def test_malformed_fault_refused_before_start(tmp_path):
    import os

    env = {**os.environ, "PODSCALE_FAULT": "slow=abc@0:0"}
    res = podscale("run", "psum", "--hosts", "1", "--out", str(tmp_path), env=env)
    assert res.returncode == 2 and "bad PODSCALE_FAULT 'slow=abc@0:0'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not any(tmp_path.iterdir())


def test_workload_identity_is_its_source(tmp_path):
    """Two files whose workloads share a name are refused; a repeated value runs once."""
    from podscale.core.grid import Grid, expand

    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "w.py").write_text((ROOT / "examples" / "mlp.py").read_text())
    res = podscale("run", f"{tmp_path}/a/w.py,{tmp_path}/b/w.py", "--hosts", "1",
                   "--out", str(tmp_path / "out"))
    assert res.returncode == 2 and "two selected workloads are named 'mlp_step'" in res.stderr
    assert f"{tmp_path}/a/w.py" in res.stderr and f"{tmp_path}/b/w.py" in res.stderr
    assert not (tmp_path / "out").exists()
    once = expand(Grid(workloads=("psum", "psum"), hosts=(2,), devices_per_host=(1,)))
    twice = expand(Grid(workloads=("psum",), hosts=(2, 2), devices_per_host=(1, 1)))
    assert [c.id for c in once] == [c.id for c in twice] and len(once) == len(set(
        c.id for c in once)) > 0


def test_default_run_name_fits_however_many_workloads():
    """A run given no --name is named by its workloads; the study file's eleven would
    exceed a name's 100 characters (``podscale run --suite-file`` once refused itself), so
    the name keeps those that fit and says how many more, with room for an arm's -A."""
    from podscale.frontend.suitefile import load
    from podscale.launch.runner import check_name, default_name

    assert default_name(["dot", "psum", "dot"]) == "dot-psum"
    workloads = [w for sweep in load(ROOT / "suites" / "study.toml")
                 for w in sweep["workloads"].split(",")]
    assert len("-".join(dict.fromkeys(workloads))) > 100
    name = default_name(workloads)
    assert name.startswith("dot-psum-stream-matmul-all_reduce") and name.endswith("-more")
    assert check_name(name + "-A") and len(name) <= 90
    assert default_name(["x" * 95]) == "1-workloads"


def test_profile_options_refused_before_anything_starts(tmp_path):
    """Each bad option of ``podscale profile``: one line, exit 2, no run directory."""
    program = str(ROOT / "tests" / "programs" / "apart.py")
    out = tmp_path / "out"
    for args, message in (
            (["--coordinator-port", "99999"], "must be 0 (any free port) to 65535"),
            (["--coordinator-port", "-1"], "must be 0 (any free port) to 65535"),
            (["--profile-steps", "²:³"], "want A:B"),
            (["--profile-length", "0"], "give --profile-every too"),
            (["--args-b", "--steps '3"], "bad --args-b"),
            (["--profile-every", "3", "--profile-length", "4"], "capture length 1..N")):
        res = podscale("profile", "--out", str(out), *args, program)
        assert res.returncode == 2 and message in res.stderr, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
        assert not out.exists(), args


def test_worker_refuses_what_it_would_ignore(tmp_path):
    res = podscale("worker", "--run-dir", str(tmp_path / "run"), "--launcher", "mpirun",
                   "--out", "/nonexistent", "dot")
    assert res.returncode == 2 and res.stderr.startswith(
        "podscale: error: --out, --launcher: podscale run's, not podscale worker's"), res.stderr
    assert not (tmp_path / "run").exists()


def test_podscales_own_variables_checked_before_anything_starts(tmp_path):
    bad = {"PODSCALE_COORDINATOR": "127.0.0.1:1234", "PODSCALE_NUM_PROCESSES": "2",
           "PODSCALE_PROCESS_ID": "abc"}
    for env, message in ((bad, "bad PODSCALE_PROCESS_ID='abc': want an integer >= 0"),
                         ({**bad, "PODSCALE_PROCESS_ID": "2"}, "want 0..1"),
                         ({**bad, "PODSCALE_PROCESS_ID": "0", "PODSCALE_COORDINATOR": "x"},
                          "want HOST:PORT")):
        res = podscale("worker", "--run-dir", str(tmp_path / "run"), "dot",
                       env={**os.environ, **env})
        assert res.returncode == 2 and message in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


JOB = ["--slices", "2", "--tpu-type", "v5e-16", "--image", "x"]
#: the edges of names and values a demanding user tried (#63): (argv, the line's words)
EDGES = [
    (["jobset", *JOB, "--name", "My_Job", "--", "psum"], "bad --name 'My_Job': want at most 63"),
    (["jobset", *JOB, "--name", "", "--", "psum"], "bad --name ''"),
    (["jobset", *JOB, "--name", "a" * 60, "--", "psum"],
     f"the pods' hostnames (NAME-slice-SLICE-INDEX, e.g. {'a' * 60}-slice-1-3) would have 70 "
     "characters, over Kubernetes' 63; 53 at most here"),
    (["jobset", *JOB, "--image", "", "--", "psum"], "bad --image ''"),
    (["jobset", *JOB, "--namespace", "Bad NS", "--", "psum"], "bad --namespace 'Bad NS'"),
    (["k8s", "--hosts", "2", "--image", "x", "--name", "Bad.Name", "--", "psum"],
     "bad --name 'Bad.Name'"),
    (["k8s", "--hosts", "2", "--image", "x", "--results-pvc", "My_Claim", "--", "psum"],
     "bad --results-pvc 'My_Claim'"),
    (["xpk", *JOB, "--cluster", "", "--", "psum"], "bad --cluster ''"),
    (["xpk", *JOB, "--cluster", "c", "--results-pvc", "claim", "--", "psum"],
     "xpk workload create mounts no PersistentVolumeClaim, so process 0's run would stay on "
     "its pod's own disk; podscale jobset --results-pvc CLAIM prints a JobSet"),
    (["jobset", "--slices", "2", "--tpu-type", "v5p-15", "--image", "x", "--", "psum"],
     "bad --tpu-type v5p-15: a v5p type counts TensorCores, 2 a chip"),
    (["jobset", "--slices", "2", "--tpu-type", "v5p-0", "--image", "x", "--", "psum"],
     "want a multiple of 2, at least 2"),
    (["jobset", "--slices", "0", "--tpu-type", "v5e-16", "--image", "x", "--", "psum"],
     "--slices 0: want 1 or more"),
    (["jobset", *JOB, "--", "psum", "--slices", "3"],
     "--slices 3 after -- contradicts the job's 2 slice(s)"),
    (["run", "psum", "--slices", "0"], "--slices 0: want counts >= 1, got 0"),
    (["run", "psum", "--slices", "-1"], "--slices -1: want counts >= 1, got -1"),
]


def test_edges_of_names_and_values_are_one_line_each(tmp_path):
    """Kubernetes names and values, TPU types, slices, and odd values of
    PODSCALE_INIT_TIMEOUT and --out: each refused in one line naming what was given, exit
    2, before anything is printed, started or written."""
    out = ["--out", str(tmp_path / "out")]
    for args, said in EDGES:
        res = podscale(*args, *(out if args[0] == "run" else []))
        assert (res.returncode, res.stdout) == (2, ""), (args, res.stderr, res.stdout)
        assert res.stderr.startswith("podscale: error: ") and said in res.stderr, (args, res)
        assert len(res.stderr.splitlines()) == 1, res.stderr
    small = ["run", "dot", "--hosts", "2", "--devices-per-host", "1", "--sizes", "4K", *out]
    for value in ("abc", "0.0", "-1", "nan", "1e9", "inf"):
        res = podscale(*small, env={**os.environ, "PODSCALE_INIT_TIMEOUT": value})
        assert res.returncode == 2 and res.stderr == (
            f"podscale: error: bad PODSCALE_INIT_TIMEOUT={value!r}: want the seconds the join "
            "waits for every process, a number > 0 and at most 86,400 (fractions round up to "
            "whole seconds)\n"), res.stderr
    long = tmp_path / ("x" * 300)
    res = podscale("run", "dot", "--hosts", "1", "--out", str(long))
    assert res.returncode == 2 and res.stderr.endswith(" characters): File name too long\n")
    assert "internal" not in res.stderr and not (tmp_path / "out").exists()


def test_last_turns_messages(small_run, tmp_path):
    """--out a file, a value starting with '-', and replay of a grid of several cases:
    each one line, exit 2, saying what to do."""
    afile = tmp_path / "afile"
    afile.write_text("")
    for args, message in (
            (["report", str(small_run), "--out", str(afile)],
             f"podscale: error: {afile} is a file, not a folder"),
            (["run", "dot", "--sizes", "-4K", "--out", str(tmp_path / "o")],
             "a value starting with '-' is written --sizes=-4K"),
            (["replay", "psum", "--hosts", "2", "--sizes", "4K", "--out", str(tmp_path / "o")],
             "podscale replay takes one case; this grid has")):
        res = podscale(*args)
        assert res.returncode == 2 and message in res.stderr, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
