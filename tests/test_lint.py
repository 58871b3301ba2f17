import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff not installed (pip install -e '.[test]')")
def test_ruff_clean():
    res = subprocess.run([RUFF, "check", str(ROOT)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout
