"""What the compiler did differently: each case's compiled-program inventory, and
``podscale ab`` naming the change when an environment variable splits an all-reduce."""

import json
import os
from pathlib import Path

import pytest

from podscale.analysis.verdicts.programs import changes, describe
from podscale.worker.program import inventory
from tests.conftest import podscale

DATA = Path(__file__).parent / "data"


def test_inventory_of_an_optimized_module():
    found = inventory((DATA / "module.hlo.txt").read_text())
    kinds = [(c["kind"], c["async"], c["bytes"], c["groups"]) for c in found]
    assert ("all-reduce", True, 512, "[2,2]<=[4]") in kinds  # async start/done, iota groups
    assert ("collective-permute", False, 16, "{{0,1},{1,2},{2,3},{3,0}}") in kinds
    assert ("reduce-scatter", False, 64, "{{0,1,2,3}}") in kinds  # bf16[2,16]
    assert ("all-gather", False, 2048, "mesh['x'=2,'y'=2] {'x','y'}") in kinds


def _prog(*collectives, flags=""):
    return {"collectives": list(collectives), "xla_flags": flags,
            "hash": repr(collectives) + flags, "versions": {"jax": "0.10.2"}}


def _ar(shapes, count=1, asyn=False, groups="{{0,1,2,3}}"):
    sizes = {"f32[1537]": 6148, "f32[1024]": 4096, "f32[512]": 2048, "f32[1]": 4}
    return {"kind": "all-reduce", "async": asyn, "shapes": shapes, "count": count,
            "bytes": sum(sizes[s] for s in shapes), "groups": groups}


def test_changes_are_named():
    one = _prog(_ar(["f32[1537]"]))
    three = _prog(_ar(["f32[1024]"]), _ar(["f32[512]"]), _ar(["f32[1]"]))
    assert changes(one, three) == ["all-reduce ×1 of 6,148 B → ×3 of 4,096 + 2,048 + 4 B"]
    assert changes(one, _prog(_ar(["f32[1537]"], asyn=True))) == ["all-reduce became async"]
    grouped = changes(one, _prog(_ar(["f32[1537]"], groups="{{0,1},{2,3}}")))
    assert grouped == ["all-reduce groups changed: {{0,1,2,3}} → {{0,1},{2,3}}"]
    flags = changes(one, _prog(_ar(["f32[1537]"]), flags="--xla_foo=1"))
    assert flags == ["XLA_FLAGS '' → '--xla_foo=1'"]
    assert changes(one, one) == []
    assert describe(three) == "all-reduce ×3 of 4,096 + 2,048 + 4 B"


def _ab(tmp_path, split: str):
    res = podscale("ab", f"{DATA / 'split_psum.py'}:split", "--hosts", "1",
                   "--devices-per-host", "2", "--variants", "shard_map", "--rounds", "2",
                   "--iters", "2", "--warmup", "0", "--env-b", f"PODSCALE_TEST_SPLIT={split}",
                   "--out", str(tmp_path), env={**os.environ})
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    return res.stdout


def test_ab_names_a_split_all_reduce_and_aa_shows_none(tmp_path):
    """What the compiler did differently is read from the compiled programs, not from
    the timing: it needs no quiet machine (the verdicts beside it are not asserted)."""
    out = _ab(tmp_path / "ab", "1")
    assert "# compiled programs changed in 1 of 1 case(s):" in out
    assert "all-reduce ×1 of 6,148 B → ×1 of 4,096 + 2,048 + 4 B" in out  # XLA combined them
    assert "[program: all-reduce" in out  # next to the case's verdict
    same = _ab(tmp_path / "aa", "0")
    assert "# compiled programs: the same in all 1 case(s)" in same and "[program:" not in same


