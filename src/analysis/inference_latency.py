"""Compatibility name for :mod:`analysis.inference.latency` and its validation.

The InferenceX shape fit lives in :mod:`analysis.inference.latency`, its held-out validation
in :mod:`analysis.inference.latency_validation` and that validation's diagnostics in
:mod:`analysis.inference.latency_diagnostics`; this module re-exports all three.
"""

from analysis import inference as _inference  # noqa: F401 - registers the default inputs
from analysis.inference.latency import *  # noqa: F403
from analysis.inference.latency import _codes, _load  # noqa: F401
from analysis.inference.latency_diagnostics import *  # noqa: F403
from analysis.inference.latency_validation import *  # noqa: F403
