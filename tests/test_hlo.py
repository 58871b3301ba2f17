"""The HLO collective inventory on a hand-written module in the forms XLA prints
(tests/data/module.hlo.txt; no JAX)."""

from pathlib import Path

import pytest

from podscale.analysis.data.hlo import inventory, replica_groups

MODULE = (Path(__file__).parent / "data" / "module.hlo.txt").read_text()


def test_inventory_of_a_module():
    found = {c.name: c for c in inventory(MODULE, 4)}
    assert set(found) == {"ag", "ags", "rs", "ars", "cp", "ra", "bad"}  # no -done halves
    ag = found["ag"]
    assert (ag.kind, ag.count, ag.dtype, ag.groups) == ("all_gather", 1, "f32", [[0, 1, 2, 3]])
    assert ag.send_bytes == 32 * 16 * 4 // 4  # the gathered result / n
    ags = found["ags"]  # async: (operand, result); groups from a transposed iota
    assert ags.groups == [[0, 2], [1, 3]] and ags.send_bytes == 8 * 16 * 4
    rs = found["rs"]
    assert rs.op == "max" and rs.dtype == "bf16" and rs.send_bytes == 2 * 16 * 2 * 4
    ars = found["ars"]  # in a while body that runs 5 times
    assert ars.kind == "all_reduce" and ars.count == 5 and ars.op == "sum"
    assert ars.groups == [[0, 1], [2, 3]] and ars.send_bytes == 8 * 16 * 4
    cp = found["cp"]  # in a loop of unknown trip count: not guessed
    assert cp.count is None and cp.pairs == [(0, 1), (1, 2), (2, 3), (3, 0)]
    assert found["ra"].kind == "unknown" and "not replayed" in found["ra"].reason
    assert found["bad"].kind == "unknown" and found["bad"].reason


@pytest.mark.parametrize("text, groups", [
    ("{}", [[0, 1, 2, 3]]),
    ("{{0,2},{1,3}}", [[0, 2], [1, 3]]),
    ("[1,4]<=[4]", [[0, 1, 2, 3]]),
    ("[4,2]<=[2,4]T(1,0)", [[0, 4], [1, 5], [2, 6], [3, 7]]),
    ("mesh['axis_0'=4,'axis_1'=1] {'axis_0'}", [[0, 1, 2, 3]]),
    ("mesh['x'=4,'y'=2] {'y'}", [[0, 1], [2, 3], [4, 5], [6, 7]]),
    ("mesh['x'=8] {'x':(2)2}", [[0, 2], [1, 3], [4, 6], [5, 7]]),
    ("mesh['x'=8] {'x':(1)2, 'x':(4)2}", [[0, 1, 4, 5], [2, 3, 6, 7]]),
    ("mesh['x'=2,'y'=2], device_ids=(3,2,1,0) {'x'}", [[3, 1], [2, 0]]),
])
def test_replica_group_forms(text, groups):
    assert replica_groups(text, 4) == groups
