"""A cluster over time: ``podscale history`` finds a planted 1.5x slowdown of one case at
the run it began, reports a slowdown of every case as drift (not 200 changes), keeps runs
of other hardware apart, and builds each run's summary store from its records."""

import shutil

from podscale.analysis.render.text import history_text
from podscale.analysis.verdicts import history
from podscale.selfbench.historystage import make_history
from tests.conftest import podscale


def test_one_case_slowed_from_run_30_of_60_is_found_at_run_30(tmp_path):
    make_history(tmp_path, 60, 200, slow_case=7, slow_from=30)
    found = history.analyse(history.collect([tmp_path]))
    assert found["drift"].empty
    (change,) = found["changes"].itertuples()
    assert change.case_id.endswith("size=8192/h2xd4") and change.at == 30
    assert 1.4 < change.ratio < 1.6 and change.run_id.endswith("-000030-nightly")


def test_drift_of_every_case_is_one_drift_not_200_changes(tmp_path):
    make_history(tmp_path, 60, 200, drift_from=30)
    found = history.analyse(history.collect([tmp_path]))
    (drift,) = found["drift"].itertuples()
    assert drift.at == 30 and 1.4 < drift.ratio < 1.6 and drift.cases == 200
    assert found["changes"].empty


def test_other_hardware_is_kept_apart(tmp_path):
    """Nightly runs alternate between two kinds of machine, one 2x slower: per group there
    is nothing to report; mixed together every case would look unstable."""
    make_history(tmp_path / "a", 40, 20, seed=1, hardware="gpu:H100")
    make_history(tmp_path / "b", 40, 20, seed=2, hardware="gpu:A100", factor=2.0,
                 drift_from=0)
    df = history.collect([tmp_path / "a", tmp_path / "b"])
    found = history.analyse(df)
    assert df["hardware"].nunique() == 2
    assert found["drift"].empty and found["changes"].empty


def test_history_of_real_runs_through_the_cli(small_run, tmp_path):
    copy = tmp_path / "runs" / f"{small_run.name}-copy"
    shutil.copytree(small_run, copy, ignore=shutil.ignore_patterns("cache", ".cache-*"))
    res = podscale("history", str(small_run), str(copy), "--out", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    assert "# history: 2 runs" in res.stdout and "24 cases" in res.stdout
    assert (copy / "cache" / "summary.json").is_file()  # built from the records, kept
    assert (tmp_path / "out" / "history.csv").is_file()
    bad = podscale("history", str(small_run))
    assert bad.returncode == 2 and "history needs 2 or more runs" in bad.stderr


def test_a_damaged_run_is_named_and_left_out(tmp_path):
    """One run of 40 with a broken manifest and no store: named, left out, the rest
    analysed (the planted change still found); with fewer than 2 readable runs, exit 2."""
    make_history(tmp_path, 40, 20, slow_case=3, slow_from=20)
    damaged = sorted(p for p in tmp_path.iterdir() if p.is_dir())[5]
    (damaged / "run.json").write_text('{"schema": "podscale.run/3", broken')
    for store in damaged.glob("cache"):
        shutil.rmtree(store)
    df, skipped = history.gather([tmp_path])
    assert df["run_id"].nunique() == 39 and damaged.name not in set(df["run_id"])
    text = history_text(df, history.analyse(df), skipped)
    assert f"# left out: {damaged} (UsageError:" in text
    assert len(history.analyse(df)["changes"]) == 1
    for run in sorted(p for p in tmp_path.iterdir() if p.is_dir() and p != damaged)[1:]:
        shutil.rmtree(run)
    res = podscale("history", str(tmp_path))
    assert res.returncode == 2 and "1 of 2 have none or could not be read" in res.stderr


def test_a_change_of_timing_method_starts_a_series_not_a_change(tmp_path):
    """From run 15 on the runs' headline is device time, half the chain time (runs of an
    accelerator once device time was measured): each method is its own series, and
    --judge chain follows the chain times across all of them."""
    import json

    make_history(tmp_path, 30, 20, seed=3)
    for path in sorted(tmp_path.iterdir())[15:]:
        store = path / "cache" / history.STORE
        data = json.loads(store.read_text())
        at = {c: i for i, c in enumerate(data["columns"])}
        for row in data["rows"]:
            row[at["device_s"]] = row[at["time_s"]] / 2
            row[at["method"]], row[at["time_s"]] = "device", row[at["device_s"]]
        store.write_text(json.dumps(data))
    df = history.collect([tmp_path])
    assert set(df["method"]) == {"chain", "device"}
    found = history.analyse(df)
    assert found["drift"].empty and found["changes"].empty
    chain = history.collect([tmp_path], "chain")
    assert set(chain["method"]) == {"chain"} and chain["run_id"].nunique() == 30
    assert history.analyse(chain)["changes"].empty
    mixed = df.assign(settings=df["settings"].str.rsplit("/", n=1).str[0])  # method ignored
    assert not history.analyse(mixed)["drift"].empty  # what keying by method prevents
