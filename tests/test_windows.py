"""Capture windows open at any step, 0 included: a window armed before the step is known
(tests/programs/initfirst.py: a heavy initialisation runs first, and outweighs the step's
first calls) holds the step's calls A..B-1 and nothing else, and every window is labelled
with both its ends."""

from __future__ import annotations

import json

import pytest

from podscale.analysis.profile.load import load_profile
from tests.conftest import ROOT, only_run, podscale

PROGRAM = ROOT / "tests" / "programs" / "initfirst.py"


@pytest.mark.parametrize(("hosts", "window", "held", "said"), [
    ("2", "0:3", [0, 1, 2], "# captured steps 0-2: steps 0-2 held"),
    ("1", "1:2", [1], "# captured step 1: step 1 held"),
    # a window the program's end cut (12 steps): the steps that ran, and said so (it read
    # "no step execution found", then Findings quoted "the captured steps")
    ("1", "10:15", [10, 11], "# captured steps 10-end (cut: the program ended inside the "
                             "window): steps 10-11 held")])
def test_a_window_from_the_first_steps_holds_the_steps_not_the_initialisation(
        tmp_path, hosts, window, held, said):
    res = podscale("profile", "--hosts", hosts, "--out", str(tmp_path), "--profile-steps",
                   window, str(PROGRAM), "12")
    assert res.returncode == 0, res.stderr + res.stdout
    p = load_profile(only_run(tmp_path))
    for process, rows in p.captures.groupby("process"):
        assert list(rows["step"]) == held, (process, rows)
    for record in (only_run(tmp_path) / "profile").glob("process-*.jsonl"):
        (capture,) = [json.loads(line) for line in record.read_text().splitlines()
                      if '"kind":"capture"' in line]
        assert {r["module"] for r in capture["rows"]} == {"jit_step"}, capture
    assert len(p.windows) == int(hosts) and not p.windows["cut"].any()
    assert said in res.stdout, res.stdout
    label = said.split()[3].rstrip(":")
    sessions = sorted(d.name for d in (only_run(tmp_path) / "traces" / "plugins" /
                                       "profile").iterdir())
    assert sessions == [f"{only_run(tmp_path).name}-steps-{label}"]


def test_every_window_is_closed_when_the_program_ends_with_it(tmp_path):
    """--profile-every 4 --profile-length 4 over 12 steps: windows 4-7 and 8-11, the last
    ending with the program (complete, not open-ended), each its own merged timeline; a
    ``--hosts 4`` after the program's path is the program's, and said so (one process
    ran)."""
    res = podscale("profile", "--hosts", "1", "--out", str(tmp_path), "--profile-every",
                   "4", "--profile-length", "4", str(PROGRAM), "12", "--hosts", "4")
    assert res.returncode == 0, res.stderr + res.stdout
    # an option of podscale's after SCRIPT goes to the program, and is said to
    assert "# note: --hosts after initfirst.py go(es) to the program, not to podscale" \
        in res.stderr, res.stderr
    assert "# captured steps 4-7: steps 4-7 held" in res.stdout
    assert "# captured steps 8-11: steps 8-11 held" in res.stdout, res.stdout
    p = load_profile(only_run(tmp_path))
    assert list(p.captures["step"]) == list(range(4, 12)) and not p.windows["cut"].any()
    res = podscale("trace", str(only_run(tmp_path)))
    assert res.returncode == 0, res.stderr
    assert "timeline-steps-8-11.zip" in res.stdout and "timeline-steps-4-7.zip" in res.stdout
