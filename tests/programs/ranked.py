"""A toy program that reads its rank from its launcher's variables (podscale's tests run
it and never edit it), as MaxText's CPU mode reads a Kubernetes Indexed Job's: it checks
that the rank VAR holds is the process index JAX gives it after a plain
``jax.distributed.initialize()``, then steps. With ``maxtext PORT`` it joins as MaxText's
``hardware=cpu`` does (``initialize_jax_for_cpu``, as xpk's pods set the variables): the
rank JOB_INDEX * PROCESSES_IN_JOB + JOB_COMPLETION_INDEX, JAX_PROCESS_COUNT processes,
its own coordinator at JAX_COORDINATOR_ADDRESS:PORT (MaxText's is port 1234).

    ranked.py VAR
    ranked.py maxtext PORT
"""

import os
import sys

import jax

if sys.argv[1] == "maxtext":
    rank = int(os.environ.get("JOB_INDEX")) * int(os.environ.get("PROCESSES_IN_JOB")) + \
        int(os.environ.get("JOB_COMPLETION_INDEX"))
    jax.distributed.initialize(
        coordinator_address=f"{os.environ.get('JAX_COORDINATOR_ADDRESS')}:{sys.argv[2]}",
        process_id=rank, num_processes=int(os.environ.get("JAX_PROCESS_COUNT")))
else:
    rank = int(os.environ[sys.argv[1]])
    jax.distributed.initialize()
assert jax.process_index() == rank, (jax.process_index(), rank)
step = jax.jit(lambda x: x + 1)
x = jax.numpy.zeros(3)
for _ in range(5):
    x = step(x)
print(f"rank {rank} of {jax.process_count()} from {sys.argv[1]}")
