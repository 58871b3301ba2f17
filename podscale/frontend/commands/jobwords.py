"""The words a generated job passes on (``podscale sbatch``, ``k8s``, ``tpu``: the words
after ``--``), checked as the command they name would check them, before anything is
printed or started."""

from __future__ import annotations

from podscale.core.errors import UsageError
from podscale.frontend.commands.gridargs import grids_from_args


def rest(words: list[str]) -> list[str]:
    """The words after a command's ``--``."""
    return words[1:] if words[:1] == ["--"] else words


def job_words(command: str, words: list[str], hosts: int | None = None,
              nodes: int | None = None, slices: int | None = None) -> list[str]:
    """The words a generated job passes to ``podscale run`` or ``podscale worker``,
    checked as that command would check them — workloads, grid values, every case of the
    grid at ``hosts`` processes (and ``slices``) where the job's size is known, no layout
    wider than the ``nodes`` allocated — before anything is printed or started (one-line
    error, exit 2); a job of several slices passes ``--slices`` on itself."""
    from dataclasses import replace

    from podscale.core.grid import expand_all
    from podscale.frontend.cli import build_parser

    for flag, value in (("--hosts", hosts), ("--nodes", nodes)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be >= 1")
    words = rest(words)
    extra = ["--run-dir", "/tmp/podscale-check"] if command == "worker" else []
    args = build_parser().parse_args([command, *extra, *words])
    if args.workloads is None and args.suite_file is None:
        raise UsageError(f"name the workloads after -- (e.g. -- psum --sizes 1M): podscale "
                         f"{command} needs them")
    grids, _ = grids_from_args(args)
    if hosts is not None:
        asked = sorted({h for g in grids for h in g.hosts})
        if args.hosts and asked != [hosts]:
            raise UsageError(f"--hosts {args.hosts} after -- contradicts the job's {hosts} "
                             "process(es): podscale worker runs the job's own process count "
                             "(leave --hosts out)")
        grids = [replace(g, hosts=(hosts,)) for g in grids]
    if slices is not None:
        if args.slices and sorted({n for g in grids for n in g.slices}) != [slices]:
            raise UsageError(f"--slices {args.slices} after -- contradicts the job's {slices} "
                             "slice(s): the job passes its own (leave --slices out)")
        grids = [replace(g, slices=(slices,)) for g in grids]
        words = [*words, "--slices", str(slices)] if slices > 1 and not args.slices else words
    widest = max(h for g in grids for h in g.hosts)
    if nodes is not None and widest > nodes:
        raise UsageError(f"the grid runs {widest} hosts but the job allocates {nodes} "
                         f"node(s), one process each: pass --nodes {widest} or --hosts "
                         f"up to {nodes} after --")
    expand_all(grids)
    return words


def job_of(command: str, words: list[str], program: str | None, attach_args: str, *,
           hosts: int | None = None, nodes: int | None = None, slices: int | None = None
           ) -> tuple[list[str], list[str], bool]:
    """What a generated job runs: (its words, ``podscale attach``'s options, whether they
    ask for a step window). With ``program`` the words after ``--`` are the program's own;
    else they are checked by :func:`job_words`."""
    from podscale.frontend.commands.captureargs import attach_options

    attach, window = attach_options(attach_args, program)
    if program:
        return rest(words), attach, window
    return job_words(command, words, hosts=hosts, nodes=nodes, slices=slices), attach, window
