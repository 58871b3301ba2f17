"""Setting up for the machine: the pip extras of JAX's own, ``make setup`` choosing one from
the device nodes (ACCEL overrides) and saying why, asv's install step doing the same, chips
JAX cannot use (device nodes, no runtime: planted) said once by every command that would
simulate and refused by ``--platform tpu``, and ``podscale doctor``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import ROOT, podscale, unwrap

NO_RUNTIME = "tpu:no-runtime"
SAID = ("this machine has TPU device nodes (planted by PODSCALE_ACCELERATORS) but JAX's TPU "
        "runtime (libtpu) is not installed: pip install 'jax[tpu]' (or make setup ACCEL=tpu)")


def planted(text: str) -> dict[str, str]:
    return {**os.environ, "PODSCALE_ACCELERATORS": text}


def make_n(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``make -n`` of a virtualenv not made yet (a checkout's own .venv stamps would make
    setup a no-op), outside any make that runs the tests (its flags would reach it)."""
    env = {k: v for k, v in (env or os.environ).items()
           if k not in ("ACCEL", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(["make", "-n", "VENV=/nonexistent/venv", *args], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=60)


def test_the_accelerator_extras_are_jaxs_own_in_the_pinned_range():
    from podscale.core.machine import EXTRAS, JAX_EXTRA

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (pin,) = [d[3:] for d in project["dependencies"] if d.startswith("jax>")]
    extras = project["optional-dependencies"]
    assert set(EXTRAS) <= set(extras) and extras["cpu"] == []
    for extra in EXTRAS[1:]:
        assert extras[extra] == [f"jax[{JAX_EXTRA[extra]}]{pin}"], extra


def test_make_setup_installs_the_extra_the_nodes_or_accel_ask_for():
    tpu = make_n("setup", "ACCEL=tpu")
    assert tpu.returncode == 0, tpu.stderr
    assert "venv/bin/pip install -q --no-compile -e '.[tpu]'" in tpu.stdout
    assert 'echo "make setup: ACCEL=tpu: ACCEL=tpu given"' in tpu.stdout
    cpu = make_n("setup", "ACCEL=cpu")
    assert "-e '.[cpu]'" in cpu.stdout and "jax[" not in cpu.stdout
    # no accelerator here: the CPU, and why; the test tools only for make test
    here = make_n("setup")
    assert "-e '.[cpu]'" in here.stdout and "no accelerator device nodes" in here.stdout
    assert "-e '.[test,cpu]'" in make_n("test").stdout
    # a machine whose nodes show a TPU (planted): the tpu extra, and the nodes named
    nodes = make_n("setup", env={**planted(NO_RUNTIME)})
    assert "-e '.[tpu]'" in nodes.stdout and "tpu device nodes planted" in nodes.stdout
    for words in (["setup"], ["study"], ["test"]):  # setup needs only pip's own settings
        assert "upgrade pip" not in make_n(*words, "ACCEL=tpu").stdout
    bad = make_n("setup", "ACCEL=tpux")
    assert bad.returncode == 2 and "ACCEL=tpux: use one of cpu tpu cuda12 cuda13 rocm" in \
        bad.stderr and not bad.stdout


@pytest.mark.asv
def test_asvs_install_step_adds_the_runtime_the_nodes_want(tmp_path):
    """asv.conf.json's install step, as asv runs it in an environment (pip's own dry run:
    the real resolution, nothing installed): on TPU nodes the wheel and then jax[tpu] at
    the environment's JAX, which brings libtpu; on the CPU the wheel alone."""
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    assert conf["install_command"] == [
        "in-dir={env_dir} python {conf_dir}/tools/asv_install.py {wheel_file}"]
    wheel = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True, timeout=300)
    assert wheel.returncode == 0, wheel.stderr
    (whl,) = tmp_path.glob("podscale-*.whl")

    def install(env: dict) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(ROOT / "tools" / "asv_install.py"),
                               str(whl)], capture_output=True, text=True, timeout=300,
                              env={**env, "PIP_DRY_RUN": "1"})

    tpu = install(planted(NO_RUNTIME))
    assert tpu.returncode == 0, tpu.stderr
    assert "asv install: ACCEL=tpu: tpu device nodes planted" in tpu.stdout
    assert re.search(r"Would install .*libtpu-", tpu.stdout), tpu.stdout
    cpu = install(dict(os.environ))
    assert cpu.returncode == 0 and "ACCEL=cpu: no accelerator" in cpu.stdout
    assert "libtpu" not in cpu.stdout and cpu.stdout.count("Would install") == 1
    bad = install({**os.environ, "ACCEL": "gpu"})
    assert bad.returncode == 2 and "bad ACCEL='gpu'" in bad.stderr


