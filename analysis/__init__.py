"""Results -> pandas -> statistics, tables, plots and reports. Never imports JAX."""

from analysis.load import load, load_run
from analysis.stats import summarize

__all__ = ["load", "load_run", "summarize"]
