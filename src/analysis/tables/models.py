"""LLM architectures: the shapes the inference and training models need, one row per model.

Analytical decisions taken here:

* Values come from each model's Hugging Face ``config.json`` (shapes) and its paper or
  model card (parameter counts), cited per row.
* Dense models have ``experts = active_experts = 1``; ``active_params_b`` is then the total.
* **KV cache.** ``attention_type`` says which formula applies; the loader derives
  ``kv_bytes_per_token_bf16`` from it (see :func:`analysis.data.load_models`):
  ``gqa``/``mha``: ``layers x kv_heads x head_dim x 2 (K and V) x 2 bytes``;
  ``mla`` (DeepSeek): one compressed latent of ``kv_lora_rank + qk_rope_head_dim`` per layer;
  ``gqa_sliding``: only the full-attention layers grow with context, the
  ``sliding_window_layers`` hold at most ``sliding_window`` tokens each.
* ``context_length`` is the longest context the released model supports.
* **Served checkpoints.** ``fp8_bf16_params_b``, ``fp4_bf16_params_nvidia_b`` and
  ``fp4_bf16_params_amd_b``: the dense parameters the vendors' published FP8 and FP4
  checkpoints keep in BF16 (DeepSeek-R1: the output head and router in every checkpoint,
  all MLA projections in AMD's MXFP4, all but ``wo`` in NVIDIA's NVFP4 v2), counted from
  the config shapes (the row's note shows the sums), cited in ``checkpoint_sources``.
  Empty = every weight in the format. The inference model reads them at 2 bytes
  (:func:`analysis.inference.roofline.shared_weight_bytes`).
"""

from __future__ import annotations

import pandas as pd

from analysis import ids
from analysis.schema import Col, Table, csv_rows, known_id_check
from analysis.tables.sources import source_id_col

ATTENTION_TYPES: tuple[str, ...] = ("mha", "gqa", "gqa_sliding", "mla")


def _consistent_shapes(df: pd.DataFrame) -> list[str]:
    problems = []
    checks = {
        "active_params_b": df["active_params_b"] > df["total_params_b"],
        "active_experts": df["active_experts"] > df["experts"],
        "kv_heads": df["kv_heads"] > df["attention_heads"],
        "sliding_window_layers": df["sliding_window_layers"].fillna(0) > df["layers"],
        "dense_layers": df["dense_layers"].fillna(0) > df["layers"],
        **{
            c: df[c].fillna(0) > df["total_params_b"]
            for c in ("fp8_bf16_params_b", "fp4_bf16_params_nvidia_b", "fp4_bf16_params_amd_b")
        },
    }
    for col, bad in checks.items():
        problems += [
            f"row {r}, column {col!r}: larger than its total" for r in csv_rows(bad.fillna(False))
        ]
    dense = df["experts"] <= 1
    for col in ("dense_layers", "shared_experts"):
        problems += [
            f"row {r}, column {col!r}: a dense model (experts = 1) has no MoE layers; "
            "leave it empty"
            for r in csv_rows(dense & df[col].notna())
        ]
    mla_missing = (df["attention_type"] == "mla") & (
        df["kv_lora_rank"].isna() | df["qk_rope_head_dim"].isna()
    )
    problems += [
        f"row {r}, column 'kv_lora_rank': attention_type 'mla' needs kv_lora_rank and "
        "qk_rope_head_dim"
        for r in csv_rows(mla_missing)
    ]
    sliding_missing = (df["attention_type"] == "gqa_sliding") & (
        df["sliding_window"].isna() | df["sliding_window_layers"].isna()
    )
    problems += [
        f"row {r}, column 'sliding_window': attention_type 'gqa_sliding' needs "
        "sliding_window and sliding_window_layers"
        for r in csv_rows(sliding_missing)
    ]
    return problems


