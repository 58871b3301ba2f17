"""The profile analysis on hand-built timelines and registries (no process started): the
definitions of blame, partition and chronic stragglers worked by hand, the uniform
slowdown, other computations, and how computations are keyed and named."""

from __future__ import annotations

import numpy as np


def test_a_nested_function_is_named_as_the_program_spells_it():
    import functools

    from podscale.attach.entry import _base, _name

    def main():
        def train_step(x):
            return x

        class Model:
            def loss(self):
                return 0

        return train_step, Model.loss

    step, loss = main()
    assert _name(_base(step)) == "train_step"
    assert _name(_base(functools.partial(loss, None))) == "Model.loss"

def test_one_computation_per_function_and_options_names_unique():
    """The registry behind the wrapped jax.jit: the same function (or a lambda made anew
    from one line) with the same options is one computation; other options, another
    lambda or a second function of a taken name are others, named apart."""
    from podscale.attach.calls import CallLog
    from podscale.attach.entry import Registry

    emitted: list[dict] = []
    log = CallLog(lambda: 0, emitted.append)
    reg = Registry(log)

    def step(x):
        return x

    def make():
        def step(x):  # another function of the same name
            return x
        return step

    made = [lambda x: x for _ in range(3)]  # one line: one computation
    a, b = reg.get(step, "jit", (), {}), reg.get(step, "jit", (), {})
    donated = reg.get(step, "jit", (), {"donate_argnums": [0]})
    assert a is b and donated is not a and donated.name == "step"
    assert len({id(reg.get(f, "jit", (), {})) for f in made}) == 1
    other = reg.get(make(), "jit", (), {})
    line = step.__code__.co_firstlineno
    assert other.name == f"step@test_profile_analysis.py:{line + 4}"
    assert reg.get(made[0], "jit", (), {}).name.startswith("<lambda>@test_profile_analysis.py:")
    log.drain()

def test_the_watcher_waits_on_the_last_arrays_without_flattening_the_output():
    """A call's outputs are ready together: the watcher needs the last two arrays, found
    from the end (past numbers and None, into a custom pytree node one level at a time),
    never by flattening a state of many arrays (planted: nodes whose flattening counts)."""
    import jax
    import jax.numpy as jnp

    from podscale.attach.calls import _few, _wait

    flattened = []

    @jax.tree_util.register_pytree_node_class
    class Node:
        def __init__(self, value):
            self.value = value

        def tree_flatten(self):
            flattened.append(self)
            return (self.value,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    a, b, c = jnp.ones(1), jnp.ones(2), jnp.ones(3)
    state = [Node(jnp.zeros(4)) for _ in range(1000)]
    got = _few(({"x": state, "y": a}, [b, Node(c)], 3.0, None))
    assert [g.shape for g in got] == [(3,), (2,)] and len(flattened) == 1
    assert [g.shape for g in _few(state)] == [(4,), (4,)] and len(flattened) == 3
    assert _few((1, None, {})) == [] and _wait([]) is True
    b.delete()  # donated since: the other one is waited on
    assert _wait([b, a]) is True and _wait([b]) is False


def test_a_uniform_slowdown_is_not_a_straggler_change():
    """Step times that all grow 1.5x with nobody late: slower, uniform."""
    import pandas as pd

    from podscale.analysis.profile import steps
    from podscale.analysis.profile.summary import ProfileSummary
    from podscale.analysis.verdicts.profilecompare import compare_steps

    def summary(period: float, jitter: float) -> ProfileSummary:
        rng = np.random.default_rng(0)
        rows = []
        for p in range(2):
            ready = 0.0
            for k in range(30):
                rows.append((p, k, ready, ready))
                ready += period * (1 + jitter * rng.standard_normal())
        led = pd.DataFrame(rows, columns=["process", "step", "arrival", "ready"])
        led["period"] = period
        return ProfileSummary(None, "step", led, steps.stragglers(led), pd.DataFrame(),
                              pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), pd.DataFrame())

    v = compare_steps(summary(0.010, 0.01), summary(0.015, 0.01))
    assert v.verdict == "slower" and v.kind == "uniform" and 1.4 < v.ratio < 1.6
    v = compare_steps(summary(0.010, 0.01), summary(0.010, 0.01))
    assert v.verdict == "~" and v.kind == "none"

