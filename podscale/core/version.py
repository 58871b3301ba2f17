"""podscale's version, in one place: ``pyproject.toml`` reads it, the package's face
re-exports it, and a process that stamps a trace or a record reads it here without
importing the package's face (CHANGELOG.md agrees)."""

__version__ = "0.5.0.dev0"
