"""The ``podscale`` command line: one module per command under
:mod:`podscale.frontend.commands`, each registering its parser and the function it runs."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import Any, NoReturn

from podscale.core import envnames, lines
from podscale.core.errors import PodscaleError, Terminated, UsageError, interrupt_signal

#: the commands in the order ``podscale --help`` lists them (module names)
COMMANDS = ("run", "study", "list", "show", "report", "fit", "compare", "ab", "history",
            "replay", "seed", "profile", "attach", "trace", "worker", "tpu", "k8s", "jobset", "xpk",
            "sbatch", "collect", "bench_self", "doctor", "ceilings", "export", "digest")


#: errors of paths the user gave (folders to write to, files to read): exit 2, one line
USER_ERRNOS = {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC,
               errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENAMETOOLONG}


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Adds ``(default: X)`` to an option's help unless the help already states it or
    there is none to state (flags, options whose value comes from elsewhere)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, "", argparse.SUPPRESS) \
                or not action.option_strings or action.nargs == 0:
            return text
        return f"{text} (default: %(default)s)"


def plain(text: str) -> str:
    """A docstring's reStructuredText as plain words for --help: ``code`` and roles
    (:mod:`x`, :func:`~a.b`) become their text."""
    import re

    text = re.sub(r":[a-z]+:`~?([^`]+)`", lambda m: m[1].rsplit(".", 1)[-1]
                  if m[0].startswith((":func:", ":meth:", ":class:", ":data:")) else m[1], text)
    return re.sub(r"``([^`]+)``", r"\1", text)


class Parser(argparse.ArgumentParser):
    """Errors are one line and exit 2 (``UsageError``); help shows every default."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        if kwargs.get("description"):  # a command's docstring, in plain words
            kwargs["description"] = plain(kwargs["description"])
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # one line, exit 2
        raise UsageError(message + _dash_hint(message))


def _dash_hint(message: str) -> str:
    """Where an option's value was taken for an option (``--sizes -4K``): how to give a
    value that starts with '-'."""
    import re

    m = re.fullmatch(r"argument (--[\w-]+)(?:/-\w)?: expected (?:one|at least one) argument",
                     message)
    if m is None:
        return ""
    argv = sys.argv[1:]
    for i, word in enumerate(argv[:-1]):
        if word == m[1] and re.match(r"-\.?\d", argv[i + 1]):
            return (f" (a value starting with '-' is written {m[1]}={argv[i + 1]}; "
                    "it may still be refused)")
    return ""


def build_parser() -> argparse.ArgumentParser:
    from podscale.core.version import __version__

    parser = Parser(prog="podscale", description="Benchmarking and profiling for JAX "
                                                 "multi-controller programs.")
    parser.add_argument("--version", action="version", version=f"podscale {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser,
                                metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"podscale.frontend.commands.{name}").register(sub)
    return parser


def _raise_terminated(signum: int, _frame: FrameType | None) -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):  # once: cleanup is not interrupted again
        signal.signal(sig, signal.SIG_IGN)
    raise Terminated(signum)


def main(argv: list[str] | None = None) -> int:
    """Run one command. SIGTERM and SIGHUP stop a run as Ctrl-C does (every process
    stopped, records kept, manifest ``interrupted``); the exit code is 128 + the signal."""
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _raise_terminated)
    try:
        args = build_parser().parse_args(argv)
        from podscale.core.environment import check_owned_env

        check_owned_env()  # a bad one is refused here, not after processes start
        if os.environ.get(envnames.FAULT):  # a bad one is refused here, not in workers
            from podscale.startup.faults import from_env

            from_env()
        return int(args.func(args) or 0)
    except PodscaleError as exc:
        lines.say(f"podscale: error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        signum = interrupt_signal(exc)
        lines.say(f"podscale: interrupted by {signal.Signals(signum).name}", err=True)
        return 128 + signum
    except BrokenPipeError:  # output piped into a reader that stopped (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a file or folder the user named: missing, read-only, full
        if exc.errno not in USER_ERRNOS or not exc.filename:
            return _internal(exc)
        said = f"{_shown(exc.filename)}: {exc.strerror}"
        blocking = _a_file_in(exc.filename) if exc.errno in (errno.EEXIST, errno.ENOTDIR) \
            else None
        if blocking:
            said = f"{blocking} is a file, not a folder" + \
                (f" (in {exc.filename})" if blocking != str(exc.filename) else "")
        lines.say(f"podscale: error: {said}", err=True)
        return 2
    except Exception as exc:  # a bug: one line, the traceback on request
        return _internal(exc)


def _shown(path: Any, most: int = 120) -> str:
    """A path as an error line shows it: whole up to ``most`` characters, else its ends."""
    text = str(path)
    if len(text) <= most:
        return text
    return f"{text[:most // 2]}...{text[-most // 4:]} ({len(text)} characters)"


def _a_file_in(path: Any) -> str | None:
    """The file at ``path`` or above it where a folder was wanted, or None."""
    from pathlib import Path

    for p in (Path(path), *Path(path).parents):
        if p.is_file():
            return str(p)
    return None


def _internal(exc: Exception) -> int:
    if os.environ.get(envnames.DEBUG):
        raise exc
    lines.say(f"podscale: internal error: {type(exc).__name__}: {exc} "
              "(set PODSCALE_DEBUG=1 for the traceback)", err=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
