"""Datasets, comparison runners and plots for research scripts."""
