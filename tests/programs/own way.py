"""A toy program that does things its own way (podscale's tests run it and never edit it;
its file name has a space). Every process joins, then, by its argument:

  twice      calls jax.distributed.initialize() a second time (JAX refuses)
  interrupt  raises KeyboardInterrupt itself (no signal)
  stdin      prints the first line of its standard input (process 0) and steps 5 times
"""

import sys

import jax

jax.distributed.initialize()
what = sys.argv[1]
if what == "twice":
    jax.distributed.initialize()
if what == "interrupt":
    raise KeyboardInterrupt
if what == "stdin":
    line = sys.stdin.readline().strip() if jax.process_index() == 0 else "-"
    print(f"process {jax.process_index()} read {line!r}")
    step = jax.jit(lambda x: x + 1)
    x = jax.numpy.zeros(3)
    for _ in range(5):
        x = step(x)
