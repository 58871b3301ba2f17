"""A full disk: refused before a run where its records cannot fit, and said in one line,
every process stopped and the manifest marked failed where it fills during the run.
The disk is a small tmpfs (mounting one needs root: skipped elsewhere), filled by a
planted filler file once the run has written its first record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, podscale


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"a small filesystem needs root to mount: {mounted.stderr.strip()}")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_run_whose_records_cannot_fit_is_refused_before_it_starts(small_disk):
    res = podscale("run", "psum", "--hosts", "2", "--sizes", "64K,1M", "--iters", "4000",
                   "--rounds", "3", "--out", str(small_disk))
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert f"--out {small_disk}: 2.0 MiB free on its filesystem, and its records (8 cases" \
        in res.stderr and "free some space" in res.stderr, res.stderr
    assert not list(small_disk.iterdir())  # no run directory, no process started


def _fill(disk: Path) -> None:
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


def _filled_under(disk: Path, first: str, *args: str, holding: str = "") -> tuple[int, str]:
    """Run ``podscale ARGS``; once a file matching ``first`` appears under ``disk`` (and
    holds ``holding``), fill the disk (a planted filler file); the exit code and standard
    error."""
    proc = subprocess.Popen([sys.executable, "-m", "podscale", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120

    def written() -> bool:
        return any(holding in f.read_text(errors="replace") for f in disk.glob(first))

    while not written():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    _fill(disk)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def test_a_disk_that_fills_during_a_run_stops_it_in_one_line(small_disk):
    """The run fits when it starts; a filler takes the rest of the disk once the first
    record is written. Every process stops, the front end says the file and the error in
    one line (no internal error), the manifest says failed (rewritten in the room it
    kept) and no run.json.tmp is left."""
    code, err = _filled_under(small_disk, "*/records/*/process-*.jsonl", "run", "psum",
                              "--hosts", "2", "--sizes", "64K", "--iters", "60",
                              "--rounds", "6", "--out", str(small_disk))
    assert code not in (0, 2), err
    said = [line for line in err.splitlines() if line.startswith("podscale: ")]
    assert "internal error" not in err and len(said) == 1, err
    assert "No space left on device" in said[0] or "no space left" in said[0], said
    (run_dir,) = [d for d in small_disk.iterdir() if d.is_dir()]
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "failed" and manifest["error"], manifest
    assert not (run_dir / "run.json.tmp").exists()
    (small_disk / "filler").unlink()  # room again: the run reads as failed, not broken
    shown = podscale("show", str(run_dir))
    assert shown.returncode in (0, 1) and "internal error" not in shown.stderr, shown.stderr
    left = subprocess.run(["pgrep", "-f", f"podscale.worker {run_dir}"],
                          capture_output=True, text=True).stdout.split()
    assert not left and os.path.isdir(run_dir / "records")


def test_a_disk_that_fills_under_a_profiled_program_never_fails_the_program(small_disk):
    """podscale profile: the disk fills once the records begin. podscale's record stops
    (said; never raised into the program), the program runs on until its own output,
    which goes to its log on the same disk, fails it (exit 1, as it would alone), and the
    front end names the full disk in one line, not an internal error."""
    # filled once the record holds the program's first calls (whether a later line still
    # fitted a page's slack had decided the test: the record's lines grew)
    code, err = _filled_under(small_disk, "*/profile/process-*.jsonl", "profile", "--hosts",
                              "1", "--out", str(small_disk), "--profile-steps", "30:32",
                              str(ROOT / "tests" / "programs" / "train.py"), "--steps", "300",
                              holding='"kind":"calls"')
    said = [line for line in err.splitlines() if line.startswith("podscale: ")]
    assert code == 1 and "internal error" not in err, err
    assert said and "process 0 exited with code 1; no space left on device" in said[-1]
    (run_dir,) = [d for d in small_disk.iterdir() if d.is_dir()]
    record = (run_dir / "profile" / "process-0.jsonl").read_text()
    assert '"kind":"calls"' in record  # it held the program's first calls, then stopped