def test_noise_among_two_processes_is_no_chronic_straggler():
    """Two processes, 40 steps of 10 ms, one of them last by 2 ms (above the 0.5 ms
    threshold) at every step: 14 against 26 or 20 against 20 is chance (one of two is
    always last), both sporadic; one last at 36 of 40 is chronic."""
    import pandas as pd

    from podscale.analysis.profile import steps

    def table(last_is_zero: list[bool]) -> pd.DataFrame:
        rows = []
        for k, zero in enumerate(last_is_zero):
            t = 0.010 * k
            rows += [(0, k, t + (0.002 if zero else 0)), (1, k, t + (0 if zero else 0.002))]
        led = pd.DataFrame(rows, columns=["process", "step", "arrival"])
        led["ready"], led["period"], led["host_gap"] = led["arrival"] + 0.001, 0.010, 0.0
        return steps.process_table(led, steps.stragglers(led)).set_index("process")

    chance = [k % 20 < 7 for k in range(40)]  # process 0 last at 14 of 40 steps
    t = table(chance)
    assert t.loc[0, "late"] == 14 and t.loc[1, "late"] == 26
    assert list(t["straggler"]) == ["sporadic", "sporadic"]  # 26 of 40: p = 0.04
    even = [k % 2 == 0 for k in range(40)]
    assert list(table(even)["straggler"]) == ["sporadic", "sporadic"]
    planted = [k % 10 != 0 for k in range(40)]  # process 0 last at 36
    assert list(table(planted)["straggler"]) == ["chronic", "sporadic"]

def test_blame_and_partition_on_a_hand_built_timeline():
    """The definitions on numbers worked by hand: 3 processes, 4 steps of a step that
    ends when the last process arrives (an all-reduce), process 1 arriving 30 ms late at
    steps 2 and 3, process 2 compiling 50 ms at step 0 (start-up skew, not time lost)."""
    import pandas as pd

    from podscale.analysis.profile import steps

    rows, compiles = [], []
    for p in range(3):
        ready = 0.0
        for k in range(4):
            dispatch = ready + (0.030 if p == 1 and k >= 2 else 0.0)
            compile_ = 0.050 if p == 2 and k == 0 else 0.0
            end = 0.100 * (k + 1) + 0.030 * max(0, k - 1) + 0.050  # everyone's ready
            rows.append((p, 0, "step", k, dispatch, dispatch + 1e-4, end))
            if compile_:
                compiles.append((p, "backend_compile_duration", "jit(step)", 0.05, 0.05, k))
            ready = end
    calls = pd.DataFrame(rows, columns=["process", "computation", "name", "seq", "dispatch",
                                        "returned", "ready"])
    comp = pd.DataFrame(compiles, columns=["process", "event", "fun", "end", "seconds", "seq"])
    tl = steps.timeline(calls, comp)
    led = steps.ledger(tl, steps.detect(tl))
    blame = steps.stragglers(led).set_index("step")
    # step 0: process 2 compiled; start-up skew, kept apart from the time lost
    assert blame.loc[0, "last"] == 2 and blame.loc[0, "lost"] == 0
    assert blame.loc[0, "apart"] == "compile" and abs(blame.loc[0, "skew"] - 0.050) < 1e-9
    for k in (2, 3):
        assert blame.loc[k, "last"] == 1 and abs(blame.loc[k, "lost"] - 0.030) < 1e-9
    table = steps.process_table(led, steps.stragglers(led)).set_index("process")
    assert abs(table.loc[1, "lost"] - 0.060) < 1e-9 and table.loc[1, "late"] == 2
    w = steps.waits(led)
    assert abs(w[(led["process"] == 0) & (led["step"] == 2)].iloc[0] - 0.030) < 1e-9

def test_a_computation_one_process_ran_is_said_to_be_its_own():
    """Other computations: one called by every process is counted per process; one that
    only process 1 called is said to be process 1's."""
    import pandas as pd

    from podscale.analysis.profile.steps import other_computations

    tl = pd.DataFrame({"name": ["step"] * 4 + ["eval", "eval", "gather"],
                       "process": [0, 0, 1, 1, 0, 1, 1], "seq": range(7),
                       "busy": [1e-3] * 4 + [2e-3, 2e-3, 4e-3]})
    o = other_computations(tl, "step").set_index("name")
    assert o.loc["eval", "processes"] == [0, 1] and o.loc["gather", "processes"] == [1]
    assert o.loc["gather", "calls_min"] == 1 and o.loc["gather", "busy_median"] == 4e-3


