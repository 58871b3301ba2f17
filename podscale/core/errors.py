"""Errors that the CLI turns into one-line messages and exit codes."""

from __future__ import annotations


class PodscaleError(Exception):
    """A problem the user can act on; printed as one line, exit code ``exit_code``."""

    exit_code = 1


class UsageError(PodscaleError):
    """Bad input: unknown suite, impossible layout, malformed file, foreign results."""

    exit_code = 2


class WorkerFailed(PodscaleError):
    """A worker process exited non-zero, hung, or the run was interrupted."""

    exit_code = 3


class WrongResults(PodscaleError):
    """The run completed but some outputs were outside their correctness bound (as
    nccl-tests fails on wrong data); every record and the report are kept."""

    exit_code = 4


class Interrupted(WorkerFailed):
    """The user interrupted the run (Ctrl-C); every worker was stopped."""

    exit_code = 130