def test_a_programs_identity_says_what_changed_beyond_its_collectives():
    """Two programs with the same collectives (none) but another input shape, more FLOPs
    and another fusion count: not "the same" (their fingerprints differ), and each change
    named; equal fingerprints are the same whatever else the records hold."""
    from podscale.core.hloidentity import identity

    module = (DATA / "module.hlo.txt").read_text()
    base = identity(module)
    assert base["fingerprint"] and base["parameters"] and base["ops"]["collective"] >= 4
    a = {**base, "collectives": [], "hash": "a", "cost": {"flops": 2048.0, "bytes": 4096.0}}
    b = {**a, "fingerprint": "other", "hash": "b", "parameters": ["f32[1044]"],
         "ops": {**base["ops"], "fusion": base["ops"].get("fusion", 0) + 1},
         "cost": {"flops": 2088.0, "bytes": 4176.0}}
    said = changes(a, b)
    assert f"parameters {', '.join(base['parameters'])} → f32[1044]" in said
    assert "FLOPs 2,048 → 2,088 (+2.0%)" in said and "bytes accessed 4,096 → 4,176 (+2.0%)" \
        in said
    assert any(s.startswith("ops: fusion ") for s in said), said
    assert changes(a, {**a, "hash": "flags differ", "xla_flags": "--xla_foo"}) == []
    # an older record (no fingerprint): its hash decides, as before
    old = {k: v for k, v in a.items() if k != "fingerprint"}
    assert changes(old, {**old, "hash": "c"}) == [
        "compiled program changed (same signature, ops by kind and collectives: fusion or "
        "layout decisions)"]


def _extra(tmp_path, extra: str) -> str:
    res = podscale("ab", f"{DATA / 'extra_op.py'}:extra_op", "-p", "op=scale", "--sizes",
                   "256K", "--hosts", "1", "--devices-per-host", "1", "--variants",
                   "shard_map", "--rounds", "3", "--iters", "10", "--env-b",
                   f"PODSCALE_TEST_EXTRA={extra}", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr + res.stdout[-2000:]
    return res.stdout


def test_ab_names_the_op_that_moved(tmp_path):
    """Arm B adds one op (a cumulative sum, times zero: the same output): the ops section
    names it new in B with its time and interval, and its program's op counts changed."""
    out = _extra(tmp_path / "ab", "1")
    section = out.split("# ops: ", 1)[1].split("# fits:", 1)[0]
    ops = [line for line in section.splitlines() if line.startswith("#   extra_op@")]
    assert len(ops) == 1 and "reduce-window" in ops[0] and "new in B +" in ops[0], out
    assert "95% CI +" in ops[0] and "of the case's +" in ops[0]
    assert "ops: fusion 1 →" in out  # what the compiler did differently, beside it
    # the same in the report of B (its compare section) and as JSON for scripts
    (a,), (b,) = (tmp_path / "ab").glob("*-A"), (tmp_path / "ab").glob("*-B")
    assert podscale("report", str(b)).returncode == 0
    summary = (b / "report" / "summary.md").read_text()
    assert f"## Compared with {a.name}" in summary and "| new in B |" in summary
    res = podscale("compare", str(a), str(b), "--format", "json")
    doc = json.loads(res.stdout)
    assert doc["schema"] == "podscale.compare/1" and doc["cases"][0]["verdict"] in (
        "slower", "noisy")
    assert any("reduce-window" in o["op"] and o["status"] == "new in B" and
               o["verdict"] == "slower" for o in doc["ops"]), doc["ops"]


def test_an_op_is_judged_against_its_cases_noise():
    """Three rounds a side that fell apart (A 200-210 µs, B 88-95 µs: the CPU device pass
    of an A/A seen in make test) flag the op where its case is steady, and not where the
    case's own B/A interval spans 0.46-4.7 (half width 3.7): an op moves no more than its
    case can tell (#64)."""
    import numpy as np
    import pandas as pd

    from podscale.analysis.verdicts.opdiff import case_noise, judge, moved

    a = {"c": {"fusion": np.array([200.0, 210.0, 205.0])}}
    b = {"c": {"fusion": np.array([90.0, 95.0, 88.0])}}
    steady = judge(a, b, threshold=0.05, alpha=0.05)
    assert list(moved(steady)["verdict"]) == ["faster"], steady
    table = pd.DataFrame({"case_id": ["c"], "ci_lo": [0.457], "ci_hi": [4.666]})
    assert case_noise(table) == pytest.approx({"c": 3.666})
    noisy = judge(a, b, threshold=0.05, alpha=0.05, noise=case_noise(table))
    assert moved(noisy).empty and list(noisy["verdict"]) == ["~"], noisy


@pytest.mark.alone
def test_aa_flags_no_op(tmp_path):
    """An A/A run (the same arm twice) flags no op, as it flags no case: it judges timing
    (beside three busy workers an op of 3 rounds a side moved 37% in A/A), so alone."""
    same = _extra(tmp_path / "aa", "0")
    assert "# ops: none moved" in same, same  # (beyond the noise, where the case is noisy)
    assert not [line for line in same.split("# ops: ", 1)[1].splitlines()
                if line.startswith("#   extra_op@")], same
    assert "# compiled programs: the same in all 1 case(s)" in same