def test_host_work_is_placed_in_words_with_integer_steps():
    """Steps said as integers (a frame column of floats and NaN gave "9.0" and "nan"),
    work before the first step and after the last in words."""
    from podscale.analysis.profile.phases import after_steps

    assert after_steps([None, 4.0, 9, float("nan")], last=19) == \
        "before step 0 and after step(s) 4, 9"
    assert after_steps([19.0], last=19) == "after the last step"
    assert after_steps([-1]) == "before step 0"
    assert after_steps(list(range(10)), 50) == "after step(s) 0, 1, 2, 3, 4, 5, ..."


def test_a_programs_name_is_transliterated_for_its_run():
    """A unicode file name gives a readable run name (it had become ``n-c-d-_``)."""
    from pathlib import Path

    from podscale.frontend.profiling import run_name

    assert run_name(Path("naïve-señal.py")) == "naive-senal"
    assert run_name(Path("训练.py")) == "program" and run_name(Path("a b.py")) == "a-b"


def test_a_desync_is_only_where_the_differing_program_waits_on_peers():
    """Processes launching one local-only pmap on shapes of their own (programs that wait
    on no other process) are no desync; where one of the launched programs waits on the
    others (an all-reduce), the same difference is."""
    import pandas as pd

    from podscale.analysis.profile.peers import desync

    def calls(peers: bool) -> pd.DataFrame:
        return pd.DataFrame([
            {"process": p, "seq": s, "name": "f", "program": f"prog{p}", "shapes":
             f"float32[{8 + 8 * p}]", "peers": peers} for p in (0, 1) for s in range(3)])

    assert desync(calls(False)) is None
    found = desync(calls(True))
    assert found is not None and found.launch == 0 and "float32[16]" in found.text()


def test_the_batch_is_an_input_the_step_does_not_return():
    """A weight larger than the batch comes back updated: the batch is what does not
    (tokens from an integer [batch, sequence]); a step returning all it takes names none."""
    from podscale.analysis.profile.figures import _samples

    weight, batch = "float32[64, 1]", "float32[16, 1]"
    assert _samples([weight, batch]) == (64, "samples", weight)  # no outputs known: a guess
    assert _samples([weight, batch, weight], [weight, weight, "float32[]"]) == (
        16, "samples", batch)
    ids = "int32[4, 129]"
    assert _samples(["float32[512, 512]", ids, "int32[4, 129]"],
                    ["float32[512, 512]"]) == (4 * 129, "tokens", ids)
    assert _samples([weight], [weight, "float32[]"]) is None


def test_periodic_work_set_up_and_hiccups_are_told_apart():
    """4 saves of 20 ms every 5 steps (each under 2 median steps of 50 ms) are periodic;
    set-up before step 0 and work after the last step are booked as such; two 11 ms
    hiccups at no period are not work at all."""
    import pandas as pd

    from podscale.analysis.profile.phases import findings, table

    led = pd.DataFrame({"process": 0, "step": range(50), "period": 0.05})
    occ = pd.DataFrame(
        [(p, "save (ckpt.py:3)", s, 0.02) for p in (0, 1) for s in (5, 10, 15, 20)]
        + [(0, "build_model (train.py:9)", -1, 0.5), (0, "write_metrics (train.py:40)", 49, 0.2),
           (0, "gc (gc.py:1)", 7, 0.011), (0, "gc (gc.py:1)", 23, 0.011)],
        columns=["process", "what", "step", "seconds"])
    t = table(occ, led).set_index("what")
    assert set(t.index) == {"save (ckpt.py:3)", "build_model (train.py:9)",
                            "write_metrics (train.py:40)"}, t
    save = t.loc["save (ckpt.py:3)"]
    assert (save["kind"], save["count"], save["steps"], save["every"]) == (
        "periodic", 4, [5, 10, 15, 20], 5)
    assert t.loc["build_model (train.py:9)", "kind"] == "set-up"
    assert t.loc["write_metrics (train.py:40)", "kind"] == "after the last step"
    said = findings(t.reset_index(), 2, 49)
    assert "save (ckpt.py:3) (a checkpoint save): 4 time(s) on every process, after step(s) " \
           "5, 10, 15, 20 (every 5 steps), 20.0 ms each, blocking the device" in said, said
    assert "set-up before step 0: 500 ms of host work the device waited for, the longest: " \
           "build_model (train.py:9) 500 ms" in said, said
    assert not any("gc" in line for line in said)


