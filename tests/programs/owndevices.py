"""A toy program that asks for its own CPU device count, as flax's
``10_fsdp_and_optimizer.py`` does (podscale's tests run it and never edit it): it sets
XLA_FLAGS' ``--xla_force_host_platform_device_count=8`` itself, lays a (2, 4) mesh over
the devices and steps; like flax's examples, it never joins a job."""

import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("data", "model")))
step = jax.jit(lambda x: x * 1.01)
for _ in range(10):
    x = step(x)
print(f"{jax.device_count()} devices, sum {float(x.sum()):.3f}")
