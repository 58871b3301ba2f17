"""Terminal tables: every built-in workload's table fits 120 columns at default settings,
settings appear once, units head the columns, and scripts get csv or json."""

import json

import numpy as np

from podscale.analysis import load_run
from podscale.analysis.render.table import WIDTH, export, render
from podscale.core.records import CaseRecord, Manifest, Samples, write_manifest
from podscale.core.registry import builtins, load_source
from podscale.frontend.cli import build_parser
from podscale.frontend.commands.gridargs import prepared_of
from podscale.worker.writers import RecordWriter


def _default_cases(name: str, hosts: int = 4):
    args = build_parser().parse_args(["run", name, "--hosts", str(hosts),
                                      "--devices-per-host", "2", "--force"])
    return prepared_of(args).cases


def _write(path, cases) -> None:
    """One process's records of ``cases`` with the widest plausible numbers."""
    path.mkdir(parents=True)
    write_manifest(path, Manifest(path.name, "2026-01-01T00:00:00", ["podscale"], {},
                                  sorted({c.layout.key for c in cases}),
                                  {"versions": {"jax": "0.10.2"}}, status="complete"))
    rng = np.random.default_rng(0)
    for key in {c.layout.key for c in cases}:
        w = RecordWriter(path / "records" / key / "process-0.jsonl")
        for c in (c for c in cases if c.layout.key == key):
            wl = load_source(c.source)
            work = wl.work(c)
            times = tuple(123.456789e-6 * (1 + rng.random(c.settings.iters)))
            w.write(CaseRecord(c.id, 0, c.to_dict(), work.bytes_per_process,
                               work.flops_per_process, work.bytes_per_device, 12_345_678,
                               12_345, 1.5, 0.0, collective=wl.collective_of(c),
                               participants=work.participants, unchecked=1_234_567,
                               units={p.name: p.unit for p in wl.params if p.unit} or None),
                    Samples(c.id, 0, "compile", (0,), (12.3456,)),
                    Samples(c.id, 0, "timed", tuple(range(c.settings.iters)), times))
        w.close()


def test_every_builtin_table_fits_120_columns(tmp_path):
    names = sorted(n for n in builtins() if n not in ("replay",))  # replay needs an HLO file
    wide = {}
    for name in names:
        run_dir = tmp_path / name
        _write(run_dir, _default_cases(name))
        text = render(load_run(run_dir).table())
        wide[name] = max(len(line) for line in text.splitlines())
    assert len(wide) >= 10 and max(wide.values()) <= WIDTH, wide


def test_settings_once_units_and_one_meaning_per_column(tmp_path):
    run_dir = tmp_path / "run"
    _write(run_dir, _default_cases("all_gather", 2) + _default_cases("psum", 2))
    summary = load_run(run_dir).table()
    text = render(summary)
    lines = text.splitlines()
    assert sum("timed iterations" in line for line in lines) == 1  # the settings, once
    assert sum(line.startswith("# time: median over") for line in lines) == 1  # definition
    assert not any("iters" in line.split() for line in lines)  # no settings column
    gather = lines.index(next(x for x in lines if x.startswith("# all_gather")))
    psum = lines.index(next(x for x in lines if x.startswith("# psum")))
    # psum's size counts elements, all_gather's bytes; S is bytes per device in both
    assert "size=65536 elements" in lines[psum] and "(B)" in lines[psum + 2]
    assert "size=4096 B" in lines[gather] and "(B)" in lines[gather + 2]
    assert "# Avg bus bandwidth" in text and "# Unchecked elements   : " in text
    assert "#unchecked" in lines[gather + 1]
    data = json.loads(export(summary, "json"))
    assert data["units"]["psum"] == {"size": "elements"}
    assert data["units"]["all_gather"]["size"] == "B"
    csv = export(summary, "csv").splitlines()
    assert len(csv) == len(summary.frame) + 1 and csv[0].startswith("case_id,")


def test_report_cells_are_read_as_people_read_them():
    """A count pandas made a float beside a missing value prints as an integer, the missing
    one empty, a long float to 4 significant digits (no 17-digit floats, no 1.0 or nan)."""
    import numpy as np
    import pandas as pd

    from podscale.analysis.render.formats import markdown_table, readable

    df = pd.DataFrame({"step": [0, 1, np.nan], "ratio": [0.1 + 0.2, 1 / 3, 2.5],
                       "name": ["a", "b", "c"]})
    md = markdown_table(df.map(readable))
    assert md.splitlines()[2:] == ["| 0 | 0.3 | a |", "| 1 | 0.3333 | b |", "|  | 2.5 | c |"]
