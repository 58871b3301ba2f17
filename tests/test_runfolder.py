"""The run folder's names are spelt once (``podscale/core/runfolder.py``): a per-process
file's ``process-<i>`` and the folders records, profile, traces, hlo, logs and seed."""

import ast
import re
from pathlib import Path

from podscale.core import runfolder as rf
from tests.conftest import ROOT

FOLDERS = {rf.RECORDS, rf.PROFILE, rf.TRACES, rf.HLO, rf.LOGS, rf.SEED}
PER_PROCESS = re.compile(r"(?<![\w-])process-(?![a-z])")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (prose may name the files)."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
    return out


def names_spelt(roots: list[Path]) -> list[str]:
    """Where code outside runfolder.py spells a per-process file's stem, joins a path
    with one of the folders' names, or starts a relative path or glob with one."""
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if path.name == "runfolder.py":
                continue
            tree = ast.parse(path.read_text())
            prose = _docstrings(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                        id(node) not in prose and (
                        PER_PROCESS.search(node.value) or
                        node.value.split("/", 1)[0] in FOLDERS and "/" in node.value):
                    found.append(f"{path}:{node.lineno} {node.value!r}")
                elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
                        isinstance(node.right, ast.Constant) and node.right.value in FOLDERS:
                    found.append(f"{path}:{node.lineno} / {node.right.value!r}")
    return found


def test_the_run_folders_names_are_spelt_once(tmp_path):
    """No module but runfolder.py spells them; the check fails on a planted module."""
    assert names_spelt([ROOT / d for d in ("podscale", "analysis", "suites")]) == []
    (tmp_path / "m.py").write_text(
        '"""process-<i>.jsonl in prose is fine"""\n'
        'from pathlib import Path\nrun = Path(".")\n'
        'a = run / "records" / "x"\nb = f"process-{3}.log"\nc = run.glob("traces/*/x")\n'
        'd = "slow-process-pairs"\n')
    assert len(names_spelt([tmp_path])) == 3


def test_a_per_process_files_index_is_read_back():
    assert rf.process_of(Path("a") / rf.process_name(12, ".xplane.pb")) == 12
    assert rf.process_of(rf.records_file(Path("r"), "h2xd2", 3)) == 3
    assert rf.process_of("merged.trace.json") is None
    assert rf.process_of(rf.temporary(1)) is None  # a trace still being written
    assert rf.process_of("process-x.log") is None