def test_set_up_is_its_total_and_three_longest_and_events_are_counted_past_five():
    """A program's initialisation as 25 set-up frames (they had been 25 Findings of 40):
    one sentence, its total and the 3 longest; 8 hiccup-like events at no period: the 5
    longest, then a count."""
    import pandas as pd

    from podscale.analysis.profile.phases import findings, table

    led = pd.DataFrame({"process": 0, "step": range(200), "period": 0.001})
    occ = pd.DataFrame([(0, f"init_{i} (setup.py:{i})", -1, 0.01 * (i + 1)) for i in range(25)]
                       + [(0, f"os_{i} (x.py:{i})", 10 + 17 * i, 0.02 + 0.001 * i)
                          for i in range(8)], columns=["process", "what", "step", "seconds"])
    said = findings(table(occ, led), 1, 199)
    setup = [line for line in said if line.startswith("set-up before step 0")]
    assert setup == ["set-up before step 0: 3.25 s of host work the device waited for, the "
                     "longest: init_24 (setup.py:24) 250 ms, init_23 (setup.py:23) 240 ms, "
                     "init_22 (setup.py:22) 230 ms (and 22 more frames)"], said
    assert not any(line.startswith("init_") for line in said)
    events = [line for line in said if line.startswith("os_")]
    assert [line.split(" ")[0] for line in events] == [f"os_{i}" for i in (7, 6, 5, 4, 3)]
    assert said[-1].startswith("3 more host event(s) at no period, each shorter"), said


def test_a_save_split_by_launches_in_its_gap_is_one_occurrence():
    """As MaxText's asynchronous saves: after steps 0, 10 and 20 a save's host time is
    sampled in two launches' gaps (its own program ran between them, then the data
    generator's); each step's gap holds one save of both parts' time, not two."""
    import pandas as pd

    from podscale.analysis.profile.phases import occurrences, table

    # launches: the step at seqs 0, 3, 6, ... (step i at seq 3i), two others between
    led = pd.DataFrame({"process": 0, "step": range(30), "seq": [3 * i for i in range(30)],
                        "period": 0.1})
    gaps = pd.DataFrame(
        [(0, 3 * s + k, "save_checkpoint (ckpt.py:5)", 0.15) for s in (0, 10, 20)
         for k in (1, 2)] + [(0, 3 * 7 + 1, "log (train.py:3)", 0.006),
                             (0, 3 * 7 + 2, "log (train.py:3)", 0.006)],
        columns=["process", "seq", "frame", "seconds"])
    occ = occurrences(gaps, led)
    save = occ[occ["what"].str.startswith("save")]
    assert list(save["step"]) == [0, 10, 20] and (save["seconds"] == 0.3).all(), occ
    # two 6 ms parts in one gap are one 12 ms occurrence (over MIN_S), at step 7
    assert list(occ.loc[occ["what"].str.startswith("log"), "step"]) == [7], occ
    t = table(occ, led).set_index("what")
    assert (t.loc["save_checkpoint (ckpt.py:5)", "count"],
            t.loc["save_checkpoint (ckpt.py:5)", "steps"]) == (3, [0, 10, 20]), t


def test_every_occurrence_of_a_recurring_save_is_said():
    """As MaxText's MoE run (20 steps, saves every 10): saves after steps 0 and 10 and
    after the last, each under 2 median steps; the two within the steps had been hiccups
    (unsaid) and only the last one said. A frame in 3 gaps recurs: every save is said,
    with its time on each process; a frame in 2 gaps at no period stays a hiccup."""
    import pandas as pd

    from podscale.analysis.profile.phases import findings, table

    led = pd.DataFrame({"process": 0, "step": range(20), "period": 1.0})
    occ = pd.DataFrame(
        [(0, "save (ckpt.py:9)", s, t) for s, t in ((0, 1.17), (10, 0.9), (19, 3.43))]
        + [(1, "save (ckpt.py:9)", s, t) for s, t in ((0, 1.2), (10, 0.95), (19, 3.1))]
        + [(0, "gc (gc.py:1)", 4, 0.5), (0, "gc (gc.py:1)", 13, 0.5)],
        columns=["process", "what", "step", "seconds"])
    t = table(occ, led)
    saves = t[t["what"] == "save (ckpt.py:9)"].set_index("kind")
    assert set(saves.index) == {"recurring", "after the last step"}, t
    assert saves.loc["recurring", "steps"] == [0, 10] and saves.loc["recurring", "count"] == 2
    said = findings(t, 2, 19)
    assert "save (ckpt.py:9) (a checkpoint save): 2 time(s) on every process, after step(s) " \
           "0, 10, 1.06 s each (900 ms-1.20 s), blocking the device" in said, said
    assert any(line.startswith("save (ckpt.py:9) (a checkpoint save): after the last step")
               for line in said), said
    assert not any(line.startswith("gc") for line in said), said


