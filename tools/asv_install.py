"""asv's install step (asv.conf.json's ``install_command``): the commit's wheel, then the
runtime this machine's chips need — JAX's own extra (``jax[tpu]``, ``jax[cuda12]``, ...),
pinned to the JAX the environment already holds — so that asv's environments on a TPU or
GPU machine measure its chips, at every commit (also those older than the project's own
extras). ``ACCEL`` (cpu, tpu, cuda12, cuda13, rocm) overrides what the device nodes say,
as for ``make setup``. Packages come from pip's own settings (PIP_INDEX_URL,
PIP_FIND_LINKS). asv runs it from the checkout it was started in (``{conf_dir}``)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from podscale.core.machine import EXTRAS, JAX_EXTRA, accel  # noqa: E402


def main(wheel: str) -> int:
    given = os.environ.get("ACCEL") or None
    if given is not None and given not in EXTRAS:
        print(f"asv install: bad ACCEL={given!r}: use one of {', '.join(EXTRAS)}",
              file=sys.stderr)
        return 2
    pip = [sys.executable, "-m", "pip", "install"]
    subprocess.run([*pip, "--no-deps", wheel], check=True)
    extra, why = accel(given)
    print(f"asv install: ACCEL={extra}: {why}", flush=True)
    if extra == "cpu":
        return 0
    jax = metadata.version("jax")
    return subprocess.run([*pip, f"jax[{JAX_EXTRA[extra]}]=={jax}"]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
