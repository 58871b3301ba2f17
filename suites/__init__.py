"""Built-in workloads, one file each, discovered by :mod:`podscale.core.registry` (every
module here but ``common`` and ``seed``'s listing; ``podscale list`` shows them)."""
