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
