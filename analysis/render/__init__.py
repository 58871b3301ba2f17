"""People-facing output: terminal tables, report tables, figures, report sections, the
HTML/Markdown report and asv results."""
