"""Synthetic run directories for the tests: :mod:`podscale.selfbench.synthetic`."""

from podscale.selfbench.synthetic import _case, make_run, synthetic_cases  # noqa: F401
