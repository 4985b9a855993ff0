"""Fast heuristics: greedy trees, local search, pruning, forests (warm starts and stand-alone methods)."""
