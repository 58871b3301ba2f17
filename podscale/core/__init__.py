"""podscale's core, shared by every layer: case model, workload protocol and registry,
grid, plan, records, timing and errors. Imports neither JAX nor pandas."""
