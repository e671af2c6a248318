"""Old import path of :mod:`analysis.devtools.validation` (``validate-models``' printer)."""

from analysis.devtools.validation import *  # noqa: F403
from analysis.devtools.validation import __all__ as __all__
