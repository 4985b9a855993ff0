"""Comparison grids, runners, the result store and reports for research scripts (datasets: :mod:`opttrees.datasets`)."""
