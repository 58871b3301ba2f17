"""bench-self's asv stage: does ``asv continuous`` stay quiet when nothing changed?

A throwaway copy of this checkout with two commits that differ only in the README, then
``asv continuous --interleave-rounds --factor F --split FIRST SECOND`` — the invocation the
README recommends — in asv-made virtualenvs with the benchmarks' own settings
(``benchmarks/benchmarks.py``: rounds, repeat, warm-up, track rounds). Every benchmark it
reports improved or worse is a false alarm (target: <= 5% of benchmarks).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from podscale.core.errors import PodscaleError

ROOT = Path(__file__).resolve().parents[2]
ASV = [sys.executable, "-m", "asv"]
IDENT = ["-c", "user.email=bench@podscale.invalid", "-c", "user.name=bench"]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def two_commit_copy(repo: Path, src: Path = ROOT) -> tuple[str, str]:
    """Copy ``src``'s files (tracked and untracked, not ignored) into a new git repository
    ``repo`` with two commits that differ only in the README; their hashes."""
    for f in _git("ls-files", "-co", "--exclude-standard", cwd=src).splitlines():
        if (src / f).is_file():
            (repo / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / f, repo / f)
    _git("init", "-q", "-b", "main", cwd=repo)
    _git(*IDENT, "add", "-A", cwd=repo)
    _git(*IDENT, "commit", "-qm", "first", cwd=repo)
    first = _git("rev-parse", "HEAD", cwd=repo)
    with (repo / "README.md").open("a") as fh:
        fh.write("\nA second commit, no code change.\n")
    _git(*IDENT, "commit", "-qam", "second", cwd=repo)
    return first, _git("rev-parse", "HEAD", cwd=repo)


def asv_config(tmp: Path, repo: Path) -> Path:
    """The project's asv.conf.json with everything asv writes redirected into ``tmp``."""
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(repo=str(repo), benchmark_dir=str(repo / "benchmarks"),
                env_dir=str(tmp / "env"), results_dir=str(tmp / "results"),
                html_dir=str(tmp / "html"))
    path = tmp / "asv.conf.json"
    path.write_text(json.dumps(conf))
    return path


def rows(compare_output: str) -> list[tuple[str, str]]:
    """(section, benchmark) of every row of ``asv compare/continuous --split`` output."""
    titles = {"Benchmarks that have improved:": "improved",
              "Benchmarks that have stayed the same:": "same",
              "Benchmarks that have got worse:": "worse",
              "Benchmarks that are not comparable:": "incomparable"}
    out, section = [], None
    for line in compare_output.splitlines():
        if line.strip() in titles:
            section = titles[line.strip()]
        elif section and re.match(r"^\s*\|?\s*[-+x!* ]?\s*\|?\s*[\d.]+", line):
            name = re.search(r"benchmarks\.[\w.]+(\([^)]*\))?", line)
            if name:
                out.append((section, name.group(0)))
    return out


def counts(compare_output: str, family: str = "") -> dict[str, int]:
    """Rows per section (of benchmarks whose function name starts with ``family``)."""
    out = dict.fromkeys(("improved", "same", "worse", "incomparable"), 0)
    for section, name in rows(compare_output):
        if name.split(".")[-1].startswith(family):
            out[section] += 1
    return out


def asv_aa(out: Path, factors: dict[str, float] | None = None, log=print) -> dict:
    """False alarms of ``asv continuous`` between two commits with no code change: ``time_*``
    (samples: asv's statistics) and ``track_*`` (one value each: the factor alone), each at
    its factor, from one interleaved run."""
    factors = factors or {"time_": 1.1, "track_": 1.3}
    start = time.monotonic()
    repo = out / "repo"
    first, second = two_commit_copy(repo)
    conf = str(asv_config(out, repo))
    machine = ["--machine", "podscale-bench", "--config", conf]
    subprocess.run([*ASV, "machine", "--yes", *machine], cwd=out, check=True,
                   capture_output=True)
    log(f"  asv continuous --interleave-rounds --factor {factors['time_']} FIRST SECOND (two "
        "commits, README only)")
    res = subprocess.run([*ASV, "continuous", "--interleave-rounds", "--factor",
                          str(factors["time_"]), "--split", "--no-only-changed", *machine, first,
                          second], cwd=out, capture_output=True, text=True)
    result: dict = {"factors": factors, "target": 0.05, "exit_code": res.returncode,
                    "output": res.stdout[-30000:], "stderr": res.stderr[-5000:]}
    for family, factor in factors.items():
        text = res.stdout if factor == factors["time_"] else subprocess.run(
            [*ASV, "compare", "--split", "--factor", str(factor), *machine, first, second],
            cwd=out, capture_output=True, text=True).stdout
        n = counts(text, family)
        total = sum(n.values())
        result[family] = {**n, "benchmarks": total, "factor": factor,
                          "flagged": (n["improved"] + n["worse"]) / total if total else None}
    result["wall_s"] = time.monotonic() - start
    if not any(result[f]["benchmarks"] for f in factors):
        raise PodscaleError(f"asv continuous printed no comparison: {res.stdout[-500:]}"
                            f"{res.stderr[-500:]}")
    return result
