"""What runs inside every worker process: runtime (JAX start-up, barriers), the case
runner, record writers, traced pass and planted faults. Imports JAX, numpy and
podscale's core only."""
