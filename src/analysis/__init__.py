"""AMD Instinct vs NVIDIA GPU servers: a reproducible, parameterized decision report.

The package is the analysis library behind the report's notebooks. Modules are pure
functions over plain values and DataFrames (see ``docs/design.md`` in the shared folder);
only :mod:`analysis.data`, :mod:`analysis.ingest` and :mod:`analysis.report` touch files.
"""

from importlib import metadata

try:
    __version__ = metadata.version("gpu-decision-report")
except metadata.PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+unknown"
