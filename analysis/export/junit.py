"""A run as JUnit XML, which every CI system reads: a testsuite of one testcase per case,
failed where a result was wrong or, against another run, where the verdict is slower;
skipped where a comparison could not judge it (noisy); the figures and the command that
reproduces the case as properties."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree as ET

from podscale.analysis.export.rows import Row, RunFacts


def _failure(row: Row) -> tuple[str, str] | None:
    if row.wrong:
        return "wrong results", f"{row.wrong} of {row.checked} values outside tolerance"
    if row.verdict == "slower":
        lo, hi = row.interval or (row.ratio, row.ratio)
        return "regression", (f"slower: B/A {row.ratio:.3f} (95% CI {lo:.3f}-{hi:.3f}); "
                              f"reproduce: {row.command}")
    return None


def junit(rows: Sequence[Row], facts: RunFacts) -> str:
    """The testsuite as XML text."""
    failures = sum(_failure(r) is not None for r in rows)
    skipped = sum(r.verdict == "noisy" for r in rows)
    suite = ET.Element("testsuite", name=f"podscale {facts.run_id}", tests=str(len(rows)),
                       failures=str(failures), errors="0", skipped=str(skipped),
                       timestamp=facts.created[:19], hostname=facts.machine or "podscale")
    props = ET.SubElement(suite, "properties")
    for k, v in {**facts.labels(), **{k: v for k, v in facts.versions.items() if v}}.items():
        ET.SubElement(props, "property", name=k, value=str(v))
    for row in rows:
        time = next((f.value for f in row.figures if f.key == "time"), 0.0)
        case = ET.SubElement(suite, "testcase", classname=f"podscale.{row.labels['workload']}",
                             name=row.name, time=f"{time:.9f}")
        cp = ET.SubElement(case, "properties")
        for f in row.figures:
            ET.SubElement(cp, "property", name=f"{f.key} ({f.unit})", value=f"{f.value:.6g}")
        ET.SubElement(cp, "property", name="reproduce", value=row.command)
        if row.verdict:
            ET.SubElement(cp, "property", name="verdict", value=row.verdict)
        failed = _failure(row)
        if failed:
            ET.SubElement(case, "failure", message=failed[0], type=failed[0]).text = failed[1]
        elif row.verdict == "noisy":
            ET.SubElement(case, "skipped", message="noisy: more rounds decide it")
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
