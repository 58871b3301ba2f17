"""Synthetic run directories for the tests: :mod:`podscale.frontend.synthetic`."""

from podscale.frontend.synthetic import _case, make_run, synthetic_cases  # noqa: F401
