"""Statistics and models over the frames: summaries and intervals, bandwidth, alpha-beta
fits, scaling models, ceilings, change points, skew, links, pair matrices and the wall-
time ledger."""
