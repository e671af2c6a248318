"""AMD Instinct vs NVIDIA GPU servers: a reproducible, parameterized decision report.

The package is the analysis library behind the report's notebooks. Modules are pure
functions over plain values and DataFrames (see ``docs/design.md`` in the shared folder);
only :mod:`analysis.data`, :mod:`analysis.ingest` and :mod:`analysis.report` touch files.
"""

import sys
from importlib import metadata

# jsonschema (imported by altair in every chapter kernel) loads the optional IRI-format
# checker `rfc3987-syntax` whenever it is installed (jupyter-events pulls it in); building
# its grammar costs 2-6 s per process on the reference machine, and nothing here validates
# IRI formats. A None entry makes `import rfc3987_syntax` fail, so jsonschema skips it.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

try:
    __version__ = metadata.version("gpu-decision-report")
except metadata.PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+unknown"
