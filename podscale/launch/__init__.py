"""Launchers: the run (directory, manifest, one launch per host count), the local
launcher with its supervisor, mpirun/srun, and job generators for TPU VMs, Kubernetes
and Slurm. Starts workers; never imports JAX."""
