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
from podscale.selfbench import Log

ROOT = Path(__file__).resolve().parents[2]
ASV = [sys.executable, "-m", "asv"]
IDENT = ["-c", "user.email=bench@podscale.invalid", "-c", "user.name=bench"]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def two_commit_copy(repo: Path, src: Path = ROOT, plant: str = "") -> tuple[str, str]:
    """Copy ``src``'s files (tracked and untracked, not ignored) into a new git repository
    ``repo`` with two commits that differ only in the README (``plant``: and in the second,
    that fault, e.g. ``stretch=1.5@*:psum``, is the default of ``PODSCALE_FAULT`` — a
    planted regression of the code); their hashes."""
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
    if plant:
        faults = repo / "podscale" / "worker" / "faults.py"
        old = 'os.environ.get(envnames.FAULT, "")'
        text = faults.read_text()
        if old not in text:
            raise PodscaleError(f"cannot plant {plant!r}: {old} not found in {faults}")
        faults.write_text(text.replace(old, f'os.environ.get(envnames.FAULT, {plant!r})'))
    _git(*IDENT, "commit", "-qam", "second", cwd=repo)
    return first, _git("rev-parse", "HEAD", cwd=repo)


def asv_config(tmp: Path, repo: Path) -> Path:
    """The project's asv.conf.json with everything asv writes redirected into ``tmp``, and
    its install step (``{conf_dir}``: where asv was started) taken from ``repo``."""
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(repo=str(repo), benchmark_dir=str(repo / "benchmarks"),
                env_dir=str(tmp / "env"), results_dir=str(tmp / "results"),
                html_dir=str(tmp / "html"),
                install_command=[c.replace("{conf_dir}", str(repo))
                                 for c in conf["install_command"]])
    path = tmp / "asv.conf.json"
    path.write_text(json.dumps(conf))
    return path


def rows(compare_output: str) -> list[tuple[str, str, float | None]]:
    """(section, benchmark, ratio second/first or None) of every measured row of
    ``asv compare/continuous --split`` output."""
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
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                try:
                    ratio = float(cells[-2].lstrip("~"))
                except (IndexError, ValueError):
                    ratio = None
                out.append((section, name.group(0), ratio))
    return out


def ratios(compare_output: str) -> dict[str, float]:
    """Benchmark -> ratio (second / first) of every measured row."""
    return {name: r for _, name, r in rows(compare_output) if r is not None}


def counts(compare_output: str, family: str = "", planted: bool | None = None,
           workload: str = "") -> dict[str, int]:
    """Rows per section (of benchmarks whose function name starts with ``family``; with
    ``planted`` True/False, only those that do/do not name ``workload``)."""
    out = dict.fromkeys(("improved", "same", "worse", "incomparable"), 0)
    for section, name, _ in rows(compare_output):
        if name.split(".")[-1].startswith(family) and (
                planted is None or (workload in name.lower()) == planted):
            out[section] += 1
    return out


FAMILIES = ("time_", "track_")
#: the asv-detect stage: a 1.5x slowdown of psum planted in the second commit, and the
#: benchmarks it runs (64 KiB time_* of dot and psum, every multi-host track of both)
DETECT_PLANT = "stretch=1.5@*:psum"
DETECT_BENCH = (r"time_(dot|psum)\(65536,", "TrackMultiHost")
SWEEP = (1.05, 1.1, 1.2, 1.3, 1.5)


def asv_aa(out: Path, factor: float = 1.1, sweep: tuple[float, ...] = SWEEP,
           log: Log = print, plant: str = "", bench: tuple[str, ...] = ()) -> dict:
    """False alarms of ``asv continuous --interleave-rounds --factor FACTOR`` between two
    commits with no code change, per family (``time_*``, ``track_*``; both carry samples,
    so asv's Mann-Whitney test and the factor both apply), and of ``asv compare`` of the
    same results at each factor of ``sweep``. With ``plant`` (a fault the second commit
    makes the default, see :func:`two_commit_copy`), the same run measures detection;
    ``bench``: asv ``--bench`` patterns to run a subset."""
    start = time.monotonic()
    repo = out / "repo"
    first, second = two_commit_copy(repo, plant=plant)
    conf = str(asv_config(out, repo))
    machine = ["--machine", "podscale-bench", "--config", conf]
    subprocess.run([*ASV, "machine", "--yes", *machine], cwd=out, check=True,
                   capture_output=True)
    log(f"  asv continuous --interleave-rounds --factor {factor} FIRST SECOND (two commits: "
        + (f"the second plants {plant})" if plant else "README only)"))
    subset = [a for b in bench for a in ("--bench", b)]
    res = subprocess.run([*ASV, "continuous", "--interleave-rounds", "--factor", str(factor),
                          "--split", "--no-only-changed", *subset, *machine, first, second],
                         cwd=out, capture_output=True, text=True)
    if "failed" in res.stdout.lower() and res.returncode not in (0, 1):
        raise PodscaleError(f"asv continuous failed: {res.stdout[-500:]}{res.stderr[-500:]}")
    result: dict = {"factor": factor, "target": 0.05, "exit_code": res.returncode,
                    "plant": plant, "bench": list(bench), "ratios": ratios(res.stdout),
                    "output": res.stdout[-30000:], "stderr": res.stderr[-5000:]}

    workload = plant.rpartition(":")[2].lower() if plant else ""

    def judged(text: str, f: float) -> dict:
        per = {}
        for family in FAMILIES:
            for label, planted in (("", None), ("planted", True), ("others", False)):
                if label and not plant:
                    continue
                n = counts(text, family, planted, workload)
                total = sum(n.values())
                per[family + label] = {
                    **n, "benchmarks": total, "factor": f,
                    "flagged": (n["improved"] + n["worse"]) / total if total else None}
        return per

    result.update(judged(res.stdout, factor))
    if not any(result[f]["benchmarks"] for f in FAMILIES):
        raise PodscaleError(f"asv continuous printed no comparison: {res.stdout[-500:]}"
                            f"{res.stderr[-500:]}")
    result["sweep"] = {str(f): judged(subprocess.run(
        [*ASV, "compare", "--split", "--factor", str(f), *machine, first, second], cwd=out,
        capture_output=True, text=True).stdout, f) for f in sweep}
    result["wall_s"] = time.monotonic() - start
    return result


def summary_lines(a: dict) -> list[str]:
    """The stage's figures as lines for the terminal."""
    lines = []
    kinds = ("planted", "others") if a.get("plant") else ("",)
    for family in FAMILIES:
        for kind in kinds:
            f = a[family + kind]
            if f["benchmarks"]:
                what = {"planted": "naming the planted workload (detected; target >= 90%)",
                        "others": "not naming it (collateral)",
                        "": "(target <= 5%)"}[kind]
                lines.append(
                    f"  {family}* {what}: {f['improved'] + f['worse']} of {f['benchmarks']} "
                    f"flagged ({f['flagged']:.1%}) at factor {f['factor']}: "
                    f"{f['improved']} improved, {f['worse']} worse")
    for factor, per in a["sweep"].items():
        lines.append(f"  asv compare --factor {factor}: " + ", ".join(
            f"{key.replace('_', '_* ', 1).strip()} {per[key]['flagged']:.1%}"
            for key in per if per[key]["benchmarks"]))
    lines.append(f"  {a['wall_s'] / 60:.0f} min")
    return lines
