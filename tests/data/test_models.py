"""The LLM architecture table: coverage, pinned shapes, and the derived KV-cache sizes."""

import pandas as pd
import pytest

from analysis import data, ids


@pytest.fixture(scope="module")
def models() -> pd.DataFrame:
    return data.load_models().set_index("model")


def test_one_row_per_canonical_model(models):
    assert models.index.tolist() == list(ids.MODELS)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("llama2-70b", {"layers": 80, "hidden_size": 8192, "attention_heads": 64, "kv_heads": 8}),
        (
            "llama3.1-405b",
            {"layers": 126, "hidden_size": 16384, "attention_heads": 128, "kv_heads": 8},
        ),
        ("deepseek-r1", {"total_params_b": 671, "active_params_b": 37, "attention_type": "mla"}),
        ("gpt-oss-120b", {"experts": 128, "active_experts": 4, "attention_type": "gqa_sliding"}),
        ("mixtral-8x7b", {"experts": 8, "active_experts": 2}),
    ],
)
def test_pinned_shapes(models, model, expected):
    for column, value in expected.items():
        assert models.at[model, column] == value, column


def test_every_row_is_sourced(models):
    known = set(data.load_sources()["source_id"])
    assert set(models["source_id"]) | set(models["params_source_id"]) <= known
    assert models.loc["llama2-70b", "source_id"] == "hf-llama2-70b-config"


def test_dense_models_activate_everything(models):
    dense = models[models["experts"] == 1]
    assert (dense["active_params_b"] == dense["total_params_b"]).all()
    assert (models["active_params_b"] <= models["total_params_b"]).all()


def test_kv_bytes_gqa(models):
    # layers x kv_heads x head_dim x 2 (K and V) x 2 bytes (BF16)
    assert models.at["llama2-70b", "kv_bytes_per_token_bf16"] == 80 * 8 * 128 * 2 * 2
    assert models.at["llama3.1-405b", "kv_bytes_per_token_bf16"] == 126 * 8 * 128 * 2 * 2


def test_kv_bytes_mla_uses_the_latent_not_the_heads(models):
    # 61 layers x (512 latent + 64 rotary key) x 2 bytes; ~70 KB, not 61*128*128*4 = 4 MB.
    assert models.at["deepseek-r1", "kv_bytes_per_token_bf16"] == 61 * (512 + 64) * 2


def test_kv_bytes_sliding_window(models):
    # Only the 18 full-attention layers grow with context; 18 sliding layers hold 128 tokens.
    assert models.at["gpt-oss-120b", "kv_bytes_per_token_bf16"] == 18 * 8 * 64 * 2 * 2
    assert models.at["gpt-oss-120b", "kv_window_bytes_bf16"] == 18 * 128 * 8 * 64 * 2 * 2
    assert (models.drop(index="gpt-oss-120b")["kv_window_bytes_bf16"] == 0).all()


def test_get_model_unknown_id():
    assert data.get_model("llama2-70b")["layers"] == 80
    with pytest.raises(ValueError, match="Did you mean 'llama2-70b'"):
        data.get_model("llama-2-70b")
