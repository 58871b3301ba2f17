"""A run's exports, each read by its real consumer: github-action-benchmark's and Bencher's
JSON and Google Benchmark's checked against their documented formats by JSON Schema
(tests/data/schemas), OpenMetrics by prometheus_client's parser, JUnit XML parsed and
counted; names stable across exports, every reproduce command one the CLI takes; the
digest validated against the schema it ships. (Verdicts in the exports: tests/test_cli.py's
A/B; asv's own results: tests/test_asv.py.)"""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET

import jsonschema

from tests.conftest import ROOT, podscale

SCHEMAS = ROOT / "tests" / "data" / "schemas"


def _export(run, fmt: str, *extra: str) -> str:
    res = podscale("export", str(run), "--format", fmt, *extra)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _parses(command: str) -> None:
    from podscale.frontend.cli import build_parser

    words = shlex.split(command)
    assert words[:2] == ["podscale", "run"], command
    build_parser().parse_args(words[1:])  # exits (SystemExit) where it would not parse


def test_every_format_is_read_by_its_consumer(small_run):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    from podscale.analysis import load_run

    cases = sorted(load_run(small_run).summary()["case_id"])
    gab = json.loads(_export(small_run, "github-action-benchmark"))
    jsonschema.validate(gab, json.loads((SCHEMAS / "github-action-benchmark.json").read_text()))
    assert [e["name"] for e in gab] == cases and {e["unit"] for e in gab} == {"us"}
    assert all("reproduce: podscale run " in e["extra"] for e in gab)
    _parses(gab[0]["extra"].split("reproduce: ")[1])
    assert json.loads(_export(small_run, "github-action-benchmark")) == gab  # stable names
    rates = json.loads(_export(small_run, "github-action-benchmark", "--figures", "busbw"))
    assert rates and all(e["name"].startswith("psum@") for e in rates)  # collectives only
    bmf = json.loads(_export(small_run, "bencher"))
    jsonschema.validate(bmf, json.loads((SCHEMAS / "bencher-metric-format.json").read_text()))
    assert sorted(bmf) == cases and all(
        m["lower_value"] <= m["value"] <= m["upper_value"] for b in bmf.values()
        for m in b.values())
    gb = json.loads(_export(small_run, "google-benchmark"))
    jsonschema.validate(gb, json.loads((SCHEMAS / "google-benchmark.json").read_text()))
    families = {f.name: f for f in text_string_to_metric_families(
        _export(small_run, "openmetrics"))}
    time = families["podscale_case_time_seconds"]
    assert time.type == "gauge" and time.unit == "seconds" and len(time.samples) == 3 * len(
        cases)  # median, and the rounds' least and greatest
    assert {s.labels["case"] for s in time.samples} == set(cases)
    assert families["podscale_run"].type == "info"
    suite = ET.fromstring(_export(small_run, "junit").split("\n", 1)[1])
    assert suite.tag == "testsuite" and int(suite.get("tests")) == len(cases) == len(
        suite.findall("testcase")) and suite.get("failures") == "0"


def test_bad_export_requests_are_one_line(small_run, tmp_path):
    for args, said in ((["--format", "github-action-benchmark", "--figures", "time,busbw"],
                        "one direction each"),
                       (["--format", "asv", "--against", str(small_run)],
                        "asv compares commits itself"),
                       (["--format", "github-action-benchmark", "--figures", "speed"],
                        "bad --figures")):
        res = podscale("export", str(small_run), *args)
        assert res.returncode == 2 and said in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and not res.stdout


def test_the_digest_holds_its_schema_and_its_bound(small_run):
    res = podscale("digest", "--schema")
    assert res.returncode == 0
    schema = json.loads(res.stdout)
    res = podscale("digest", str(small_run), "--most", "3")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, schema)
    assert len(doc["cases"]) == 3 and doc["cases_left_out"] > 0
    assert doc["reproduce"].startswith("podscale run dot,psum")
    codes = {f["code"] for f in doc["findings"]}
    assert codes and all(f["next"].startswith("podscale ") for f in doc["findings"])
    _parses(doc["cases"][0]["reproduce"])