def test_compare_says_podscales_options_first_and_pairs_arguments_by_key():
    """MaxText's key=value arguments are paired by key, not by position; podscale's own
    options that differ (a capture window in one run only) come first."""
    from types import SimpleNamespace

    import pandas as pd

    from podscale.analysis.verdicts.profilecompare import args_differ, differences

    a = ["base.yml", "steps=20", "per_device_batch_size=4", "--fast"]
    b = ["base.yml", "per_device_batch_size=8", "steps=20", "run_name=x"]
    assert args_differ(a, b) == ("per_device_batch_size=4 -> per_device_batch_size=8; "
                                 "run_name=x only in B; --fast only in A")

    def run(spec: dict, windows: pd.DataFrame) -> SimpleNamespace:
        manifest = SimpleNamespace(spec={"sha256": "s", "args": ["x=1"], **spec})
        return SimpleNamespace(profile=SimpleNamespace(
            manifest=manifest, windows=windows,
            processes=pd.DataFrame({"process": [0, 1]})))

    none = pd.DataFrame(columns=["first", "stop", "trigger"])
    one = pd.DataFrame({"first": [5], "stop": [8], "trigger": [None]})
    said = differences(run({"peak_tflops": None}, none), run({"peak_tflops": 197.0}, one))
    assert said == ["podscale's options: --peak-tflops None -> 197.0; A: no capture, B: "
                    "captured steps 5-7"], said


def test_a_change_in_checkpointing_time_is_said_by_compare():
    """Two runs whose saves took 0.9 s and 1.8 s over 50 steps, the rest alike: the
    checkpointing cause moved, said; the causes that did not, not."""
    from types import SimpleNamespace

    import pandas as pd

    from podscale.analysis.profile.badput import changes
    from podscale.analysis.profile.goodput import ORDER

    def run(saves: float) -> SimpleNamespace:
        parts = {k: 0.0 for k in ORDER} | {"startup": 2.0, "compile": 1.0, "host": saves + 0.1,
                                           "productive": 5.0}
        goodput = pd.DataFrame([{"process": 0, **parts, "wall": sum(parts.values())}])
        frames = pd.DataFrame({"process": [0, 0], "frame": ["save_checkpoint (t.py:9)",
                                                           "log (t.py:3)"],
                               "seconds": [saves, 0.1], "per_step": [saves / 50, 0.002]})
        others = pd.DataFrame(columns=["name", "busy_median", "calls_max"])
        return SimpleNamespace(goodput=goodput, frames=frames, others=others, steps=50)

    said = changes(run(0.9), run(1.8), 0.05)
    assert said == ["checkpointing 18.0 ms -> 36.0 ms a step (+100%): more badput in B"], said
    assert changes(run(0.9), run(0.9), 0.05) == []


def test_a_captured_step_of_two_programs_is_one_step_of_their_summed_work():
    """As MaxText runs a one-op all-gather beside each train step: a captured step's
    rows of two programs are one step whose busy time is both, whose span runs from the
    first program's start to the last one's end (the median over rows had read the small
    program's, and the table 6 steps for 3); a step of one program is kept as it is."""
    import pandas as pd

    from podscale.analysis.profile.rows import step_work

    rows = []
    for step in (10, 11, 12):
        rows += [{"process": 0, "first": 10, "stop": 13, "step": step, "module": "jit_train",
                  "devices": 1, "busy_us": 900.0, "collective_us": 0.0, "ops": 40,
                  "cut": False, "span_us": 950.0, "compute_us": 900.0, "callback_us": 0.0,
                  "exposed_us": 0.0, "hidden_us": 0.0, "idle_us": 50.0,
                  "start_ns": step * 10**7, "end_ns": step * 10**7 + 950_000},
                 {"process": 0, "first": 10, "stop": 13, "step": step,
                  "module": "jit_gather", "devices": 1, "busy_us": 10.0,
                  "collective_us": 10.0, "ops": 1, "cut": False, "span_us": 10.0,
                  "compute_us": 0.0, "callback_us": 0.0, "exposed_us": 10.0,
                  "hidden_us": 0.0, "idle_us": 0.0, "start_ns": step * 10**7 + 990_000,
                  "end_ns": step * 10**7 + 1_000_000}]
    rows.append({**rows[0], "process": 1})  # process 1: one program a step
    got = step_work(pd.DataFrame(rows))
    mine = got[got["process"] == 0]
    assert list(mine["step"]) == [10, 11, 12] and set(mine["module"]) == {"jit_train+jit_gather"}
    assert list(mine["busy_us"]) == [910.0] * 3 and list(mine["span_us"]) == [1000.0] * 3
    assert list(mine["idle_us"]) == [90.0] * 3 and list(mine["ops"]) == [41] * 3
    assert got[got["process"] == 1].iloc[0].to_dict() == {**rows[0], "process": 1}


