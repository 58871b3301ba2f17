"""Protocol 2's contract: every hook of Workload is abstract, optional (with a documented
default) or final; the abstract hooks say what they take and return; no built-in workload
keeps per-case state on ``self``; validation is per class, not ``super()`` chains."""

from __future__ import annotations

import ast
import inspect

import pytest

from podscale.core.case import Case, Layout
from podscale.core.errors import UsageError
from podscale.core.workload import OPTIONAL_HOOKS, Workload
from tests.conftest import ROOT

REQUIRED = {"inputs", "place", "program", "output", "reference", "work"}


def test_every_hook_is_abstract_optional_or_final():
    assert Workload.__abstractmethods__ == REQUIRED
    for name, member in vars(Workload).items():
        if name.startswith("_") or not callable(getattr(Workload, name, None)) or \
                isinstance(member, type):
            continue
        abstract = getattr(member, "__isabstractmethod__", False)
        final = getattr(member, "__final__", False) or \
            getattr(getattr(member, "fget", None), "__final__", False)
        assert abstract or final or name in OPTIONAL_HOOKS, name
        assert inspect.getdoc(member), name
        if abstract:
            doc = inspect.getdoc(member)
            assert "Args:" in doc and "Returns:" in doc, name
    for name in OPTIONAL_HOOKS:
        assert inspect.getdoc(getattr(Workload, name)), name


def _self_assignments(path) -> list[str]:
    """``self.X = ...`` outside ``__init__`` in a module's classes."""
    found = []
    for cls in (n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            if fn.name == "__init__":
                continue
            for node in ast.walk(fn):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                for t in targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                            t.value.id == "self":
                        found.append(f"{path.name}:{node.lineno} {cls.name}.{fn.name}")
    return found


def test_no_builtin_workload_keeps_state_on_self(tmp_path):
    files = [*sorted((ROOT / "suites").glob("*.py")),
             *sorted((ROOT / "podscale" / "protocol").glob("*.py")),
             *sorted((ROOT / "examples").glob("*.py"))]
    assert len(files) > 15
    assert [hit for f in files for hit in _self_assignments(f)] == []
    # the scan itself sees a stash like protocol 1's `self._op = ...`
    planted = tmp_path / "planted.py"
    planted.write_text("class W:\n    def step(self, ctx):\n        self._op = ctx\n")
    assert _self_assignments(planted) == ["planted.py:3 W.step"]


def test_validate_runs_every_class_check_base_first():
    """No super() chain: Collective's axis check runs before all_reduce's own, and a
    subclass that forgets to call its base still gets the base's checks."""
    from podscale.suites.all_reduce import all_reduce

    case = Case("all_reduce", "1", "podscale.suites.all_reduce:all_reduce", "shard_map",
                "float32", Layout(2, 2), (("size", 4096), ("axes", "nosuch"), ("group", "all"),
                                          ("op", "sum"), ("algorithm", "flat")))
    with pytest.raises(UsageError, match="axes 'nosuch' are not distinct axes"):
        all_reduce.validate(case)
    text = "".join((ROOT / "suites" / f).read_text() for f in ("all_reduce.py", "links.py",
                                                               "pairs.py", "replay.py"))
    assert "super()" not in text
