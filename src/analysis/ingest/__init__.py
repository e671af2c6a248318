"""Turning upstream result formats (MLPerf summaries, ...) into the tables in ``data/``."""
