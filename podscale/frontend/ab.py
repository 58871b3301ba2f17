"""``podscale ab``: one grid run as two arms, A and B, whose launches alternate in time,
then compared.

Runs started minutes apart differ by drift of the whole machine (other tenants, clocks,
thermal state) that rounds inside one run never sample, so two separate runs can disagree
on cases nothing changed. Here every launch of A has a launch of B beside it (order
A B, B A, ... so neither arm always goes first), so drift falls on both arms alike and the
rounds of each arm are compared as independent repetitions (``--paired``: round by round).
The arms differ by environment variables their processes set before JAX starts
(``--env-b XLA_FLAGS=...``); with none, it is an A/A run that measures the false alarm
rate. To compare code versions, use asv (``asv continuous``); for your own program,
``podscale profile --env-b/--args-b --rounds R SCRIPT`` (an A/B of the program).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from podscale.core import defaults
from podscale.core.errors import UsageError

ROUNDS = defaults.AB_ROUNDS

if TYPE_CHECKING:
    from podscale.frontend.actions import Prepared
    from podscale.frontend.comparing import Verdict


#: variables the worker sets itself on simulated CPU hosts (--platform cpu), and how
CPU_OVERRIDES = {"JAX_PLATFORMS": "jax_platforms=cpu",
                 "JAX_NUM_CPU_DEVICES": "jax_num_cpu_devices from --devices-per-host",
                 "JAX_CPU_COLLECTIVES_IMPLEMENTATION": "gloo collectives"}


def parse_env(words: list[str] | None, flag: str) -> dict[str, str]:
    """NAME=VALUE words; the variables podscale sets for every process are refused."""
    from podscale.core.environment import OWNED_ENV

    env = {}
    for word in words or ():
        key, eq, value = word.partition("=")
        if not eq or not (key.isidentifier() and key.isascii()):
            raise UsageError(f"bad {flag} {word!r}: expected NAME=VALUE")
        if key in OWNED_ENV:
            raise UsageError(f"{flag} {key}: podscale sets {key} itself for every process; "
                             "an arm cannot change it")
        env[key] = value
    return env


def arm_notes(env_a: dict[str, str], env_b: dict[str, str], cpu: bool,
              same_args: bool | None = None) -> list[str]:
    """What the arms' environments change that the worker overrides, and A/A where,
    after that, they are the same (``same_args``: a program's A/B, whose arms also run
    with their own arguments; None: no arguments to compare)."""
    notes, same = [], {}
    for label, env in (("A", env_a), ("B", env_b)):
        kept = dict(env)
        for key in env:
            if cpu and key in CPU_OVERRIDES:
                notes.append(f"arm {label}: {key}={env[key]} has no effect: with --platform "
                             f"cpu the worker sets {CPU_OVERRIDES[key]}")
                kept.pop(key)
        same[label] = kept
    if same["A"] == same["B"] and same_args is not False:
        what = "environment and arguments" if same_args else "environment"
        notes.append(f"the arms run the same {what}: an A/A run (any verdict other than "
                     "'same' is a false alarm)")
    return notes


def ab(prepared: Prepared, env_a: dict[str, str], env_b: dict[str, str], out: Path,
       name: str | None, verdict: Verdict) -> int:
    """Run ``prepared`` as arms A and B (each process setting its arm's environment),
    launches alternating, then compare them under ``verdict`` (with ``--format json``
    everything but the document goes to stderr)."""
    import contextlib
    import sys

    from podscale.frontend.comparing import write_compare

    to = sys.stdout if verdict.fmt == "text" else sys.stderr
    with contextlib.redirect_stdout(to):
        a, b = _arms(prepared, env_a, env_b, out, name)
    for loaded in (a, b):
        if loaded.wrong:
            from podscale.frontend.actions import wrong_results

            raise wrong_results(loaded)
    with contextlib.redirect_stdout(to):
        table, notes = verdict.compare(a, b)
    return write_compare(table, notes, a, b, verdict)


def _arms(prepared: Prepared, env_a: dict[str, str], env_b: dict[str, str], out: Path,
          name: str | None) -> tuple:
    """The two arms run, launches alternating: (run A, run B), loaded."""
    from podscale.analysis import load_run
    from podscale.launch.runner import default_name, execute_arms

    cases, rounds = prepared.cases, prepared.rounds
    if rounds < 2:
        raise UsageError(f"--rounds {rounds}: podscale ab judges a change against the "
                         "variation between launches, which needs 2 or more launches of "
                         "each arm")
    for note in arm_notes(env_a, env_b, prepared.options.simulate_cpu):
        print(f"# note: {note}")
    name = name or default_name(c.workload for c in cases)
    run_a, run_b = execute_arms(cases, out, {f"{name}-A": env_a, f"{name}-B": env_b},
                                prepared.options, spec=prepared.spec, reuse=prepared.reuse,
                                rounds=rounds)
    for label, path, env in (("A", run_a, env_a), ("B", run_b, env_b)):
        shown = " ".join(f"{k}={v}" for k, v in env.items()) or "(no extra environment)"
        print(f"# {label}: {path}  {shown}")
    return load_run(run_a), load_run(run_b)
