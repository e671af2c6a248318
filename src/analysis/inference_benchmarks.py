"""Compatibility name for :mod:`analysis.inference.benchmarks` (the MLPerf benchmark table)."""

from analysis.inference.benchmarks import *  # noqa: F403
