"""Key results: rounding, the MIME bundle, extraction from an executed notebook."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis import results


def test_round_sig() -> None:
    assert results.round_sig(1234.5678) == 1235.0
    assert results.round_sig(0.000123456) == 0.0001235
    assert results.round_sig(0.0) == 0.0


def test_normalize_scalars() -> None:
    assert results.normalize(np.float64(2.0 / 3.0)) == 0.6667
    assert results.normalize(np.int64(3)) == 3
    assert results.normalize(True) is True
    assert results.normalize("AMD") == "AMD"
    assert results.normalize(math.nan) is None
    with pytest.raises(TypeError):
        results.normalize([1, 2])


def test_bundle_and_extract() -> None:
    bundle = results.key_results_bundle("40-tco", {"tier0_cheapest": "MI300X", "x": 1.23456})
    assert bundle[results.MIME] == {
        "chapter": "40-tco",
        "results": {"tier0_cheapest": "MI300X", "x": 1.235},
    }
    assert "tier0_cheapest" in bundle["text/plain"] and "<table" in bundle["text/html"]
    nb = {
        "cells": [
            {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": bundle}]},
            {"cell_type": "markdown"},
        ]
    }
    assert results.extract_key_results(nb) == {"40-tco": {"tier0_cheapest": "MI300X", "x": 1.235}}
