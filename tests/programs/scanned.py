"""A step whose work is inside loops, as a scanned stack of layers with gradient
accumulation runs it: ACC microbatches (a fori_loop) of LAYERS 64x128 @ 128x128 products
(a scan over the stacked weights). Its FLOPs a step are ACC x LAYERS x 2 x 64 x 128 x 128
(and the tanh between layers); XLA's cost analysis counts each loop's body once.

  python scanned.py [STEPS] [LAYERS] [ACC]
"""

import sys

import jax
import jax.numpy as jnp

steps, layers, acc = (int(a) for a in (sys.argv[1:] + ["20", "4", "2"][len(sys.argv) - 1:])[:3])


def forward(x, ws):
    y, _ = jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)
    return y.sum()


@jax.jit
def step(x, ws):
    return jax.lax.fori_loop(0, acc, lambda i, total: total + forward(x + i, ws), 0.0)


x = jnp.ones((64, 128)) / 128
ws = jnp.ones((layers, 128, 128)) / 128
for _ in range(steps):
    out = step(x, ws).block_until_ready()
print(f"loss {float(out):.4f}")
