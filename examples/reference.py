"""The reference multi-controller program as printed (JAX in Action, listing 7.30): every
process makes its own random vectors (seed 42 + 10 * process index), computes their dot
products with pmap(vmap(vdot)) over its local devices, and a psum of the partial sums over
every device of every process. It calls ``jax.distributed.initialize()`` with no
arguments, so it runs as it is under a cluster launcher, and under
``podscale profile --hosts 2 --devices-per-host 4 examples/reference.py``."""

import jax
import jax.numpy as jnp

jax.distributed.initialize()

print("== Running worker: ", jax.process_index())
rng_key = jax.random.PRNGKey(42 + 10 * jax.process_index())
vs = jax.random.normal(rng_key, shape=(2_000_000, 3))
v1s = vs[:1_000_000, :]
v2s = vs[1_000_000:, :]

if jax.process_index() == 0:
    print("-- global device count:", jax.device_count())
    print("-- local device count:", jax.local_device_count())
    print("-- JAX version:", jax.__version__)

v1sp = v1s.reshape((jax.local_device_count(), v1s.shape[0] // jax.local_device_count(),
                    v1s.shape[1]))
v2sp = v2s.reshape((jax.local_device_count(), v2s.shape[0] // jax.local_device_count(),
                    v2s.shape[1]))
if jax.process_index() == 0:
    print("-- v1sp shape: ", v1sp.shape)

dots = jax.pmap(jax.vmap(jnp.vdot))(v1sp, v2sp)
if jax.process_index() == 0:
    print("-- dots shape: ", dots.shape)

global_sum = jax.pmap(lambda x: jax.lax.psum(jnp.sum(x), axis_name="p"), axis_name="p")(dots)
if jax.process_index() == 0:
    print("-- global_sum shape: ", global_sum.shape)
print(f"== Worker {jax.process_index()} global sum: {global_sum}")

dots = dots.reshape(dots.shape[0] * dots.shape[1])
if jax.process_index() == 0:
    print("-- result shape: ", dots.shape)
local_sum = jnp.sum(dots)
print(f"== Worker {jax.process_index()} local sum: {local_sum}")
