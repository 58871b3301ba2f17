import pytest

from podscale.cases import Case, SuiteSpec, expand, group_by_layout, parse_size
from podscale.errors import UsageError


def test_parse_size():
    assert parse_size("4096") == 4096
    assert parse_size("64K") == 65536
    assert parse_size("1m") == 1 << 20
    assert parse_size("2**10") == 1024
    with pytest.raises(UsageError):
        parse_size("lots")


def test_expand_groups_by_layout():
    spec = SuiteSpec(sizes=[8, 16], hosts=[1, 2], devices_per_host=[1, 2])
    cases = expand(spec)
    assert len(cases) == 2 * 2 * 2 * 2 * 2
    groups = group_by_layout(cases)
    assert [k.key for k in groups] == ["h1-d1", "h1-d2", "h2-d1", "h2-d2"]
    assert len({c.id for c in cases}) == len(cases)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(suite="nope"), "unknown suite"),
        (dict(size=3, devices_per_host=2), "not divisible"),
        (dict(hosts=0), "hosts must be >= 1"),
        (dict(dtype="int4"), "unknown dtype"),
    ],
)
def test_bad_cases(kwargs, message):
    params = dict(suite="dot", variant="pmap", dtype="float32", size=8, hosts=1,
                  devices_per_host=1) | kwargs
    with pytest.raises(UsageError, match=message):
        Case(**params)
