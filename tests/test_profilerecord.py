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
    """The reader keeps a field no declaration has (an older or a newer writer's); the
    writer's check refuses it."""
    obj = {"kind": kind, **{f: i for i, f in enumerate(KINDS[kind].required)}}
    assert line(obj) is obj
    assert Line.of({**obj, "extra": [1]}).to_json() == {**obj, "extra": [1]}
    with pytest.raises(ValueError, match=f"a '{kind}' line declares no extra"):
        line({**obj, "extra": [1]})


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


def test_a_bad_line_on_an_error_path_is_said_and_never_raised(tmp_path, capsys):
    """A write the type checker would refuse (test_lint plants those), made anyway on the
    error path that writes the process's ``end``: ``record`` never raises into the
    program, the recorder says the slip and leaves the line out, and the record around
    it stays whole and readable."""
    from podscale.attach.recorder import Recorder
    from podscale.core.profilerecord import path_of, record

    rec = Recorder(tmp_path)
    rec.joined(0, None)
    rec.add(record({"kind": "offset", "offset_us": 1, "rtt_us": 2}))
    rec.add(record({"kind": "end", "end": 1.0}))  # type: ignore[typeddict-item]
    rec.add(record({"kind": "offset", "offset_us": 1, "rtt_us": 2, "rtt": 3}))  # type: ignore
    rec.add(record({"kind": "mystery"}))  # type: ignore
    rec.add(record({"kind": "end", "end": 2.0, "exit_code": 3, "error": "boom"}))
    rec.flush()
    said = capsys.readouterr().err.splitlines()
    assert said == ["podscale: a profile line not written: a 'end' line without exit_code",
                    "podscale: a profile line not written: a 'offset' line declares no rtt",
                    "podscale: a profile line not written: unknown kind of profile line "
                    "'mystery'"], said
    import json

    kept = [json.loads(x) for x in path_of(tmp_path, 0).read_text().splitlines()]
    assert [o["kind"] for o in kept] == ["offset", "end"] and kept[1]["exit_code"] == 3
    assert len(checked(kept, "f")) == 2


def kind_literals(roots: list) -> list[str]:
    """Every dict literal that spells a record line's kind (``{"kind": "..."}``) but is
    not the argument of ``record(...)``, where the type checker reads it."""
    import ast

    out = []
    for root in roots:
        for p in sorted(root.rglob("*.py")):
            tree = ast.parse(p.read_text())
            typed = {id(c.args[0]) for c in ast.walk(tree) if isinstance(c, ast.Call)
                     and isinstance(c.func, ast.Name) and c.func.id == "record" and c.args}
            out += [f"{p}:{n.lineno}" for n in ast.walk(tree)
                    if isinstance(n, ast.Dict) and n.keys and isinstance(n.keys[0], ast.Constant)
                    and n.keys[0].value == "kind" and id(n) not in typed]
    return out


def test_lines_are_written_only_through_their_declaration(tmp_path):
    """Every record line where profiled processes write and the reader reads is a literal
    given to ``record`` (typed by its kind's declaration); the check finds a planted
    one that is not."""
    from tests.conftest import ROOT

    assert kind_literals([ROOT / "podscale" / "attach", ROOT / "analysis" / "profile"]) == []
    (tmp_path / "m.py").write_text('LINE = {"kind": "silent", "from": 0, "to": 1}\n'
                                   'OK = record({"kind": "silent", "from": 0, "to": 1})\n')
    assert len(kind_literals([tmp_path])) == 1


@pytest.mark.parametrize("form", ["podscale.profile/0", SCHEMA])
def test_every_form_reads(form, tmp_path):
    """A record of each form this podscale reads (/0: no schema on start, and a field
    no declaration has; the current form) loads into the same frames."""
    import json

    from podscale.analysis.profile.load import load_profile
    from podscale.core.profilerecord import path_of, record
    from podscale.core.records import Manifest, write_manifest

    write_manifest(tmp_path, Manifest("r", "2026-01-01T00:00:00", ["t"],
                                      {"mode": "profile"}, ["h2xd1"], {"hostname": "t"},
                                      status="complete"))
    for p in (0, 1):
        start = record({"kind": "start", "attach": 0, "pid": 10 + p, "host": "h"})
        if form != "podscale.profile/0":
            start["schema"] = form
        lines = [start, record({"kind": "join", "start": 1, "end": 2, "process": p,
                                "processes": 2, "platform": "cpu", "device_kind": "cpu",
                                "local_devices": 1}),
                 record({"kind": "offset", "offset_us": 0, "rtt_us": 0}),
                 record({"kind": "computation", "id": 1, "name": "step", "wrapper": "jit"}),
                 record({"kind": "calls", "rows": [[1, s, 10 + 100 * s, 20 + 100 * s,
                                                    90 + 100 * s] for s in range(5)]}),
                 {**record({"kind": "silent", "from": 5, "to": 6}), "older": True},
                 record({"kind": "end", "end": 600, "exit_code": 0})]
        path_of(tmp_path, p).parent.mkdir(exist_ok=True)
        path_of(tmp_path, p).write_text("".join(json.dumps(o) + "\n" for o in lines))
    prof = load_profile(tmp_path)
    assert list(prof.processes["pid"]) == [10, 11] and set(prof.processes["platform"]) == {"cpu"}
    assert len(prof.calls) == 10 and set(prof.calls["name"]) == {"step"}
    assert list(prof.processes["exit_code"]) == [0, 0]
