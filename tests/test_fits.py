"""Latency-bandwidth fits recover what was planted (synthetic records, no JAX)."""

import numpy as np

from podscale.analysis import load_run, summarize
from podscale.analysis.data.summary import Summary
from podscale.analysis.models.bandwidth import bus_factor
from podscale.analysis.models.fits import fits
from podscale.analysis.render.text import fit_changes_text, fits_text
from tests.synth import make_run

ALPHA, BETA, BETA_DOT = 40e-6, 5e9, 2e9  # s, bus bytes/s, bytes/s


def planted(case, record):
    n = record.participants
    if case.workload == "psum" and n > 1:
        return ALPHA + record.bytes_per_device * bus_factor("all_reduce", n) / BETA
    return ALPHA / 2 + record.bytes_per_process / BETA_DOT


def test_fits_recover_planted_alpha_and_beta(tmp_path):
    run = make_run(tmp_path / "r", sizes=(4096, 65536, 1 << 20, 1 << 22), rounds=4,
                   launch_noise=0.05, time_of=planted)
    loaded = load_run(run)
    samples, cases = loaded.samples, loaded.cases
    table = fits(samples, Summary(summarize(samples, cases), loaded.params))
    assert len(table) == 16  # 2 workloads x 2 variants x 4 layouts
    coll = table[(table.workload == "psum") & (table.n > 1)]
    local = table[table.workload == "dot"]
    assert (coll.basis == "busbw").all() and (local.basis == "bytes/process").all()
    # the truth, once the synthetic records' own bias is counted (iterations are
    # base x (1 + 0.01 p) x (1 + 0.02|N|) on process p, and time is the median of the max
    # over processes), lies within the 95% intervals in most sweeps (bootstrap intervals
    # over 16 points cover ~90%: measured, see analysis/models/fits.py)
    def bias(rows):
        z = np.abs(np.random.default_rng(1).standard_normal((200_000, 2)))
        per = {h: np.median(((1 + 0.01 * np.arange(h)) * (1 + 0.02 * z[:, :h])).max(1))
               for h in (1, 2)}
        return rows.hosts.map(per)

    covered = []
    for rows, alpha, beta in ((coll, ALPHA * 1e6, BETA / 1e9), (local, ALPHA / 2 * 1e6,
                                                                 BETA_DOT / 1e9)):
        a, b = alpha * bias(rows), beta / bias(rows)
        covered += list((rows.alpha_lo <= a) & (a <= rows.alpha_hi))
        covered += list((rows.beta_lo <= b) & (b <= rows.beta_hi))
        assert (abs(rows.alpha_us / a - 1) < 0.25).all() and (abs(rows.beta_gbps / b - 1)
                                                              < 0.1).all(), rows
        assert ((rows.alpha_hi - rows.alpha_lo) < 0.6 * alpha).all()  # and they are tight
        assert np.allclose(rows.s_half_bytes, rows.alpha_us * 1e-6 * rows.beta_gbps * 1e9)
    assert sum(covered) >= 0.75 * len(covered), covered  # 23 of 28 (seeded)
    # a 2x slower link shows as half the beta, outside the first fit's interval
    slow = make_run(tmp_path / "s", sizes=(4096, 65536, 1 << 20, 1 << 22), rounds=4,
                    launch_noise=0.05,
                    time_of=lambda c, r: planted(c, r) + (r.bytes_per_device / BETA
                                                          if c.workload == "psum" else 0))
    run = load_run(slow)
    s2, c2 = run.samples, run.cases
    t2 = fits(s2, Summary(summarize(s2, c2), run.params))
    c2 = t2[(t2.workload == "psum") & (t2.n > 1)]
    assert (c2.beta_hi.to_numpy() < coll.beta_lo.to_numpy()).all()
    text = fits_text(table)
    assert "GB/s" in text and "µs" in text and "e+" not in text and "e-0" not in text


def test_fit_command_on_a_real_run(small_run, tmp_path):
    import pandas as pd

    from tests.conftest import podscale

    out = tmp_path / "fits.csv"
    res = podscale("fit", str(small_run), "--out", str(out))
    assert res.returncode == 0, res.stderr
    table = pd.read_csv(out)
    need = ["workload", "axes", "n", "alpha_us", "alpha_lo", "alpha_hi", "beta_gbps",
            "beta_lo", "beta_hi", "s_half_bytes", "r2"]
    assert set(need) <= set(table.columns) and len(table) == 8  # 2 workloads x 2 x 2 layouts
    assert set(table[table.workload == "psum"].n) == {2, 4}
    assert (table.alpha_lo <= table.alpha_hi).all() and (table.beta_lo <= table.beta_hi).all()
    assert "µs" in res.stdout and "e+" not in res.stdout
    single = podscale("fit", str(small_run.parent / "missing"))
    assert single.returncode == 2 and "no such run directory" in single.stderr


def test_compare_names_a_halved_beta_and_nothing_else(tmp_path):
    """B's psum links planted at half the bandwidth: beta 'changed' in every multi-
    participant psum sweep, alpha and every dot sweep '~'."""
    from podscale.analysis.verdicts.fitcompare import compare_fits

    def plant(beta):
        def t(case, rec):
            if case.workload == "psum" and rec.participants > 1:
                return ALPHA + rec.bytes_per_device * bus_factor("all_reduce",
                                                                 rec.participants) / beta
            return ALPHA / 2 + rec.bytes_per_process / BETA_DOT
        return t

    sizes = (4096, 65536, 1 << 20)
    a = make_run(tmp_path / "a", sizes=sizes, rounds=3, time_of=plant(BETA))
    b = make_run(tmp_path / "b", seed=1, sizes=sizes, rounds=3, time_of=plant(BETA / 2))
    t = compare_fits(a, b)
    slowed = (t.workload == "psum") & (t.n.astype(int) > 1)
    assert slowed.sum() == 6 and (t.loc[slowed, "beta_verdict"] == "changed").all()
    assert np.allclose(t.loc[slowed, "beta_ratio"], 0.5, rtol=0.05)
    assert (t.loc[~slowed, "beta_verdict"] == "~").all() and (t.alpha_verdict == "~").all()
    assert "0.50x, changed" in fit_changes_text(t)