@pytest.mark.slow
def test_chips_without_their_runtime_are_said_once_and_refuse_platform_tpu(tmp_path):
    env = planted(NO_RUNTIME)
    small = ["--hosts", "1", "--devices-per-host", "1", "--variants", "shard_map",
             "--iters", "2", "--warmup", "1", "--sizes", "4K"]
    prog = tmp_path / "prog.py"
    prog.write_text("import jax, jax.numpy as jnp\nf = jax.jit(lambda x: x * 2)\n"
                    "x = jnp.ones(8)\nfor _ in range(4):\n    x = f(x)\nprint(float(x[0]))\n")
    said = {
        "run": podscale("run", "dot", *small, "--rounds", "1", "--out", str(tmp_path / "r"),
                        env=env),
        "study": podscale("study", "--dry-run", "--out", str(tmp_path / "s"), env=env),
        "ab": podscale("ab", "dot", *small, "--rounds", "2", "--out", str(tmp_path / "a"),
                       env=env),
        "profile": podscale("profile", "--hosts", "1", "--out", str(tmp_path / "p"), str(prog),
                            env=env)}
    for command, res in said.items():
        assert res.returncode == 0, (command, res.stderr[-2000:])
        out = unwrap(res.stdout + res.stderr)
        assert out.count(f"# note: hosts simulated on the CPU: {SAID}") == 1, (command, out)
    out = ["--out", str(tmp_path / "x")]
    for words in (["run", *out, "dot"], ["ab", *out, "dot"], ["profile", *out, str(prog)],
                  ["seed", *out], ["worker", "--run-dir", str(tmp_path / "w"), "dot"]):
        res = podscale(words[0], "--platform", "tpu", *words[1:], env=env)
        assert res.returncode == 2 and res.stderr == f"podscale: error: --platform tpu: " \
                                                     f"{SAID}\n", (words, res.stderr)
    assert not (tmp_path / "x").exists() and not (tmp_path / "w").exists()


def test_worker_platform_tpu_is_refused_on_a_machine_without_chips(tmp_path):
    """Where JAX would quietly take the CPU: one line, exit 2, nothing written."""
    res = podscale("worker", "dot", "--run-dir", str(tmp_path / "w"), "--platform", "tpu",
                   env=planted("none"))
    assert res.returncode == 2 and res.stderr == (
        "podscale: error: --platform tpu: this machine has no accelerator device nodes; "
        "--platform auto takes what JAX finds, cpu simulates\n")
    assert not (tmp_path / "w").exists()


@pytest.mark.slow
def test_doctor_here_and_on_planted_machines():
    here = podscale("doctor", env=planted("none"))
    assert here.returncode == 0, here.stderr
    assert re.search(r"device nodes +none", here.stdout)
    assert re.search(r"--platform auto +cpu: hosts simulated", here.stdout)
    assert re.search(r"JAX lists +\d+ cpu device", here.stdout)
    assert "no problems found" in here.stdout
    assert max(len(line) for line in here.stdout.splitlines()) <= 100
    broken = podscale("doctor", env=planted(NO_RUNTIME))
    assert broken.returncode == 1, broken.stderr
    flat = " ".join(broken.stdout.split())
    assert "problems: - " + SAID in flat and "though it has tpu device nodes" in flat
    chips = podscale("doctor", "--json", env=planted("tpu:TPU v5 lite:4"))
    assert chips.returncode == 0, chips.stderr
    found = json.loads(chips.stdout)
    assert found["rows"]["--platform auto"].startswith("tpu") and not found["unusable"]
    assert found["rows"]["JAX lists"].startswith("4 TPU v5 lite")
    bad = podscale("doctor", env=planted("tpu:4"))
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1
    assert "bad PODSCALE_ACCELERATORS 'tpu:4'" in bad.stderr
