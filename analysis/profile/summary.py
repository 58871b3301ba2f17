"""Everything derived from a profiled run, once: the step, its ledger across processes,
who the job waited for, other computations, re-compiles, host frames, the goodput
ledger, a desync, and inside the captured steps (parts, arrivals at each collective, the
op diff); and the Findings they support, as sentences."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from podscale.analysis.profile import compiles as compiling
from podscale.analysis.profile import goodput, inside, phases, stalls, steps
from podscale.analysis.profile import peers as peers_of
from podscale.analysis.profile.load import Profile, load_profile
from podscale.core.desync import Desync


@dataclass(frozen=True)
class ProfileSummary:
    profile: Profile
    step: str | None
    ledger: pd.DataFrame  # steps.ledger
    blame: pd.DataFrame  # steps.stragglers
    table: pd.DataFrame  # steps.process_table
    others: pd.DataFrame  # steps.other_computations
    compiles: pd.DataFrame  # compiles.table (module compiling here): every compile
    frames: pd.DataFrame  # goodput.host_frames
    goodput: pd.DataFrame  # goodput.ledger
    desync: Desync | None = None  # peers.desync
    inside: pd.DataFrame = field(default_factory=pd.DataFrame)  # inside.attribution
    waits: pd.DataFrame = field(default_factory=pd.DataFrame)  # inside.waits
    op_diff: tuple[int, int, pd.DataFrame] | None = None  # inside.op_diff
    named: str | None = None  # the step asked for (--step), if one was
    #: whether the step waits on other processes (peers.waits_on_peers); False: no
    #: straggler blame
    peers: bool | None = None
    slow: pd.DataFrame = field(default_factory=pd.DataFrame)  # stalls.slow_steps
    phases: pd.DataFrame = field(default_factory=pd.DataFrame)  # phases.table

    @property
    def steps(self) -> int:
        return int(self.ledger["step"].nunique()) if len(self.ledger) else 0


def summarize_profile(run: Profile | Path | str, step: str | None = None) -> ProfileSummary:
    """``step``: the step computation's name (default: the manifest's ``--step``, else the
    dominant recurring computation)."""
    profile = run if isinstance(run, Profile) else load_profile(run)
    asked = named = step or profile.manifest.spec.get("step")
    calls, compiles = profile.calls, profile.compiles
    marked = set(profile.annotations["name"])
    if marked and (named is None or named in marked):  # the program's own step wins
        named = named or str(profile.annotations["name"].value_counts().index[0])
        calls, compiles = steps.annotated(calls, compiles, profile.annotations, named)
    tl = steps.timeline(calls, compiles, profile.windows)
    name = steps.detect(tl, named)
    att = inside.attribution(profile)
    within = (peers_of.desync(profile.calls), att, inside.waits(profile),
              inside.op_diff(profile, att))
    if name is None:
        empty = pd.DataFrame()
        return ProfileSummary(profile, None, empty, empty, empty,
                              steps.other_computations(tl, ""), empty, empty, empty, *within,
                              named=asked)
    led = steps.ledger(tl, name)
    blame = steps.stragglers(led)
    occ = phases.occurrences(profile.gaps, led)
    peers = peers_of.waits_on_peers(profile.calls, profile.annotations, name)
    if peers is False:
        blame = steps.no_peers(blame)
    return ProfileSummary(profile, name, led, blame, steps.process_table(led, blame),
                          steps.other_computations(tl, name),
                          compiling.table(profile, led), goodput.host_frames(profile, led),
                          goodput.ledger(profile, tl, led, name, peers),
                          *within, named=asked,
                          peers=peers,
                          slow=stalls.slow_steps(led, blame, profile.silent, peers, occ,
                                                 stalls.between(tl, led, name),
                                                 stalls.threads(profile.background, led)),
                          phases=phases.table(occ, led))
