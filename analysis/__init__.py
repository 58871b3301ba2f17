"""Results -> pandas -> statistics, tables, plots and reports. Never imports JAX.

``load_run(path)`` gives a :class:`Run` (manifest, samples, cases, environments), and
``summarize(samples, cases)`` one row per case; ``Run.summary()`` is the same, kept.
"""

from podscale.analysis.models.stats import summarize
from podscale.analysis.run import Run, load, load_run

__all__ = ["Run", "load", "load_run", "summarize"]
