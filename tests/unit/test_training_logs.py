"""MLPerf Training run logs (``mlperf_training_logs``): the batch and steady rate each run used.

The model reads each submission's global batch and steady training rate from its run log;
these tests pin the join, the fallbacks and the out-of-sample bars issue 13 sets.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import data, training
from analysis.errors import DataValidationError
from analysis.inputs import Inputs
from analysis.tables.benchmarks import MLPERF_TRAINING_LOGS
from analysis.tables.benchmarks.mlperf import TRAINING_ROUND_DATES
from analysis.training.model import _benchmark


@pytest.fixture(scope="module")
def logs() -> pd.DataFrame:
    return data.load_table("mlperf_training_logs")


def test_every_log_row_is_a_submission_of_the_training_table(logs: pd.DataFrame) -> None:
    runs = data.load_mlperf_training().set_index(["round", "results_path"])
    key = pd.MultiIndex.from_frame(logs[["round", "results_path"]])
    assert key.is_unique
    assert key.isin(runs.index).all()
    matched = runs.loc[key]
    # the same submission: benchmark and accelerator count agree with the training table
    assert (matched["benchmark"].to_numpy() == logs["benchmark"].to_numpy()).all()
    assert (matched["total_accelerators"].to_numpy() == logs["total_accelerators"].to_numpy()).all()
    # the log read is a run log of that submission's results folder
    assert all(
        p.startswith(f"{r}/") for p, r in zip(logs["log_path"], logs["results_path"], strict=True)
    )
    assert (logs["document_date"] == logs["round"].map(TRAINING_ROUND_DATES)).all()


def test_a_wrong_round_date_is_refused(logs: pd.DataFrame) -> None:
    bad = logs.head(3).copy()
    bad.loc[bad.index[0], "document_date"] = "2020-01-01"
    with pytest.raises(DataValidationError, match="row 2: document_date must be 2024-06-12"):
        MLPERF_TRAINING_LOGS.validate(bad)


def test_rows_take_the_logged_batch_and_rate_by_key(logs: pd.DataFrame) -> None:
    rows = training.mlperf_rows()
    # the join itself: a key merge of the rows with the logs table gives the same values
    facts = logs[["round", "results_path", "global_batch_seqs", "steady_samples_per_s"]]
    merged = rows[["round", "results_path"]].merge(
        facts, on=["round", "results_path"], how="left", validate="m:1"
    )
    have = merged["global_batch_seqs"].notna().to_numpy()
    assert have.sum() >= 120
    np.testing.assert_array_equal(
        rows["batch_seqs"].to_numpy()[have], merged["global_batch_seqs"][have]
    )
    np.testing.assert_array_equal(
        rows["steady_samples_per_s"].to_numpy(), merged["steady_samples_per_s"].to_numpy()
    )
    assert (rows["batch_basis"].to_numpy() == np.where(have, "logged", "policy")).all()
    # NVIDIA's 512-GPU GB200 LoRA run used 64 sequences, as its log states
    tyche = rows.loc[
        (rows["results_path"] == "NVIDIA/results/tyche_ngpu512_ngc25.04_nemo/llama2_70b_lora")
    ]
    assert tyche["batch_seqs"].tolist() == [64.0]
    # rows without a log row keep the policy
    policy = rows.loc[~have]
    want = [
        training.mlperf_batch_size(b, n)[0]
        for b, n in zip(policy["benchmark"], policy["n_gpus"], strict=True)
    ]
    assert len(policy) and policy["batch_seqs"].tolist() == want


def test_the_lora_policy_follows_the_logged_batches(logs: pd.DataFrame) -> None:
    # one sequence per eight GPUs, at least 8: what most LoRA logs state
    lora = logs.loc[logs["benchmark"] == "llama2_70b_lora"]
    policy = training.mlperf_batch_size("llama2_70b_lora", lora["total_accelerators"].to_numpy())
    assert (policy == lora["global_batch_seqs"].to_numpy()).mean() > 0.9


def test_observations_use_one_rate_basis_per_benchmark() -> None:
    obs = training.training_observations()
    rows = training.one_rate_basis(training.mlperf_rows())
    ml = obs.loc[obs["origin"] == "mlperf"].reset_index(drop=True)
    assert len(ml) == len(rows)
    # LoRA and 405B runs print a training rate: only those rows, at that rate
    basis = rows.groupby("benchmark")["rate_basis"].agg(set).to_dict()
    assert basis["llama2_70b_lora"] == {"steady"} and basis["llama31_405b"] == {"steady"}
    assert basis["gpt3"] == {"time-to-train"}
    seq = np.array([_benchmark(b).seq_len for b in rows["benchmark"]], dtype=float)
    steady = rows["steady_samples_per_s"].to_numpy() * seq / rows["n_gpus"].to_numpy()
    have = (rows["rate_basis"] == "steady").to_numpy()
    np.testing.assert_allclose(ml["measured_tps"].to_numpy()[have], steady[have])
    # AMD's MI300X LoRA run: 2.028169 samples/s (median of blocks 2-5) x 8,192 / 8 GPUs
    amd = ml.loc[(ml["accelerator"] == "MI300X") & (ml["n_gpus"] == 8) & (ml["round"] == "v5.0")]
    assert 2076.8 in amd["measured_tps"].round(1).tolist()
    # GPT-3: the reference tokens at the run's batch over the time to train
    tokens = np.array(
        [
            training.mlperf_tokens(b, s)[0]
            for b, s in zip(rows["benchmark"], rows["batch_seqs"], strict=True)
        ]
    )
    ttt = tokens / (rows["measured_min"].to_numpy() * 60.0) / rows["n_gpus"].to_numpy()
    np.testing.assert_allclose(ml["measured_tps"].to_numpy()[~have], ttt[~have])
    # a run of a steady-rate benchmark whose log prints no rate is not fitted at all
    all_rows = training.mlperf_rows()
    steady_benchmarks = all_rows["benchmark"].isin(["llama2_70b_lora", "llama31_405b"])
    dropped = all_rows.loc[steady_benchmarks & all_rows["steady_samples_per_s"].isna()]
    assert len(dropped) and len(all_rows) - len(rows) == len(dropped)


def test_an_mlperf_frame_without_results_paths_keeps_the_policy() -> None:
    mt = data.load_mlperf_training().drop(columns="results_path")
    rows = training.mlperf_rows(mt)
    assert (rows["batch_basis"] == "policy").all()
    assert rows["steady_samples_per_s"].isna().all()


def test_the_logs_are_an_input_a_small_inputs_set_must_name() -> None:
    full = data.load_inputs()
    tables = {n: full.table(n) for n in ("sources", "accelerators", "accelerator_values")}
    tables |= {"models": full.table("models"), "mlperf_training": full.table("mlperf_training")}
    with pytest.raises(KeyError, match="mlperf_training_logs"):
        training.mlperf_rows(inputs=Inputs.from_tables(tables))


@pytest.fixture(scope="module")
def pred() -> pd.DataFrame:
    return training.validate_training_model()


def _scheme(pred: pd.DataFrame, scheme: str) -> pd.DataFrame:
    s = training.validation_scheme_summary(pred)
    return s.loc[s["scheme"] == scheme].set_index("group")


@pytest.mark.parametrize(
    "scheme", ["mlperf: leave one vendor x benchmark out", "mlperf: leave one GPU count out"]
)
def test_mlperf_leave_one_out_meets_the_issue_13_per_vendor_bar(
    pred: pd.DataFrame, scheme: str
) -> None:
    # issue 13: median APE <= 12 % for each vendor
    s = _scheme(pred, scheme)
    assert s.loc["AMD", "median_abs_err_pct"] <= 12.0
    assert s.loc["NVIDIA", "median_abs_err_pct"] <= 12.0


def _ratio(pred: pd.DataFrame, scheme: str) -> pd.Series:
    r = training.ratio_error_summary(training.ratio_errors(pred)).set_index("scheme")
    assert r.loc[scheme, "pairs"] >= 10
    return r.loc[scheme]


def test_leave_one_gpu_count_out_meets_the_issue_13_ratio_bar(pred: pd.DataFrame) -> None:
    # issue 13: AMD/NVIDIA ratio error <= 8 %
    assert _ratio(pred, "mlperf: leave one GPU count out")["median_abs_ratio_err_pct"] <= 8.0


def test_leave_one_vendor_x_benchmark_out_meets_the_issue_13_ratio_bar(
    pred: pd.DataFrame,
) -> None:
    # issue 13: AMD/NVIDIA ratio error <= 8 %. 6.4 % over 15 pairs since the CP ring's and
    # the pipeline's point-to-point hops take one Infinity Fabric link on AMD's mesh
    # (8.1 % before: the fold predicted MI300X LoRA on 8-32 GPUs at CP8 with the ring
    # hidden, flat per GPU, against a measured 27 % fall at 32 GPUs)
    scheme = "mlperf: leave one vendor x benchmark out"
    assert _ratio(pred, scheme)["median_abs_ratio_err_pct"] <= 8.0


def test_published_rows_held_out_meet_the_issue_13_bars(pred: pd.DataFrame) -> None:
    # issue 13: within 15 % median, signed median within +-8 % (no systematic bias)
    s = _scheme(pred, "published: leave one source out")
    assert s.loc["overall", "median_abs_err_pct"] <= 15.0
    assert abs(s.loc["overall", "median_err_pct"]) <= 8.0
