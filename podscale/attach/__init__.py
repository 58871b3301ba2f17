"""``podscale attach``: a user's own multi-controller program run unmodified, with what
podscale learns from wrapping JAX's entry points (``jax.jit``, ``jax.pmap``, AOT
``Compiled``, ``jax.distributed.initialize``), its monitoring events and the coordination
service's key-value store. Nothing here edits the program; it imports JAX, numpy and
podscale's core only (no pandas), like a worker.

- :mod:`.calls`: every call of a compiled computation, its dispatch and ready times;
- :mod:`.clock`: this process's clock against process 0's, through the store;
- :mod:`.sampler`: where the host spends the time between computations (Python frames);
- :mod:`.recorder`: the per-process record file and its batches through the store;
- :mod:`.session`: running the script as ``__main__`` and closing the record.
"""

from podscale.core import envnames

#: set by ``podscale profile`` for its processes: the front end keeps the manifest, not
#: process 0's ``podscale attach``
SUPERVISED = envnames.PROFILE_SUPERVISED
