import json

import pytest

from podscale.core.errors import UsageError
from podscale.core.recordfile import read_columns, read_records
from podscale.core.records import (
    CaseRecord,
    Manifest,
    Sample,
    Samples,
    lifecycle,
    pack,
    read_manifest,
    write_manifest,
)
from podscale.worker.writers import RecordWriter


def test_roundtrip_and_torn_last_line(tmp_path):
    path = tmp_path / "process-0.jsonl"
    w = RecordWriter(path)
    s = Sample("dot/x", 0, "timed", 3, 0.25)
    c = CaseRecord("dot/x", 0, {"workload": "dot"}, 10, 20, 5, 4, 0, 0.0, 1.5)
    w.write(s, c)
    w.close()
    with path.open("a") as fh:
        fh.write('{"type": "sample", "case_')  # a killed writer's half line
    assert read_records(path) == [s, c]


def test_columns_match_records_and_name_a_bad_sample(tmp_path):
    """The bulk reader (analysis's) gives what the record reader gives, drops a torn last
    line, and names the line of a sample that breaks Sample's rules."""
    path = tmp_path / "process-0.jsonl"
    w = RecordWriter(path)
    samples = [Sample(f"c{i % 3}", i % 2, "timed", i, 0.001 * i, round=i % 4)
               for i in range(50)]
    c = CaseRecord("c0", 0, {"workload": "dot"}, 10, 20, 5, 4, 0, 0.0, 1.5)
    w.write(samples[0], c, *samples[1:])
    w.close()
    cols, other = read_columns(path)
    assert other == [c] and list(cols["iteration"]) == list(range(50))
    assert list(cols["seconds"]) == [s.seconds for s in samples]
    assert list(cols["round"]) == [s.round for s in samples]
    with path.open("a") as fh:
        fh.write('{"type": "sample", "case_')
    assert list(read_columns(path)[0]["case_id"]) == [s.case_id for s in samples]
    lines = path.read_text().splitlines()[:-1]
    lines[7] = lines[7].replace('"seconds": 0.006', '"seconds": -0.006')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError, match=r"process-0.jsonl:8: not a podscale record"):
        read_columns(path)


def test_validation():
    with pytest.raises(ValueError):
        Sample("c", 0, "bogus", 0, 1.0)
    with pytest.raises(ValueError):
        Sample("c", 0, "timed", 0, float("nan"))
    with pytest.raises(ValueError):
        CaseRecord("c", 0, {}, 1, 1, 1, checked=2, wrong=3, max_error=0.0)


def test_foreign_files(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"hello": 1}\n{"type": "sample"}\n')
    with pytest.raises(UsageError, match="not a podscale record"):
        read_records(bad)
    (tmp_path / "run.json").write_text(json.dumps({"schema": "other/9"}))
    with pytest.raises(UsageError, match="schema"):
        read_manifest(tmp_path)


def test_manifest_roundtrip(tmp_path):
    m = Manifest("r", "2026-01-01", ["podscale"], {}, ["h1xd1"], {"git_commit": None})
    write_manifest(tmp_path, m)
    assert read_manifest(tmp_path) == m


def test_old_schema_is_named(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"schema": "podscale.run/1"}))
    with pytest.raises(UsageError, match="podscale.run/1.*before workloads.*re-run"):
        read_manifest(tmp_path)


@pytest.mark.parametrize("exc, status", [(None, "complete"), (RuntimeError("boom"), "failed"),
                                         (KeyboardInterrupt(), "interrupted")])
def test_manifest_lifecycle(tmp_path, exc, status):
    m = Manifest("r", "2026-01-01", ["podscale"], {}, ["h1xd1"], {})
    seen = []
    try:
        with lifecycle(tmp_path, m):
            seen.append(read_manifest(tmp_path).status)
            if exc is not None:
                raise exc
    except (RuntimeError, KeyboardInterrupt):
        pass
    done = read_manifest(tmp_path)
    assert seen == ["running"] and done.status == status and done.finished
    assert (done.error is None) == (exc is None)
    if status == "failed":
        assert done.error == "boom"


def test_sample_blocks_hold_exactly_their_samples(tmp_path):
    """Workers write one line per process, case, phase and round; the bulk reader gives the
    same columns as single samples would, in order, and a bad value in a block is named."""
    samples = [Sample("a", 1, "compile", 0, 0.5, round=2),
               *(Sample("a", 1, "timed", i, 0.01 * (i + 1), round=2) for i in range(5)),
               Sample("b", 1, "timed", 0, 0.25, device=3)]
    blocks = pack(samples)
    assert [len(b.seconds) for b in blocks] == [1, 5, 1]
    assert [s for b in blocks for s in b.expand()] == samples
    path = tmp_path / "process-1.jsonl"
    w = RecordWriter(path)
    w.write(*blocks)
    w.close()
    assert len(path.read_text().splitlines()) == 3
    cols, other = read_columns(path)
    assert other == [] and list(cols["seconds"]) == [s.seconds for s in samples]
    assert list(cols["iteration"]) == [s.iteration for s in samples]
    assert list(cols["case_id"]) == [s.case_id for s in samples]
    assert list(cols["device"]) == [-1 if s.device is None else s.device for s in samples]
    assert list(cols["round"]) == [s.round for s in samples]
    text = path.read_text().replace("0.03", "-0.03")
    path.write_text(text)
    with pytest.raises(UsageError, match=r"process-1.jsonl:2: not a podscale record"):
        read_columns(path)
    with pytest.raises(ValueError, match="as many iterations"):
        Samples("a", 0, "timed", (0, 1), (0.1,))
