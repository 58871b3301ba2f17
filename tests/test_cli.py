"""Bad input: one line on stderr, exit 2, nothing started."""

import pytest

from tests.conftest import podscale


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "nosuch"], "unknown suite 'nosuch'"),
        (["run", "dot", "--sizes", "5", "--devices-per-host", "2"], "not divisible"),
        (["run", "dot", "--hosts", "0"], "hosts must be >= 1"),
        (["run", "dot", "--hosts", "a,b"], "bad hosts list"),
        (["run", "dot", "--sizes", "huge"], "bad size"),
        (["run", "dot", "--bogus"], "unrecognized arguments"),
        (["show", "/nonexistent/run"], "no such run directory"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_one_line_exit_2(args, message, tmp_path):
    res = podscale(*args, "--out", str(tmp_path)) if args[0] == "run" else podscale(*args)
    assert res.returncode == 2, res.stderr
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "content, message",
    [
        ('suites = ["dot"\n', "not valid TOML"),
        ('suites = "dot"\n', "suites must be a list of strings"),
        ('suits = ["dot"]\n', "unknown key(s) suits"),
        ('suites = ["dot"]\nhosts = [1.5]\n', "hosts must be a list of integers"),
        ('suites = ["dot"]\nsizes = [5]\ndevices_per_host = [2]\n', "not divisible"),
        ('suites = ["dot"]\nsync = "sometimes"\n', "sync must be"),
    ],
)
def test_malformed_suite_files(content, message, tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(content)
    res = podscale("run", "--suite-file", str(path), "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_suite_file_runs_and_cli_overrides(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text('suites = ["psum"]\nsizes = ["1K"]\nhosts = [1]\ndevices_per_host = [2]\n'
                    'variants = ["pmap"]\niters = 2\nwarmup = 0\n')
    res = podscale("run", "--suite-file", str(path), "--sizes", "2K", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert "psum" in res.stdout and " 2048 " in res.stdout and " 1024 " not in res.stdout


def test_too_many_local_processes(tmp_path):
    res = podscale("run", "psum", "--hosts", "1000", "--out", str(tmp_path))
    assert res.returncode == 2 and "at most 256 processes" in res.stderr
