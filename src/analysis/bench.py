"""Old import path of :mod:`analysis.devtools.bench` (``make bench``)."""

from analysis.devtools.bench import *  # noqa: F403
from analysis.devtools.bench import __all__ as __all__
