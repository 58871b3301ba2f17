"""Profiled programs (``podscale profile`` / ``podscale attach``): their records as frames
(:mod:`.load`), the step ledger and stragglers (:mod:`.steps`), the goodput ledger
(:mod:`.goodput`) and what follows (:mod:`.summary`). Their text is
:mod:`podscale.analysis.render.profiletext`; their Findings,
:mod:`podscale.analysis.verdicts.profilefindings`; their A/B and history verdicts,
:mod:`podscale.analysis.verdicts.profilecompare`."""
