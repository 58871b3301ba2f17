"""Findings a senior engineer would sign: no tautology (a case against a ceiling measured
from itself), no latency-bound size held against a bandwidth, noisy cases named, no fit
from two sizes, and the spread only over the processes that take part."""

import pandas as pd

from podscale.analysis.models.fits import Fitted
from podscale.analysis.verdicts.coded import findings


def _row(workload, size, pct, ceiling, regime, **kw):
    return {"workload": workload, "variant": "shard_map", "dtype": "float32", "hosts": 2,
            "devices_per_host": 2, "bytes_per_device": size, "pct_ceiling": pct,
            "ceiling": ceiling, "regime": regime, "alpha_us": 120.0, "s_half_bytes": 65536.0,
            "wrong": 0, "unchecked": 0, "compile_s": 0.01, "round_cv": 0.05,
            "rank_min_s": 1e-3, "rank_max_s": 1.1e-3, **kw}


LOOP = "loopback transfer between processes, best algbw of pairs in this run"


def test_no_tautology_and_no_latency_bound_case_against_a_bandwidth():
    summary = pd.DataFrame([
        _row("pairs", 1 << 20, 100.0, LOOP, "bandwidth"),  # the ceiling is this case
        _row("all_to_all", 4096, 0.00297, LOOP, "latency"),  # latency-bound
        _row("all_reduce", 1 << 22, 41.0, LOOP, "bandwidth"),
        _row("all_gather", 1 << 22, 63.0, LOOP, "bandwidth"),
    ])
    found = findings(summary, pd.DataFrame(), pd.DataFrame(columns=["outlier"]))
    text = "\n".join(found)
    (ceiling,) = [line for line in found if "% of ceiling" in line]
    assert "100" not in ceiling and "pairs shard_map" not in ceiling  # no tautology
    assert "0.00297" not in text  # a latency-bound size is not a % of a bandwidth
    assert "best 63.0% of ceiling, all_gather" in ceiling and "worst 41.0%, all_reduce" in ceiling
    assert "1 latency-bound case(s) (size < S_half) are held against their fitted alpha" \
        in text and "all_to_all" in text


def test_noisy_cases_named_and_two_size_sweeps_not_fitted():
    summary = pd.DataFrame([
        _row("all_reduce", 4096, float("nan"), "", None, round_cv=0.5),
        _row("all_gather", 8192, float("nan"), "", None, round_cv=0.3),
        _row("psum", 8192, float("nan"), "", None),
    ])
    fitted = Fitted(pd.DataFrame(columns=["r2"]), 2)
    text = "\n".join(findings(summary, pd.DataFrame(), pd.DataFrame(columns=["outlier"]),
                              fitted=fitted))
    assert "2 of 3 cases are noisy" in text
    assert "all_reduce shard_map float32 4.00 KiB on h2xd2; all_gather" in text
    assert "2 size sweep(s) have 2 sizes: not fitted" in text


def test_poor_fit_is_reported():
    summary = pd.DataFrame([_row("psum", 8192, float("nan"), "", None)])
    fitted = Fitted(pd.DataFrame([{"r2": -0.37, "workload": "psum", "variant": "pmap",
                                   "hosts": 2, "devices_per_host": 2}]), 0)
    text = "\n".join(findings(summary, pd.DataFrame(), pd.DataFrame(columns=["outlier"]),
                              fitted=fitted))
    assert "explain the times poorly (r2 < 0.9; worst -0.37, psum pmap on h2xd2)" in text
