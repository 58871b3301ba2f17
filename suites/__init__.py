"""Built-in workloads, one file each, found through the ``podscale.workloads`` entry point
(:mod:`podscale.core.registry`); ``study.toml`` is the default study's grid."""
