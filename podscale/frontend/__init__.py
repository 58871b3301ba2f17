"""The front end: the ``podscale`` command line, its commands, suite files, progress
display and ``bench-self``."""
