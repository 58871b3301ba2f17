"""Every call of a compiled computation, recorded without editing the program.

``jax.jit``, ``jax.pmap`` and ``jax.stages.Compiled.__call__`` are wrapped before the
script runs (:mod:`.entry`): each top-level call (not one made while JAX traces another
function) is recorded as a row ``[computation, seq, dispatch_start, dispatch_end, ready]`` in
microseconds of this process's clock (:mod:`.clock`). The ready time comes from a watcher
thread that waits on one output of each call in turn, so the program's own step gets no
added synchronisation; the main thread only reads the clock twice and queues the output.
A growing compilation cache marks a call that compiled (a new shape, a re-compile).

The thread rule: the steps are the main thread's calls (the thread that runs the script).
A call from any other thread (a prefetching or checkpointing thread) runs untouched and is
only counted, per computation (the ``threads`` record): its launches interleave with the
main thread's in no order the ledger could read."""

from __future__ import annotations

import functools
import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from podscale.attach.programs import describe
from podscale.core.profilerecord import record
from podscale.startup.jaxapi import cache_size, tracing

#: a call whose output could not be waited on (donated before the watcher reached it)
UNKNOWN = -1
#: rows are emitted in batches of this many calls (one record line each, under 1 KB)
ROWS_PER_RECORD = 16
#: launches each process keeps for the roll-call's desync check
RECENT = 64
#: ready-to-ready intervals kept for the roll-call's auto timeout (its p99)
PERIODS = 1000


@dataclass
class Computation:
    """One compiled computation the program defined (one ``jax.jit(f)``, ``pmap(f)`` or AOT
    ``Compiled``): its id in this process's records, name and wrapper."""

    id: int
    name: str
    wrapper: str
    calls: int = 0
    cache_size: int = 0
    #: its compiled program's work (XLA's cost analysis: flops + bytes accessed), where
    #: capture windows are asked for: windows count the steps of the computation with
    #: the most repeated work, the same on every process (:mod:`.windows`)
    weight: float = 1.0
    #: the program it last compiled (:func:`program`): its fingerprint and shapes, and
    #: whether it waits on other processes (a collective over devices of several)
    program: str = ""
    shapes: str = ""
    #: XLA's FLOPs of one call per device (cost analysis), where it says (the live feed)
    flops: float | None = None


