"""Results -> pandas -> statistics, tables, plots and reports. Never imports JAX.

``load_run(path)`` gives a :class:`Run` (manifest, samples, cases, environments), and
``summarize(samples, cases)`` one row per case; ``Run.summary()`` is the same, kept.
"""

from podscale.analysis.models.stats import summarize
from podscale.analysis.run import Run, load, load_run


def __getattr__(name: str) -> object:
    """A profiled program's readers, imported when asked for (the Run's readers need not
    import them)."""
    if name == "load_profile":
        from podscale.analysis.profile.load import load_profile
        return load_profile
    if name == "summarize_profile":
        from podscale.analysis.profile.summary import summarize_profile
        return summarize_profile
    if name == "profile_findings":  # the Findings of summarize_profile's summary
        from podscale.analysis.verdicts.profilefindings import findings
        return findings
    raise AttributeError(f"module 'podscale.analysis' has no attribute {name!r}")


__all__ = ["Run", "load", "load_profile", "load_run", "profile_findings", "summarize",
           "summarize_profile"]