MODELS = Table(
    name="models",
    path="models/models.csv",
    description=(
        "One row per LLM: parameter counts and the architecture shapes the performance "
        "models use. `analysis.data.load_models()` adds `kv_bytes_per_token_bf16` (KV cache "
        "per token of context, all layers, BF16) and `kv_window_bytes_bf16` (fixed KV of "
        "sliding-window layers per sequence)."
    ),
    key=("model",),
    columns=(
        Col("model", "str", "Canonical model id (`analysis.ids.MODELS`)."),
        Col("name", "str", "Model name as released."),
        # Largest open models: 671 B (DeepSeek-R1) to ~1,000 B (Kimi K2); 10 T is 10x beyond.
        Col("total_params_b", "float", "Total parameters.", unit="billions", gt=0, le=10_000),
        # At most the total (<= 10,000 B, see total_params_b).
        Col(
            "active_params_b",
            "float",
            "Parameters active per token (MoE); = total if dense.",
            unit="billions",
            gt=0,
            le=10_000,
        ),
        # 32 (Llama 3.1 8B) to 126 (Llama 3.1 405B).
        Col("layers", "int", "Transformer layers (blocks).", gt=0, le=1_000),
        # 2,880 (gpt-oss-120b) to 16,384 (Llama 3.1 405B); 8x headroom.
        Col("hidden_size", "int", "Model (residual stream) width.", gt=0, le=131_072),
        # 32 to 128 heads; 8x headroom.
        Col("attention_heads", "int", "Query heads per layer.", gt=0, le=1_024),
        # 8 to 128 (never more than the query heads).
        Col(
            "kv_heads",
            "int",
            "Key/value heads per layer (GQA groups); for MLA the decompressed head count.",
            gt=0,
            le=1_024,
        ),
        # 64 to 128 (192 with DeepSeek's RoPE part); 1,024 is 8x.
        Col(
            "head_dim",
            "int",
            "Dimension per head (MLA: the non-rotary query/key and value dimension).",
            gt=0,
            le=1_024,
        ),
        # 32,000 (Llama 2) to 201,088 (gpt-oss); Gemma's 256k fits 4x.
        Col("vocab_size", "int", "Vocabulary size.", unit="tokens", gt=0, le=1_048_576),
        # 4,096 (Llama 2) to 163,840; Llama 4 Scout's 10 M tokens is the longest released.
        Col(
            "context_length",
            "int",
            "Longest supported context.",
            unit="tokens",
            gt=0,
            le=10_000_000,
        ),
        # 1 (dense) to 256 routed (DeepSeek-R1); 16x headroom.
        Col("experts", "int", "Routed experts per MoE layer; 1 = dense.", ge=1, le=4_096),
        # 1 to 8 routed experts per token; at most the experts.
        Col("active_experts", "int", "Routed experts per token; 1 = dense.", ge=1, le=1_024),
        # 3 (DeepSeek-R1's first_k_dense_replace); at most the layers (<= 1,000).
        Col(
            "dense_layers",
            "int",
            "MoE only: leading layers with a dense MLP instead of experts; empty = none.",
            required=False,
            ge=0,
            le=1_000,
        ),
        # 1 (DeepSeek-R1's n_shared_experts); 64x headroom.
        Col(
            "shared_experts",
            "int",
            "MoE only: always-active shared experts per MoE layer; empty = none.",
            required=False,
            ge=0,
            le=64,
        ),
        Col(
            "attention_type",
            "str",
            "KV-cache layout: `mha`, `gqa`, `gqa_sliding` "
            "(GQA with some sliding-window layers), `mla` (multi-head latent attention).",
            isin=ATTENTION_TYPES,
        ),
        # 512 (DeepSeek-V3/R1 MLA); 32x headroom.
        Col(
            "kv_lora_rank",
            "int",
            "MLA only: width of the cached KV latent.",
            required=False,
            gt=0,
            le=16_384,
        ),
        # 64 (DeepSeek-V3/R1).
        Col(
            "qk_rope_head_dim",
            "int",
            "MLA only: width of the cached rotary key.",
            required=False,
            gt=0,
            le=1_024,
        ),
        # 128 tokens (gpt-oss); at most a context length (<= 10 M).
        Col(
            "sliding_window",
            "int",
            "gqa_sliding only: window of the sliding layers.",
            unit="tokens",
            required=False,
            gt=0,
            le=10_000_000,
        ),
        # 18 (gpt-oss-120b); at most the layers (<= 1,000).
        Col(
            "sliding_window_layers",
            "int",
            "gqa_sliding only: how many layers use the sliding window.",
            required=False,
            gt=0,
            le=1_000,
        ),
        # Dense parameters a served checkpoint keeps in BF16 (at most the model's total).
        Col(
            "fp8_bf16_params_b",
            "float",
            "Parameters the FP8 checkpoint keeps in BF16 (output head, router); empty = none.",
            unit="B params",
            required=False,
            ge=0,
            le=10_000,
        ),
        Col(
            "fp4_bf16_params_nvidia_b",
            "float",
            "Parameters NVIDIA's FP4 (NVFP4) checkpoint keeps in BF16; empty = none.",
            unit="B params",
            required=False,
            ge=0,
            le=10_000,
        ),
        Col(
            "fp4_bf16_params_amd_b",
            "float",
            "Parameters AMD's FP4 (MXFP4) checkpoint keeps in BF16; empty = none.",
            unit="B params",
            required=False,
            ge=0,
            le=10_000,
        ),
        Col(
            "checkpoint_sources",
            "str",
            "`;`-separated `sources.csv` ids behind the BF16-kept parameter counts.",
            required=False,
        ),
        source_id_col("Source of the architecture shapes (config.json)."),
        source_id_col("Source of the parameter counts (paper/model card).", "params_source_id"),
        Col("note", "str", "Caveats.", required=False),
    ),
    checks=(known_id_check("model", "model", ids.MODELS), _consistent_shapes),
)

TABLES = (MODELS,)
