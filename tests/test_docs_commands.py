"""Every command line and podscale variable the README and docs/ show is one the CLI
accepts: each ``podscale ...`` of a code block or an inline span parses (a synopsis's
``[optional]`` parts, ``a|b`` choices and ``<placeholders>`` read as a user fills them in),
and each ``PODSCALE_*=VALUE`` names a variable podscale reads, with a value it takes. The
docs had named ``podscale model RUN`` and ``PODSCALE_FAULT=lower``, both refused."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest

from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: a line that runs podscale: optional variables and a launcher or path before it
COMMAND = re.compile(r"^(?:[A-Z_]+=\S+ )*(?:(?:mpirun|srun|timeout)\b[^|;]*? )?"
                     r"(?:[\w./-]*/)?podscale (?!import\b)([a-z][\w-]*(?: .*)?)$")
VARIABLE = re.compile(r"\b(PODSCALE_[A-Z_]+)=([^\s`)'\"]+)")
#: variables of the tests' own programs, not podscale's
PROGRAMS_OWN = {"PODSCALE_TEST_SPLIT", "PODSCALE_ASV_TRACK_LAUNCHES", "PODSCALE_TEST_EXTRA"}


def shown_commands() -> list[tuple[str, str]]:
    """(file, the words after ``podscale``) of every command line the docs show."""
    out = []
    for path in DOCS:
        text = path.read_text()
        lines = []
        for lang, block in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
            if lang != "python":
                lines += re.sub(r"\\\n\s*", " ", block).splitlines()
        lines += re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
        for line in lines:
            line = line.strip().removeprefix("$ ").split(" # ")[0].split(" | ")[0]
            found = COMMAND.match(line.split(" && ")[-1].split(" > ")[0].strip())
            if found:
                out.append((path.name, found[1]))
    return out


def as_typed(shown: str) -> list[str]:
    """A synopsis as a user types it: ``[x]`` read as ``x``, ``a|b`` as ``a``,
    ``<what>`` as one word, ``...`` left out."""
    text = re.sub(r"<[^>]*>", "PLACEHOLDER", shown).replace("[", " ").replace("]", " ")
    return [w.split("|")[0] for w in shlex.split(text) if w not in ("...", "…")]


def refusal(words: list[str]) -> str | None:
    """Why podscale's parser refuses ``words`` (None: it parses, or only lacks what a
    synopsis leaves to the reader, such as a required run directory)."""
    from podscale.core.errors import UsageError
    from podscale.frontend.cli import build_parser

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            build_parser().parse_args(words)
        return None
    except UsageError as exc:
        said = str(exc)
    except SystemExit:
        said = (err.getvalue().strip().splitlines() or ["exit"])[-1]
    return None if "required" in said or said == "exit" else said


def test_every_command_the_docs_show_parses():
    commands = shown_commands()
    assert len(commands) > 150  # the extraction itself still finds them
    bad = [f"{name}: podscale {shown} -> {why}" for name, shown in commands
           if (why := refusal(as_typed(shown)))]
    assert not bad, "\n".join(bad)


def test_the_check_finds_a_command_the_cli_refuses():
    assert "invalid choice: 'model'" in refusal(as_typed("model RUN"))
    assert refusal(as_typed("run psum --predict-n 64")) is not None
    assert refusal(as_typed("compare A B [--threshold 0.05] [--force]")) is None
    assert refusal(as_typed("worker --platform tpu|gpu psum")) is None


def taken(name: str, value: str) -> None:
    """Raise where podscale would refuse ``name=value``."""
    from podscale.core import envnames
    from podscale.core.environment import check_owned_env, init_timeout
    from podscale.launch.chips import planted_chips
    from podscale.startup.faults import parse

    if name not in envnames.VARIABLES:
        raise ValueError(f"{name} is no variable podscale reads")
    if name == envnames.FAULT and "KIND" not in value:  # the synopsis itself is words
        if parse(value) is None:
            raise ValueError(value)
    elif name == envnames.ACCELERATORS and "KIND" not in value:
        planted_chips(value)
    elif name == envnames.INIT_TIMEOUT:
        init_timeout(1, {name: value})
    elif name in envnames.OWNED:
        check_owned_env({name: value})


def test_every_variable_the_docs_show_is_taken():
    shown = [(path.name, name, value) for path in DOCS
             for name, value in VARIABLE.findall(path.read_text())
             if name not in PROGRAMS_OWN]
    assert len(shown) > 10
    bad = []
    for where, name, value in shown:
        try:
            taken(name, value.rstrip(".,;:"))
        except Exception as exc:  # noqa: BLE001 - the refusal is the finding
            bad.append(f"{where}: {name}={value}: {exc}")
    assert not bad, "\n".join(bad)
    with pytest.raises(Exception, match="bad PODSCALE_FAULT 'lower'"):
        taken("PODSCALE_FAULT", "lower")  # what the docs had shown
