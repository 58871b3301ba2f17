"""Reading what runs leave: the columnar cache of raw records, the frames built from them,
profiler traces and compiled HLO."""
