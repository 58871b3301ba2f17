"""Loading a run: the columnar cache gives exactly what parsing the records gives, a stale
cache is never used, parsing spread over processes gives the same frames, and statistics
on case codes equal pandas' groupby."""

import json

import pandas as pd

from podscale.analysis import load, load_run
from podscale.analysis.models.stats import per_iteration, process_medians
from tests.synth import make_run


def frames(run):
    return {n: getattr(run, n).reset_index(drop=True) for n in ("samples", "cases", "envs")}


def assert_same(a, b):
    for name in ("samples", "cases", "envs"):
        pd.testing.assert_frame_equal(a[name], b[name], check_dtype=True)


def test_cache_gives_what_parsing_gives_and_goes_stale(tmp_path):
    run_dir = make_run(tmp_path / "r", hosts=(1, 2), dph=(1, 2))
    cold = load_run(run_dir)
    assert (run_dir / "cache" / "meta.json").is_file()
    warm = load_run(run_dir)
    assert_same(frames(cold), frames(warm))
    assert dict(cold.skipped) == dict(warm.skipped)
    assert isinstance(warm.samples["case_id"].dtype, pd.CategoricalDtype)
    # a record file changes: the cache is not used, the change is seen
    path = sorted(run_dir.glob("records/h2xd2/process-1.jsonl"))[0]
    lines = path.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if '"type": "samples"' in line
             and '"timed"' in line)
    obj = json.loads(lines[i])
    obj["seconds"] = [x * 1000 for x in obj["seconds"]]
    lines[i] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n")
    changed = load_run(run_dir)
    s = changed.samples
    hit = s[(s.case_id == obj["case_id"]) & (s.process == 1) & (s.phase == "timed")
            & (s["round"] == obj["round"])]
    assert sorted(hit["seconds"]) == sorted(obj["seconds"])
    before = cold.samples[cold.samples.phase == "timed"]["seconds"].max()
    assert s[s.phase == "timed"]["seconds"].max() > 100 * before


def test_parsing_in_a_pool_gives_the_same_frames(tmp_path, monkeypatch):
    run_dir = make_run(tmp_path / "r", hosts=(4,), dph=(1,))
    one = load_run(run_dir)
    import shutil

    from podscale.analysis.data import frames as loader

    shutil.rmtree(run_dir / "cache")
    monkeypatch.setattr(loader, "PARALLEL_FILES", 2)  # 4 files: a pool of 2 processes
    monkeypatch.setattr(loader.os, "cpu_count", lambda: 2)
    pooled = load_run(run_dir)
    assert_same(frames(one), frames(pooled))


def test_statistics_on_codes_equal_pandas_groupby(tmp_path):
    run = load_run(make_run(tmp_path / "r"))
    plain = run.samples.assign(case_id=run.samples["case_id"].astype(object))
    a = per_iteration(run.samples).sort_values(["case_id", "round", "iteration"])
    b = per_iteration(plain).sort_values(["case_id", "round", "iteration"])
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True),
                                  check_dtype=False)
    assert len(a) == a[["case_id", "round", "iteration"]].drop_duplicates().shape[0] > 0
    m1, m2 = process_medians(run.samples), process_medians(plain)
    assert (m1.to_numpy() == m2.to_numpy()).all() and len(m1) == len(m2) > 0


def test_samples_joined_with_their_cases(tmp_path):
    df = load(make_run(tmp_path / "r"))
    assert {"run_id", "workload", "size", "seconds"} <= set(df.columns)
    assert df["workload"].notna().all() and len(df) == len(load_run(tmp_path / "r").samples)


def test_docs_reading_snippets_run(small_run):
    """The Python listings of docs/api.md and docs/run-directory.md run as written, on a
    real run (``results/<run>`` replaced by its path); a broken name would raise."""
    import re

    from tests.conftest import ROOT

    ran = 0
    for page in ("api.md", "run-directory.md"):
        text = (ROOT / "docs" / page).read_text()
        for block in re.findall(r"```python\n(.*?)```", text, re.S):
            code = block.replace("results/<run>", str(small_run))
            scope: dict = {}
            exec(compile(code, f"docs/{page}", "exec"), scope)  # noqa: S102 - our docs
            ran += 1
            assert any(hasattr(v, "samples") for v in scope.values()), page
    assert ran == 2


def test_a_complete_run_whose_records_are_empty_is_refused(small_run, tmp_path):
    """The manifest says complete, every record file is empty: show and compare say the
    data is lost (one line, exit 2), not a table of nothing or a platform ''."""
    import shutil

    from tests.conftest import podscale

    copy = tmp_path / "emptied"
    shutil.copytree(small_run, copy, ignore=shutil.ignore_patterns("cache", ".cache-*"))
    for f in (copy / "records").rglob("*.jsonl"):
        f.write_text("")
    for args in (("show", str(copy)), ("compare", str(small_run), str(copy))):
        res = podscale(*args)
        assert res.returncode == 2, res.stderr
        assert res.stderr.startswith(f"podscale: error: {copy}: its manifest says complete, "
                                     "but its records hold nothing"), res.stderr
        assert len(res.stderr.strip().splitlines()) == 1


def test_a_degraded_jax_hook_is_said_in_the_report(small_run, tmp_path):
    """A run whose workers' JAX lacked a hook (planted in a copy's env record: the
    coordination client gone) says so first in its report's Findings; the real run says
    nothing of the kind."""
    import shutil

    from podscale.analysis.verdicts.findings import degraded_findings
    from tests.conftest import podscale

    assert degraded_findings(load_run(small_run).envs) == []
    copy = tmp_path / "run"
    shutil.copytree(small_run, copy, ignore=shutil.ignore_patterns("cache", ".cache-*", "report"))
    record = sorted(copy.glob("records/*/process-1.jsonl"))[0]
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    for obj in lines:
        if obj.get("type") == "env":
            obj["extra"]["degraded"] = {"coordination_client": "jax._src.distributed "
                                        "moved: no key-value store"}
    record.write_text("".join(json.dumps(obj) + "\n" for obj in lines))
    said = "this JAX lacks a hook podscale uses (coordination_client): jax._src.distributed " \
           "moved: no key-value store"
    assert degraded_findings(load_run(copy).envs) == [said]
    assert podscale("report", str(copy)).returncode == 0
    assert said in (copy / "report" / "summary.md").read_text()
