"""What the compiler did differently: each case's compiled-program inventory, and
``podscale ab`` naming the change when an environment variable splits an all-reduce."""

import os
from pathlib import Path

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
