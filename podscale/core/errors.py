"""Errors that the CLI turns into one-line messages and exit codes."""

from __future__ import annotations


class PodscaleError(Exception):
    """A problem the user can act on; printed as one line, exit code ``exit_code``."""

    exit_code = 1


class UsageError(PodscaleError):
    """Bad input: unknown suite, impossible layout, malformed file, foreign results."""

    exit_code = 2


class WorkerFailed(PodscaleError):
    """A worker process exited non-zero, hung, or the run was interrupted. ``code``: the
    failing process's own exit code where it exited (a profiled script's ``sys.exit(N)``)."""

    exit_code = 3

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class DiskFull(PodscaleError):
    """A file of the run could not be written: the disk is full (or over quota, or
    read-only). Said as one line naming the file; a worker leaves with :data:`EXIT_DISK`."""

    def __init__(self, path: object, exc: OSError) -> None:
        super().__init__(f"{path}: {exc.strerror or exc}")


#: a worker's exit code where it could not write its records (sysexits' EX_IOERR; its log,
#: on the same disk, may not hold the line that says so: the launcher names the disk)
EXIT_DISK = 74


class WrongResults(PodscaleError):
    """The run completed but some outputs were outside their correctness bound (as
    nccl-tests fails on wrong data); every record and the report are kept."""

    exit_code = 4


class Interrupted(WorkerFailed):
    """The run was interrupted (Ctrl-C, or a scheduler's SIGTERM/SIGHUP); every worker was
    stopped. The exit code is 128 + the signal's number, as a shell reports it."""

    exit_code = 130

    def __init__(self, message: str, signum: int = 2) -> None:
        super().__init__(message)
        self.exit_code = 128 + signum


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by the front end's handler of SIGTERM or SIGHUP (what
    ``scancel``, a Kubernetes eviction and ``timeout`` send), so that they stop a run the
    way Ctrl-C does: every process stopped, records kept, the manifest ``interrupted``."""

    def __init__(self, signum: int) -> None:
        import signal

        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def interrupt_signal(exc: BaseException) -> int:
    """The signal number an interruption came from (SIGINT for a plain Ctrl-C)."""
    return getattr(exc, "signum", 2)
