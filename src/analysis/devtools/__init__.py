"""Developer tools: what builds, checks and times the report, never part of a report run.

* :mod:`analysis.devtools.goldens` the nbval goldens (``make goldens``, ``make nbval``);
* :mod:`analysis.devtools.pairs` the chapter / py:percent pairs (``make sync``);
* :mod:`analysis.devtools.bench` the speed targets (``make bench``);
* :mod:`analysis.devtools.validation` the model-validation printer
  (``python -m analysis validate-models``);
* :mod:`analysis.devtools.fixtures` project copies with breakable data for tests.

The product (``analysis.report``, ``analysis.render``, the modelling modules) never imports
this package; the command line imports it inside the developer commands only.
"""
