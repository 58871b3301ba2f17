"""JAX's entry points wrapped before the script runs, so that its calls are recorded
(:mod:`.calls`) without editing it: ``jax.jit``, ``jax.pmap``, ``Compiled.__call__`` and
``jax.profiler.StepTraceAnnotation``; and ``jax.profiler.start_trace``, so that a
program's own profiler session finds podscale's capture out of its way. What the program
gets back behaves as the original in every other respect (``lower``, ``trace``, methods,
``repr``)."""

from __future__ import annotations

import functools
import os
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podscale.attach.calls import CallLog, Computation
from podscale.core.profilerecord import record

if TYPE_CHECKING:
    from podscale.attach.events import Events


class Wrapped:
    """A jitted (or pmapped) function as the program sees it: calls recorded, every other
    attribute (``lower``, ``trace``, ``eval_shape``, ...) the original's."""

    def __init__(self, inner: Any, comp: Computation, log: CallLog) -> None:
        self._inner, self._comp, self._log = inner, comp, log
        functools.update_wrapper(self, inner, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._log.call(self._comp, self._inner, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:  # a jitted method
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"<podscale-recorded {self._inner!r}>"


def _base(fun: Any) -> Any:
    """The function a jitted callable runs: under any ``functools.partial``, a bound
    method's function."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__func__", fun)


def _name(base: Any) -> str:
    """A computation's name as the program spells it: its qualified name from the
    innermost function that defines it (``train_step``, not ``main.<locals>.train_step``;
    a method's ``Model.loss``), what ``--step`` takes."""
    name = getattr(base, "__qualname__", None) or getattr(base, "__name__", None) or \
        type(base).__name__
    return str(name).rsplit("<locals>.", 1)[-1]


def _where(base: Any) -> str | None:
    """Where a function is defined, short: ``train.py:12``."""
    code = getattr(base, "__code__", None)
    if code is None:
        return None
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def _options(wrapper: str, args: tuple, kwargs: dict) -> tuple:
    """The jit options as a key: the values themselves where hashable, else their repr."""
    def key(v: Any) -> Any:
        try:
            hash(v)
            return v
        except TypeError:
            return repr(v)
    return (wrapper, tuple(key(a) for a in args),
            tuple(sorted((k, key(v)) for k, v in kwargs.items())))


class Registry:
    """One computation per user function and jit options: ``jax.jit(step)(x)`` in a loop
    is one computation, two lambdas two. A function is keyed by its code (a lambda made
    anew in a loop is the same source), a callable object by itself, held weakly where it
    can be. Names are unique for display: a lambda, or a second function of a name
    already taken, gets where it is defined (``<lambda>@train.py:12``)."""

    def __init__(self, log: CallLog) -> None:
        self.log = log
        self._by_key: dict[tuple, tuple[Any, Computation]] = {}
        self._names: dict[str, Any] = {}  # display name -> the identity that took it

    def get(self, fun: Any, wrapper: str, args: tuple, kwargs: dict) -> Computation:
        base = _base(fun)
        ident = getattr(base, "__code__", None) or base
        key = (id(ident), _options(wrapper, args, kwargs))
        held = self._by_key.get(key)
        if held is not None and _deref(held[0]) is ident:
            return held[1]
        comp = self.log.computation(self._display(base, ident), wrapper)
        self._by_key[key] = (_ref(ident), comp)
        return comp

    def _display(self, base: Any, ident: Any) -> str:
        name, where = _name(base), _where(base)
        if getattr(base, "__name__", None) == "<lambda>":
            name = "<lambda>"  # not <listcomp>.<lambda>
        if where is not None and (name == "<lambda>" or
                                  self._names.setdefault(name, ident) is not ident):
            name = f"{name}@{where}"
        self._names.setdefault(name, ident)
        return name


def _ref(obj: Any) -> Any:
    try:
        return weakref.ref(obj)
    except TypeError:  # not weakly referable: held (a computation per object is small)
        return obj


def _deref(held: Any) -> Any:
    return held() if isinstance(held, weakref.ref) else held


def _annotations(log: CallLog, base: type) -> type:
    """``jax.profiler.StepTraceAnnotation`` as the program sees it: the same annotation,
    and each step's name, number and the calls made inside it recorded (a step the
    program marks itself wins over detection)."""

    class RecordedStep(base):
        def __init__(self, name: str, **kwargs: Any) -> None:
            super().__init__(name, **kwargs)
            self._step = (name, kwargs.get("step_num"))

        def __enter__(self) -> Any:
            self._began = (log.seq, log.clock())
            return super().__enter__()

        def __exit__(self, *exc: Any) -> Any:
            out = super().__exit__(*exc)
            log.emit(record({"kind": "step", "name": self._step[0], "num": self._step[1],
                             "seqs": [self._began[0], log.seq],
                             "enter": self._began[1], "exit": log.clock()}))
            return out

    RecordedStep.__name__ = RecordedStep.__qualname__ = "StepTraceAnnotation"
    return RecordedStep


def install(log: CallLog, initialize: Callable[[Callable[..., None]], Callable[..., None]],
            events: Events) -> Callable[[], None]:
    """Every patch podscale makes in a profiled process, in one place: wrap ``jax.jit``,
    ``jax.pmap``, ``Compiled.__call__``, ``jax.profiler.StepTraceAnnotation``, the
    profiler and AOT entry points (:func:`_install_profiler`) and
    ``jax.distributed.initialize`` (``initialize`` makes its wrapper from JAX's), and
    listen to ``jax.monitoring`` (``events``); returns the one undo of all of them (a
    second call does nothing)."""
    import jax
    import jax.distributed
    import jax.monitoring
    import jax.profiler
    import jax.stages

    jit, pmap, compiled_call = jax.jit, jax.pmap, jax.stages.Compiled.__call__
    annotation = jax.profiler.StepTraceAnnotation

    def wrap(original: Callable[..., Any], wrapper: str) -> Callable[..., Any]:
        @functools.wraps(original)
        def make(fun: Any = None, *args: Any, **kwargs: Any) -> Any:
            if fun is None:  # jax.jit(static_argnums=...) used as a decorator factory
                return lambda f: make(f, *args, **kwargs)
            inner = original(fun, *args, **kwargs)
            return Wrapped(inner, registry.get(fun, wrapper, args, kwargs), log)
        return make

    registry = Registry(log)
    #: AOT computations by the Compiled itself, held (its id could be reused)
    aot: dict[int, tuple[Any, Computation]] = {}

    def call_compiled(self: Any, *args: Any, **kwargs: Any) -> Any:
        held = aot.get(id(self))
        if held is None or held[0] is not self:
            held = aot[id(self)] = (self, log.computation(_compiled_name(self), "aot"))
        return log.call(held[1], functools.partial(compiled_call, self), args, kwargs)

    undo_profiler = _install_profiler(log)
    joining = jax.distributed.initialize
    jax.jit, jax.pmap = wrap(jit, "jit"), wrap(pmap, "pmap")
    jax.stages.Compiled.__call__ = call_compiled  # type: ignore[method-assign]
    jax.profiler.StepTraceAnnotation = _annotations(log, annotation)  # type: ignore[misc, assignment]
    jax.distributed.initialize = initialize(joining)
    jax.monitoring.register_event_duration_secs_listener(events.compile)
    jax.monitoring.register_event_listener(events.cache)
    done: list[bool] = []

    def undo() -> None:
        if done:
            return
        done.append(True)
        jax.jit, jax.pmap = jit, pmap
        jax.profiler.StepTraceAnnotation = annotation  # type: ignore[misc]
        jax.stages.Compiled.__call__ = compiled_call  # type: ignore[method-assign]
        jax.distributed.initialize = joining
        jax.monitoring.unregister_event_duration_listener(events.compile)
        jax.monitoring.unregister_event_listener(events.cache)
        undo_profiler()
    return undo


def _install_profiler(log: CallLog) -> Callable[[], None]:
    """Wrap ``jax.profiler.start_trace`` (both its names: ``jax.profiler.trace()`` calls
    the module's own), so that the program's own session finds podscale's capture out of
    its way, and ``Lowered.compile``, so that its compile events are marked ahead of time;
    returns the undo."""
    import jax.stages

    from podscale.attach.jaxside import profiler
    from podscale.startup.jaxapi import start_trace_owners

    start_trace = profiler()[0]  # JAX's own, kept for podscale's sessions
    lowered_compile = jax.stages.Lowered.compile

    @functools.wraps(start_trace)
    def program_start_trace(*args: Any, **kwargs: Any) -> Any:
        """The program's own profiler session: podscale's open capture yields first."""
        if log.capture is not None:
            try:
                log.capture.yield_to_program()
            except Exception:  # noqa: BLE001 - never the program's failure
                pass
        return start_trace(*args, **kwargs)

    @functools.wraps(lowered_compile)
    def compile_ahead(self: Any, *args: Any, **kwargs: Any) -> Any:
        """``jax.jit(f).lower(...).compile()``: its compile events marked ahead of time."""
        log.ahead += 1
        try:
            return lowered_compile(self, *args, **kwargs)
        finally:
            log.ahead -= 1

    jax.stages.Lowered.compile = compile_ahead  # type: ignore[method-assign]
    owners = start_trace_owners()
    for owner in owners:
        owner.start_trace = program_start_trace

    def undo() -> None:
        for owner in owners:
            owner.start_trace = start_trace
        jax.stages.Lowered.compile = lowered_compile  # type: ignore[method-assign]
    return undo


def _compiled_name(compiled: Any) -> str:
    """An AOT ``Compiled``'s name: its XLA module's, less JAX's ``jit_`` (``train_step``
    for ``jax.jit(train_step).lower(...).compile()``, as ``--step`` takes it)."""
    from podscale.attach.jaxside import module_name

    name = module_name(lambda: compiled) or "compiled"
    return name.removeprefix("jit_") or name
