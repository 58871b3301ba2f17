"""JAX's entry points wrapped before the script runs, so that its calls are recorded
(:mod:`.calls`) without editing it: ``jax.jit``, ``jax.pmap``, ``Compiled.__call__`` and
``jax.profiler.StepTraceAnnotation``. What the program gets back behaves as the original
in every other respect (``lower``, ``trace``, methods, ``repr``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from podscale.attach.calls import CallLog, Computation


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


def _name(fun: Any) -> str:
    """A computation's name as the program spells it: its qualified name from the
    innermost function that defines it (``train_step``, not ``main.<locals>.train_step``;
    a method's ``Model.loss``), what ``--step`` takes."""
    base = fun
    while isinstance(base, functools.partial):
        base = base.func
    name = getattr(base, "__qualname__", None) or getattr(base, "__name__", None) or \
        type(base).__name__
    return str(name).rsplit("<locals>.", 1)[-1]


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
            log.emit({"kind": "step", "name": self._step[0], "num": self._step[1],
                      "seqs": [self._began[0], log.seq], "enter": self._began[1],
                      "exit": log.clock()})
            return out

    RecordedStep.__name__ = RecordedStep.__qualname__ = "StepTraceAnnotation"
    return RecordedStep


def install(log: CallLog) -> Callable[[], None]:
    """Wrap ``jax.jit``, ``jax.pmap``, ``Compiled.__call__`` and
    ``jax.profiler.StepTraceAnnotation``; returns the undo."""
    import jax
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
            return Wrapped(inner, log.computation(_name(fun), wrapper), log)
        return make

    aot: dict[int, Computation] = {}

    def call_compiled(self: Any, *args: Any, **kwargs: Any) -> Any:
        comp = aot.get(id(self))
        if comp is None:
            comp = aot[id(self)] = log.computation(_compiled_name(self), "aot")
        return log.call(comp, functools.partial(compiled_call, self), args, kwargs)

    jax.jit, jax.pmap = wrap(jit, "jit"), wrap(pmap, "pmap")
    jax.stages.Compiled.__call__ = call_compiled  # type: ignore[method-assign]
    jax.profiler.StepTraceAnnotation = _annotations(log, annotation)  # type: ignore[misc, assignment]

    def undo() -> None:
        jax.jit, jax.pmap = jit, pmap
        jax.profiler.StepTraceAnnotation = annotation  # type: ignore[misc]
        jax.stages.Compiled.__call__ = compiled_call  # type: ignore[method-assign]
    return undo


def _compiled_name(compiled: Any) -> str:
    """An AOT ``Compiled``'s name: its XLA module's, less JAX's ``jit_`` (``train_step``
    for ``jax.jit(train_step).lower(...).compile()``, as ``--step`` takes it)."""
    from podscale.attach.capture import module_name

    name = module_name(lambda: compiled) or "compiled"
    return name.removeprefix("jit_") or name
