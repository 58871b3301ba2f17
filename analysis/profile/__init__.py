"""Profiled programs (``podscale profile`` / ``podscale attach``): their records as frames
(:mod:`.load`), the step ledger and stragglers (:mod:`.steps`), the goodput ledger
(:mod:`.goodput`), what follows (:mod:`.summary`) and text (:mod:`.render`)."""
