"""A toy program that reads its rank from its launcher's variables (podscale's tests run
it and never edit it), as MaxText's CPU mode reads a Kubernetes Indexed Job's: it checks
that the rank VAR holds is the process index JAX gives it after a plain
``jax.distributed.initialize()``, then steps.

    ranked.py VAR
"""

import os
import sys

import jax

rank = int(os.environ[sys.argv[1]])
jax.distributed.initialize()
assert jax.process_index() == rank, (jax.process_index(), rank)
step = jax.jit(lambda x: x + 1)
x = jax.numpy.zeros(3)
for _ in range(5):
    x = step(x)
print(f"rank {rank} of {jax.process_count()} from {sys.argv[1]}")
