"""A desync (processes launching different computations at one launch number) found on
hand-built launch windows, and named in the hang roll-call's verdict. The finished-run
case runs for real in tests/test_profile.py (the loader run's planted extra launch)."""

from __future__ import annotations

from podscale.attach.rollwords import verdict_text
from podscale.core.desync import first

STEP = [(n, "local_step") for n in range(40, 48)]


def test_the_odd_process_named_at_the_first_differing_launch():
    windows = {0: STEP, 2: STEP, 3: STEP,
               1: [(n, "eval_step" if n == 41 else "local_step") for n in range(38, 46)]}
    d = first(windows)
    assert d is not None and d.launch == 41 and d.odd == (1,)
    assert d.text() == ("desync at launch #41: process 1 launched eval_step where "
                        "processes 0, 2, 3 launched local_step")


def test_only_launches_every_window_holds_are_compared():
    # process 1 far behind: its window of other computations shares no launch number
    behind = [(n, "eval_step") for n in range(30, 38)]
    assert first({0: STEP, 1: behind}) is None
    assert first({0: STEP, 1: behind + [(40, "eval_step")]}) is not None
    # a process that stopped early is no desync either
    assert first({0: STEP, 1: STEP[:3]}) is None
    assert first({0: STEP}) is None and first({}) is None


def test_three_computations_and_a_tie():
    w = {p: [(7, name)] for p, name in enumerate(["a", "b", "b", "c", "a"])}
    d = first(w)
    # the largest group with the lowest process wins a tie: a (0, 4) before b (1, 2)
    assert d is not None and d.groups == (("a", (0, 4)), ("b", (1, 2)), ("c", (3,)))
    assert d.text() == ("desync at launch #7: processes 1, 2 launched b, process 3 "
                        "launched c where processes 0, 4 launched a")


def test_the_roll_call_verdict_names_a_desync():
    def at(state, recent, last="local_step #3"):
        return {"state": state, "waiting_for": "local_step #4", "last": last,
                "calling": None, "at": "train.py:57 (x = step(x))", "recent": recent}

    odd = [(n, "other" if n == 44 else "local_step") for n in range(40, 48)]
    stacks = {0: at("waiting", STEP), 1: at("waiting", odd), 2: at("waiting", STEP)}
    text = verdict_text(stacks, 3, 20.0, 0.0)
    assert text.endswith("desync at launch #44: process 1 launched other where processes "
                         "0, 2 launched local_step"), text
    clean = verdict_text({p: at("waiting", STEP) for p in range(3)}, 3, 20.0, 0.0)
    assert "desync" not in clean


def test_one_computation_compiled_to_different_programs_is_a_desync():
    """Launches carrying their programs: one name, two programs (process 1 on a batch of
    its own shape) is named with both shapes; a program unknown on a process is not
    compared (names alone)."""
    same = [(n, "train", "aa11", "f32[8]") for n in range(10, 14)]
    odd = [(n, "train", "bb22" if n >= 12 else "aa11", "f32[4]" if n >= 12 else "f32[8]")
           for n in range(10, 14)]
    d = first({0: same, 1: odd, 2: same})
    assert d is not None and d.launch == 12 and d.odd == (1,)
    assert d.text() == ("desync at launch #12: process 1 launched train (f32[4]) where "
                        "processes 0, 2 launched train (f32[8])")
    unknown = [(n, "train", "", "") for n in range(10, 14)]
    assert first({0: unknown, 1: odd}) is None
    # names still part processes whose programs are known
    assert first({0: same, 1: [(12, "eval", "cc", "f32[2]")]}).text() == (
        "desync at launch #12: process 1 launched eval where process 0 launched train")


def test_a_programs_fingerprint_ignores_where_it_was_traced_from():
    """Process 0 traces through podscale's manifest-keeping frames: its HLO's stack frames
    and op metadata differ, its program does not; another op does."""
    from podscale.attach.programs import program

    def text(line: int, op: str) -> str:
        return ("HloModule jit_step, num_partitions=3\n\nFileNames\n1 \"attach.py\"\n\n"
                f"FileLocations\n1 {{file_name_id=1 line={line}}}\n\n"
                "ENTRY %main (p: f32[1]) -> f32[1] {\n"
                f"  ROOT %r = f32[1]{{0}} {op}(%p), metadata={{op_name=\"x\" "
                f"stack_frame_id={line}}}\n}}\n")

    class Fake:
        def __init__(self, t: str) -> None:
            self.t = t

        def as_text(self) -> str:
            return self.t

    a, b, c = (program(lambda t=t: Fake(t))[0] for t in
               (text(89, "negate"), text(83, "negate"), text(89, "abs")))
    assert a == b != c and len(a) == 12


def test_the_roll_call_and_the_watchdog_name_the_slice_behind():
    """In a job of 4 slices of 2 processes, a whole slice that never answers is named as
    that slice, one odd process with its slice; a one-slice job's words are unchanged."""
    from podscale.core.groups import slice_words
    from podscale.worker.watchdog import Progress, stuck_message

    def at(state):
        return {"state": state, "waiting_for": "step #4", "last": "step #3", "calling": None,
                "at": "train.py:57 (x = step(x))", "recent": []}

    stacks = {p: at("waiting") for p in range(8) if p not in (4, 5)}
    stacks[1] = at("python")
    text = verdict_text(stacks, 8, 20.0, 0.0, slices=4)
    assert "process 1 (slice 0) at train.py:57" in text, text
    assert "no answer from process(es) 4, 5 (all of slice 2)" in text, text
    assert "processes 0, 2, 3, 6, 7 waiting" in text, text  # the common state: no slices
    assert "slice" not in verdict_text(stacks, 8, 20.0, 0.0)
    assert slice_words([3, 4], 8, 4) == " (slices 1, 2)"
    assert slice_words([2, 3, 4, 5], 8, 4) == " (all of slices 1, 2)"
    assert slice_words([3], 8, 1) == slice_words([3], 9, 4) == ""
    entries = {p: {"position": [0, 5, 1, 1], "where": "case 0, warmup", "at": 100.0}
               for p in range(8) if p != 6}
    entries[3]["position"] = [0, 5, 0, 0]
    said = stuck_message(Progress(0), entries, 8, 15.0, 101.0, 2.0, slices=4)
    assert "behind: process 3 (slice 1) at case 0, warmup" in said, said
    assert "no report from process 6 (slice 3)" in said, said
