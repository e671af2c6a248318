"""The InferenceX error floor: the serving model told more and more of its level.

:mod:`analysis.inference.attainability` gives the levels from the scored points
themselves (in-sample) and, in one row, carries configuration effects over from the
other cells only. These tests pin both rules on hand-made frames and the table's reading
on the bundled sweeps.
"""

import numpy as np
import pandas as pd
import pytest

from analysis.inference import attainability as at


def _points(rows):
    cols = ["accelerator", "precision", *at.TRANSFER_COLUMNS, "eta"]
    return pd.DataFrame(rows, columns=cols)


def _row(acc, framework, isl, eta):
    # One accelerator x precision cell per accelerator; every other column fixed.
    return [acc, "fp8", framework, isl, 1024, 8, 1, 0, eta]


def test_group_levels_are_each_group_s_geometric_median_and_twins_take_their_group_s():
    pts = _points(
        [
            _row("A", "s", 1024, 0.2),
            _row("A", "s", 1024, 0.8),
            _row("A", "t", 1024, 0.5),
        ]
    )
    twins = _points([_row("A", "s", 1024, np.nan), _row("A", "u", 1024, np.nan)])
    lev, lev_tw = at._group_levels(pts, twins, ("accelerator", "framework"))
    # Median of log 0.2 and log 0.8 is log 0.4 (the geometric mean of two).
    assert lev == pytest.approx([0.4, 0.4, 0.5])
    assert lev_tw[0] == pytest.approx(0.4)
    assert np.isnan(lev_tw[1])  # a group no point holds has no level to give


def test_transfer_recovers_a_configuration_effect_the_other_cells_share():
    # log eta = cell level + 0.5 for framework "t" and -0.3 for 8k prompts, in every cell.
    rows = []
    for acc, base in (("A", 0.2), ("B", 0.4), ("C", 0.3)):
        for fw, d_fw in (("s", 0.0), ("t", 0.5)):
            for isl, d_isl in ((1024, 0.0), (8192, -0.3)):
                rows.append(_row(acc, fw, isl, base * np.exp(d_fw + d_isl)))
    pts = _points(rows)
    lev, _ = at._transfer_levels(pts, pts.iloc[:0])
    # Each cell's own median level plus the shared effects, centred within the cell:
    # exactly the truth, the held-out cell's own effects never read.
    assert lev == pytest.approx(pts["eta"].to_numpy(), rel=1e-9)


def test_transfer_never_reads_the_held_out_cell_s_own_configuration_effects():
    # Cell A: framework "t" is 2x "s". Cell C: "t" is 0.5x "s" (its own stack behaves
    # differently). C's levels must follow A's effect, not its own: pooled over both
    # cells the effect would be none (the median of log 2 and -log 2).
    rows = []
    for acc, ratio in (("A", 2.0), ("C", 0.5)):
        rows += [_row(acc, "s", 1024, 0.3), _row(acc, "t", 1024, 0.3 * ratio)]
    pts = _points(rows)
    lev, _ = at._transfer_levels(pts, pts.iloc[:0])
    c = (pts["accelerator"] == "C").to_numpy()
    t_over_s = lev[c][1] / lev[c][0]
    assert t_over_s == pytest.approx(2.0)
    # ... and the cell keeps its own median level (centred adjustment).
    assert np.exp(np.median(np.log(lev[c]))) == pytest.approx(
        np.exp(np.median(np.log(pts.loc[c, "eta"]))), rel=1e-9
    )


def test_floor_note_reads_the_frame():
    labels = [label for label, _, _ in at.FLOOR_LEVELS]
    floor = pd.DataFrame(
        {
            "level": labels,
            "overall_median_ape_pct": [27.0, 28.0, 28.5, 27.5, 16.0, 7.0],
            "ratio_err_MI355X_pct": [24.0, 19.5, 25.0, 25.0, 29.0, 23.0],
        }
    )
    note = at.floor_note(floor)
    assert "28.0 %" in note
    assert "only when told each engine configuration's level" in note
    assert "19.5 %" in note
    floor["overall_median_ape_pct"] = 30.0
    assert "no row brings it under 20 %" in at.floor_note(floor)


@pytest.fixture(scope="module")
def floor():
    return at.attainable_floor()


def test_attainable_floor_rows_and_groups_on_the_bundled_sweeps(floor):
    assert floor["level"].tolist() == [label for label, _, _ in at.FLOOR_LEVELS]
    groups = floor.set_index("level")["groups"]
    assert groups.iloc[0] == 1
    assert groups.iloc[1] == groups.iloc[2] == 9  # the InferenceX accelerator x precision cells
    # Finer groupings give more levels: cell < cell x stack < configuration < sweep.
    assert groups.iloc[1] < groups.iloc[3] < groups.iloc[4] < groups.iloc[5]
    for col in ("AMD_median_ape_pct", "NVIDIA_median_ape_pct", "overall_median_ape_pct"):
        assert floor[col].notna().all() and (floor[col] >= 0).all()


def test_each_sweep_s_own_level_leaves_less_error_than_each_cell_s(floor):
    # The shape along a sweep is what the per-sweep row scores: it must be the best row,
    # and far below the cell row (the error is between configurations and run dates).
    by = floor.set_index("level")["overall_median_ape_pct"]
    assert by.iloc[5] == by.min()
    assert by.iloc[5] < 0.5 * by.iloc[1]
