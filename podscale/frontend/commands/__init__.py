"""The commands of ``podscale``: one module each, registering its own parser."""
