"""A toy program that starts processes of its own (podscale's tests run it and never edit
it): before joining, each process starts ``sleep 600`` and forks a child that sleeps as
long; then it writes ``PIDS.<process>`` (its pid, the sleep's, the child's) and steps
until it is stopped.

    forks.py PIDS
"""

import os
import subprocess
import sys
import time

sleeper = subprocess.Popen(["sleep", "600"])
child = os.fork()
if child == 0:
    time.sleep(600)
    os._exit(0)

import jax  # noqa: E402

jax.distributed.initialize()
step = jax.jit(lambda x: x + 1)
x = step(jax.numpy.zeros(3))
with open(f"{sys.argv[1]}.{jax.process_index()}", "w") as f:
    f.write(f"{os.getpid()} {sleeper.pid} {child}\n")
while True:
    x = step(x)
    time.sleep(0.01)
