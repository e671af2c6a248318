"""Old import path of :mod:`analysis.devtools.goldens` and :mod:`analysis.devtools.pairs`."""

from analysis.devtools.goldens import *  # noqa: F403
from analysis.devtools.goldens import __all__ as _goldens_all
from analysis.devtools.pairs import *  # noqa: F403
from analysis.devtools.pairs import __all__ as _pairs_all

__all__ = [*_goldens_all, *_pairs_all]
