"""The profiled program's record form (podscale/core/profilerecord.py): every declared kind
round-trips, an unknown kind or a line short of its fields is refused, and a form newer
than this podscale reads is refused in one line. The same checks on a real run's record
are in tests/test_profile.py."""

from __future__ import annotations

import pytest

from podscale.core.errors import UsageError
from podscale.core.profilerecord import KINDS, SCHEMA, Line, checked, line, schema_of


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_round_trips(kind):
    obj = {"kind": kind, **{f: i for i, f in enumerate(KINDS[kind].required)}, "extra": [1]}
    assert Line.of(obj).to_json() == obj and line(obj) is obj


def test_an_unknown_kind_or_a_short_line_is_refused():
    with pytest.raises(ValueError, match="unknown kind of profile line 'mystery'"):
        Line.of({"kind": "mystery"})
    with pytest.raises(ValueError, match="a 'end' line without exit_code"):
        Line.of({"kind": "end", "end": 1})
    good = {"kind": "offset", "offset_us": 0, "rtt_us": 0}
    with pytest.raises(UsageError, match=r"^f.jsonl: record 2: unknown kind .*'mystery'$"):
        checked([good, {"kind": "mystery"}, good], "f.jsonl")
    assert len(checked([good, good], "f.jsonl")) == 2


def test_the_form_is_read_from_the_start_line():
    start = {"kind": "start", "attach": 0}
    assert schema_of([{**start, "schema": SCHEMA}], "f") == SCHEMA
    assert schema_of([start], "f") == "podscale.profile/0"  # before the form was declared
    with pytest.raises(UsageError, match="written as podscale.profile/9, which this "
                                         "podscale does not read"):
        schema_of([{**start, "schema": "podscale.profile/9"}], "f")
