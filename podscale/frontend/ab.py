"""``podscale ab``: one grid run as two arms, A and B, whose launches alternate in time,
then compared.

Runs started minutes apart differ by drift of the whole machine (other tenants, clocks,
thermal state) that rounds inside one run never sample, so two separate runs can disagree
on cases nothing changed. Here every launch of A has a launch of B beside it (order
A B, B A, ... so neither arm always goes first), so drift falls on both arms alike and the
rounds of each arm are compared as independent repetitions (``--paired``: round by round).
The arms differ by environment variables their processes set before JAX starts
(``--env-b XLA_FLAGS=...``); with none, it is an A/A run that measures the false alarm
rate. To compare code versions, use asv (``asv continuous``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.core.errors import UsageError

ROUNDS = 16  # default: a 1.5x slowdown of cases whose launches vary by a log-sd of 0.5 is
#             found (10 rounds found 83-92% of them on this noisy 2-CPU box)


def parse_env(words: list[str] | None, flag: str) -> dict[str, str]:
    env = {}
    for word in words or ():
        key, eq, value = word.partition("=")
        if not eq or not (key.isidentifier() and key.isascii()):
            raise UsageError(f"bad {flag} {word!r}: expected NAME=VALUE")
        env[key] = value
    return env


def wrong_count(run_dir: Path) -> int:
    from analysis import load_run

    _, _, cases, _ = load_run(run_dir)
    return int(cases["wrong"].sum()) if not cases.empty else 0


def cmd_ab(args: argparse.Namespace) -> int:
    from analysis.compare import compare
    from podscale.frontend.commands import prepare_run, write_compare, wrong_results
    from podscale.launch.runner import execute_arms

    if args.threshold < 0 or not 0 < args.alpha < 1:
        raise UsageError("--threshold must be >= 0 and --alpha within (0, 1)")
    env_a, env_b = parse_env(args.env_a, "--env-a"), parse_env(args.env_b, "--env-b")
    if args.rounds is None:
        args.rounds = ROUNDS
    _, cases, rounds, kwargs = prepare_run(args)
    if rounds < 2:
        raise UsageError("podscale ab pairs rounds: --rounds must be >= 2")
    name = args.name or "-".join(dict.fromkeys(c.workload for c in cases))
    run_a, run_b = execute_arms(cases, args.out, {f"{name}-A": env_a, f"{name}-B": env_b},
                                **kwargs)
    for label, run, env in (("A", run_a, env_a), ("B", run_b, env_b)):
        shown = " ".join(f"{k}={v}" for k, v in env.items()) or "(no extra environment)"
        print(f"# {label}: {run}  {shown}")
    for run in (run_a, run_b):
        if wrong_count(run):
            raise wrong_results(run)
    table, notes = compare(run_a, run_b, threshold=args.threshold, alpha=args.alpha,
                           correction=args.correction, paired=args.paired)
    return write_compare(table, notes, run_a, run_b, args)