class CallLog:
    """The calls of one process. ``emit(obj)`` receives each finished row (from the watcher
    thread) and each new computation or compile (from the calling thread)."""

    def __init__(self, clock: Callable[[], int], emit: Callable[[dict], None]) -> None:
        self.clock, self.emit = clock, emit
        self.computations: list[Computation] = []
        self.seq = 0
        #: set while the main thread runs Python between computations (the sampler's gap)
        self.in_call = False
        #: set while dispatching a computation's first call, or a call JAX traced or
        #: lowered anew (a re-compile), until its backend compile ends (a program from a
        #: cache: the whole first dispatch)
        self.compiling = False
        #: the last ready-to-ready intervals (µs): the hang roll-call's auto timeout
        self.periods: deque[int] = deque(maxlen=PERIODS)
        self._last_ready: int | None = None
        self.last_seq = -1
        #: for the hang roll-call, as (name, k) with k the computation's call index (a
        #: label only when asked: :func:`label`): the call being dispatched, the last one
        #: dispatched, the oldest one awaited
        self.calling: tuple[str, int] | None = None
        self.last_call: tuple[str, int] | None = None
        self.waiting_for: tuple[str, int] | None = None
        #: calls whose outputs are not ready yet: dispatched (main thread) less readied
        #: (the watcher), each written by one thread only
        self.dispatched = self.readied = 0
        self.current = -1  # the call in progress (for compile events)
        #: the last launches, (seq, computation name): the roll-call compares them across
        #: processes (a desync, :mod:`podscale.core.desync`)
        self.recent: deque[list] = deque(maxlen=RECENT)
        #: profiler capture windows (:mod:`.capture`), where asked for
        self.capture: Any = None
        #: inside ``Lowered.compile`` (an ahead-of-time compile), on any thread
        self.ahead = 0
        #: called before the first recorded call (the session's check that it joined)
        self.on_first: Callable[[], None] | None = None
        #: told of each ready call (its computation, every computation, its ready time and
        #: its index among the computation's calls) on the watcher thread (:mod:`.anomaly`)
        self.on_ready: Callable[[Computation, list[Computation], int, int], None] | None = None
        self._owner: int | None = None  # the thread inside a recorded call
        self._main = threading.main_thread().ident
        #: calls from threads other than the main one, per computation name
        self.other_threads: dict[str, int] = {}
        self._rows: list[list[int]] = []
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._watcher = threading.Thread(target=self._watch, name="podscale-ready",
                                         daemon=True)
        self._watcher.start()

    def computation(self, name: str, wrapper: str) -> Computation:
        with self._lock:
            comp = Computation(len(self.computations), name, wrapper)
            self.computations.append(comp)
        self.emit(record({"kind": "computation", "id": comp.id, "name": name, "wrapper": wrapper}))
        return comp

    def call(self, comp: Computation, inner: Callable[..., Any], args: tuple,
             kwargs: dict) -> Any:
        """Call ``inner`` as the program asked, recording it unless JAX is tracing."""
        me = threading.get_ident()
        if self._owner == me or tracing(args, kwargs):
            return inner(*args, **kwargs)
        if me != self._main:
            with self._lock:
                self.other_threads[comp.name] = self.other_threads.get(comp.name, 0) + 1
            return inner(*args, **kwargs)
        if self.seq == 0 and self.on_first is not None:
            self.on_first()
        self._owner = me
        self.in_call, self.compiling = True, comp.calls == 0
        capture = self.capture
        if capture is not None:  # outside the clocked dispatch; never into the program
            self._quietly(capture.before, comp, self.computations,
                          lambda: _compiled(inner, args, kwargs))
        seq, self.seq = self.seq, self.seq + 1
        self.current, self.calling = seq, (comp.name, comp.calls)
        launch = [seq, comp.name, comp.program, comp.shapes]
        self.recent.append(launch)
        t0 = self.clock()
        try:
            out = inner(*args, **kwargs)
        finally:
            self._owner = None
            self.in_call = self.compiling = False
        t1 = self.clock()
        if capture is not None:
            self._quietly(capture.after, comp, out)
        self.last_seq = seq
        self.dispatched += 1
        comp.calls += 1
        size = cache_size(inner, jitted=comp.wrapper == "jit")
        if size is not None and size != comp.cache_size or size is None and comp.calls == 1:
            comp.cache_size = size or 0
            facts = describe(lambda: _compiled(inner, args, kwargs))
            leaves = _leaves(args, kwargs)
            comp.program, comp.shapes = facts["program"], _short(leaves)
            comp.flops = facts.get("flops")
            launch[2:] = [comp.program, comp.shapes]
            self.emit(record({"kind": "compiled", "id": comp.id, "seq": seq,
                              "call": comp.calls - 1, "shapes": comp.shapes, "leaves": leaves,
                              "outputs": _leaves((out,), {}), **facts}))
            if self.capture is not None and comp.calls == 1:  # its program's work, once
                comp.weight = self.capture.choice.weigh(facts)
        self.last_call = self.calling
        # the watcher waits on a few of the outputs, not all: holding them all kept the
        # program's old arrays alive into the watcher, freed there, against the GIL
        self._queue.put((comp.id, seq, t0, t1, _few(out), self.last_call))
        return out

    def main_call(self) -> int | None:
        """The main thread's recorded call in progress, asked from the thread that runs now
        (a compile on another thread is in no call of the steps')."""
        mine = self.in_call and threading.get_ident() == self._main
        return self.current if mine else None

    def _quietly(self, fn: Callable[..., Any], *args: Any) -> None:
        """A capture's step of podscale's own around the program's call: a failure is
        recorded (a failed capture), never raised into the program."""
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001
            self.emit(record({"kind": "capture_failed", "steps": None,
                              "error": f"{type(e).__name__}: {e}"}))

    def _watch(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            cid, seq, t0, t1, out, call = item
            self.waiting_for = call
            ready = self.clock() if _wait(out) else UNKNOWN
            if ready != UNKNOWN:
                if self._last_ready is not None:
                    self.periods.append(ready - self._last_ready)
                self._last_ready = ready
            with self._lock:
                self._rows.append([cid, seq, t0, t1, ready])
            if self.on_ready is not None and ready != UNKNOWN:
                try:
                    self.on_ready(self.computations[cid], self.computations, ready, call[1])
                except Exception:  # noqa: BLE001 - never the program's failure
                    self.on_ready = None
            self.readied += 1
            del item, out
            if len(self._rows) >= ROWS_PER_RECORD:
                self.emit_ready()

    def emit_ready(self) -> None:
        """Emit the rows of the calls ready so far (from any thread: the hang roll-call
        keeps them while the watcher still waits on a call that will never be ready)."""
        with self._lock:
            rows, self._rows = self._rows, []
        if rows:
            self.emit(record({"kind": "calls", "rows": rows}))

    def device_busy(self) -> bool:
        """Whether a call is running (dispatching, or its outputs not ready yet)."""
        return self.in_call or self.dispatched > self.readied

    def drain(self) -> None:
        """Wait until every queued call's row is emitted."""
        self._queue.put(None)
        self._watcher.join()
        self.emit_ready()
        with self._lock:
            if self.other_threads:
                self.emit(record({"kind": "threads", "calls": dict(self.other_threads)}))


def label(call: tuple[str, int] | None) -> str | None:
    """A call as the roll-call names it: ``local_step #5``."""
    return None if call is None else f"{call[0]} #{call[1]}"


def _compiled(inner: Any, args: tuple, kwargs: dict) -> Any:
    """The ``Compiled`` a call of ``inner`` runs: an AOT one itself, else lowered and
    compiled again on the same arguments, which JAX answers from its in-memory caches."""
    if isinstance(inner, functools.partial):
        return inner.args[0]  # Compiled.__call__ bound to the Compiled
    return inner.lower(*args, **kwargs).compile()


def _leaves(args: tuple, kwargs: dict) -> list[str]:
    """Every argument leaf's dtype and shape (only computed when a call compiled)."""
    import jax

    return [f"{getattr(x, 'dtype', type(x).__name__)}{list(getattr(x, 'shape', ()))}"
            for x in jax.tree_util.tree_leaves((args, kwargs))]


def _short(leaves: list[str]) -> str:
    """The arguments' shapes, short: the first 8 and a count."""
    return ",".join(leaves[:8]) + (f",+{len(leaves) - 8}" if len(leaves) > 8 else "")


_END = object()  # an iterator's end


def _few(out: Any, keep: int = 2) -> list:
    """The outputs the watcher waits on: the last ``keep`` arrays (outputs are ready
    together; a donated state usually comes first), found from the end, other pytree nodes
    than tuples, lists and dicts flattened one level: never the whole output (a state of
    1,000 arrays cost ~0.2 ms a call)."""
    import jax

    found: list = []
    stack = [iter((out,))]  # iterators over each level's children, last child first
    while stack and len(found) < keep:
        x = next(stack[-1], _END)
        if x is _END:
            stack.pop()
        elif isinstance(x, (tuple, list)):
            stack.append(reversed(x))
        elif isinstance(x, dict):
            stack.append(reversed(x.values()))
        elif hasattr(x, "block_until_ready"):
            found.append(x)
        elif x is not None:
            try:
                children, _ = jax.tree_util.flatten_one_level(x)
            except ValueError:  # a leaf that is no array (a Python number)
                continue
            stack.append(reversed(list(children)))
    return found


def _wait(out: list) -> bool:
    """Block until the call's outputs are ready (one suffices; the next where it was donated
    meanwhile); True for a call with no array output."""
    for leaf in out:
        try:
            leaf.block_until_ready()
            return True
        except Exception:  # noqa: BLE001 - deleted (donated) meanwhile: try another
            continue
    return not out