def test_a_slow_steps_parts_never_sum_past_the_step():
    """An eval's first call compiled 1.48 s while the device still ran the calls before it
    (its idle before it 0.2 s): the compile the step waited for is that 0.2 s, not 1.48 s
    beside the eval's own 1.48 s (the parts had summed past the 2.63 s step)."""
    import pandas as pd

    from podscale.analysis.profile.stalls import between

    tl = pd.DataFrame([
        {"process": 0, "seq": 10, "name": "train_step", "idle": 0.0, "compile": 0.0,
         "profiler": 0.0, "profiler_busy": 0.0, "busy": 0.5},
        {"process": 0, "seq": 11, "name": "eval_step", "idle": 0.2, "compile": 1.48,
         "profiler": 0.0, "profiler_busy": 0.0, "busy": 1.48},
        {"process": 0, "seq": 12, "name": "train_step", "idle": 0.45, "compile": 0.0,
         "profiler": 0.0, "profiler_busy": 0.0, "busy": 0.5}])
    led = pd.DataFrame({"process": [0, 0], "seq": [10, 12]})
    parts = between(tl, led, "train_step").set_index("step")
    row = parts.loc[1]  # what came before step 1 (from step 0's ready on)
    assert row["compile"] == 0.2 and row["other"] == 1.48 and row["others"] == "eval_step"
    assert row["host"] == 0.45 and row["device"] == 0.5
    window = sum(r["idle"] + r["busy"] for r in tl.iloc[1:].to_dict("records"))
    assert sum(row[k] for k in ("compile", "other", "capture", "host", "device")) <= window


def test_a_step_slowed_by_the_programs_own_thread_names_the_thread():
    """#64: a step slowed while an asynchronous save burns the CPU on another thread is
    named with that thread and its frame, not with the host or the device alone; without
    the thread's samples the same step is the host's (the check can fail both ways)."""
    import pandas as pd

    from podscale.analysis.profile.stalls import findings, slow_steps, threads

    period = [0.01] * 20
    period[12] = 0.06  # 50 ms more: the main thread waited for the interpreter
    led = pd.DataFrame({"process": 0, "step": range(20), "seq": [2 * s for s in range(20)],
                        "ready": pd.Series(period).cumsum()})
    parts = pd.DataFrame({"step": range(20), "process": 0, "compile": 0.0, "other": 0.0,
                          "capture": 0.0, "host": [0.05 if s == 12 else 0.001
                                                   for s in range(20)],
                          "device": 0.008, "others": ""})
    # read after it held the interpreter (the call it delayed, 38, long over): its time
    # is spread over when it ran, 40 ms in step 12's window and 10 ms in step 13's; a row
    # of an older record (no begin or end) goes by the call it delayed
    background = pd.DataFrame({"process": 0, "seq": [38, 30], "thread": "checkpoint",
                               "frame": "save_async (train.py:110)", "seconds": [0.05, 0.001],
                               "begin": [0.14, float("nan")], "end": [0.19, float("nan")]})
    busy = threads(background, led)
    assert busy.set_index("step")["seconds"].round(6).to_dict() == \
        {12: 0.04, 13: 0.01, 15: 0.001}, busy
    args = (led, pd.DataFrame(), pd.DataFrame(columns=["process", "start", "end"]), True,
            None, parts)
    (row,) = slow_steps(*args, busy).itertuples()
    assert (row.step, row.cause, row.what) == \
        (12, "thread", "checkpoint in save_async (train.py:110)"), row
    (said,) = findings(slow_steps(*args, busy))
    assert "process 0's thread checkpoint in save_async (train.py:110) used 40.0 ms of CPU" \
        in said and "also: host 50.0 ms" in said, said
    (alone,) = slow_steps(*args).itertuples()
    assert alone.cause == "host", alone
