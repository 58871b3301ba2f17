"""What the models say about runs: A/B comparison, history across runs, Findings, compiled
programs, collective replay."""
