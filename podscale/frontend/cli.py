"""The ``podscale`` command line: one module per command under
:mod:`podscale.frontend.commands`, each registering its parser and the function it runs."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from podscale.core.errors import PodscaleError, UsageError

#: the commands in the order ``podscale --help`` lists them (module names)
COMMANDS = ("run", "study", "list", "show", "report", "fit", "compare", "ab", "replay",
            "seed", "trace", "worker", "tpu", "k8s", "sbatch", "collect", "bench_self")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Adds ``(default: X)`` to an option's help unless the help already states it or
    there is none to state (flags, options whose value comes from elsewhere)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, "", argparse.SUPPRESS) \
                or not action.option_strings or action.nargs == 0:
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """Errors are one line and exit 2 (``UsageError``); help shows every default."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    from podscale import __version__

    parser = Parser(prog="podscale", description="Benchmarking and profiling for JAX "
                                                 "multi-controller programs.")
    parser.add_argument("--version", action="version", version=f"podscale {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser,
                                metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"podscale.frontend.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except PodscaleError as exc:
        print(f"podscale: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("podscale: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a reader that stopped (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug: one line, the traceback on request
        if os.environ.get("PODSCALE_DEBUG"):
            raise
        print(f"podscale: internal error: {type(exc).__name__}: {exc} "
              "(set PODSCALE_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
