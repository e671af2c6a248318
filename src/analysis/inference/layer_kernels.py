"""Kernels a decode step launches per transformer layer, by architecture.

The serving shape's per-layer overhead (:class:`analysis.inference.ServingShape`,
``overhead_layer_s``) is fitted on the InferenceX DeepSeek-R1 sweeps, the only
latency-resolved data bundled. What it measures is the floor each of a layer's kernels
costs at small batches (launch and scheduling, a GEMM's prologue and epilogue, a
normalization's pass over a few rows), whatever their bytes and FLOPs. So it is charged per
kernel: a layer costs ``overhead_layer_s`` times its kernels over DeepSeek-R1's mean
layer's (:data:`REFERENCE_LAYER_KERNELS`), and every model, dense ones too, pays it in
proportion. Until 2026-12-06 the serving shape charged it to MoE layers only and a dense
model paid nothing per layer on the tiers' path, which left dense serving at high
interactivity 1.4-3.3x above InferenceX's published Llama 3.3 70B frontiers
(:mod:`analysis.inference.published_checks`). The deployment model's own per-layer
overhead (:mod:`analysis.inference.deployment_fit`, also fitted on DeepSeek-R1 only)
already reached every layer of every model; it is counted in the same unit now.

Counts per block, one decode step under CUDA/HIP graphs, from the engines' model code
(SGLang ``python/sglang/srt/models/deepseek_v2.py``: ``forward_absorb_prepare`` and
``DeepseekV2MoE``; vLLM ``vllm/model_executor/models/llama.py``: ``LlamaDecoderLayer``),
fusions that both vendors' stacks ship counted as one kernel. The tensor-parallel
all-reduces are not counted: :data:`analysis.inference.roofline.ALLREDUCE_LATENCY_S` charges
them.

* Attention, GQA or MHA (:data:`ATTENTION_KERNELS` ``"gqa"``): input RMSNorm, QKV GEMM,
  rotary embedding, KV-cache write, attention, output GEMM: 6.
* Attention, MLA absorbed for decode (``"mla"``): input RMSNorm, fused q_a / kv_a GEMM,
  q_a and kv_a RMSNorms, q_b GEMM, the W_UK batched GEMM, rotary embedding, latent-cache
  write, attention, the W_UV batched GEMM, output GEMM: 11.
* Dense MLP (:data:`DENSE_MLP_KERNELS`): post-attention RMSNorm, gate/up GEMM, SiLU x up,
  down GEMM: 4.
* Routed MoE (:data:`MOE_KERNELS`): post-attention RMSNorm, router GEMM, top-k, token
  alignment (permute), two grouped GEMMs, SiLU x up, combine: 8.
* Shared experts (:data:`SHARED_EXPERT_KERNELS`, if the model has any): gate/up GEMM,
  SiLU x up, down GEMM, add: 4.

So a Llama layer counts 10, a gpt-oss-120b or Mixtral layer 14, DeepSeek-R1's MoE layers
23 and its three leading dense layers 15 (22.61 on average, the unit). These are counts,
not fits, but choices: activation-quantization kernels (one per FP8 GEMM input where a
stack does not fuse them into the norm or activation) are not counted; counted, a Llama
layer has about 14 and DeepSeek-R1's about 28.6, a share of 0.49 instead of 0.44. A stack
that fuses more (TensorRT-LLM's fused MoE, AITER's fused RMSNorm-quantize) launches fewer
kernels, which the fitted per-kernel cost averages over.

Also a check, not a fit: InferenceX's published pages. An estimate of the same share
(0.45, "about 12 kernels against 27") was tried against them on 2026-12-06 and set aside
because it was not a count; this count lands on it (0.44 for a Llama layer), so the pages
are not a blind test of the share. What they show is in
:mod:`analysis.inference.published_checks`; the MLPerf effects in
:mod:`analysis.inference.frontier_validation`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Kernels of one layer's attention block, by kind (see the module docstring).
ATTENTION_KERNELS = {"gqa": 6.0, "mla": 11.0}
#: Kernels of a dense (SwiGLU) MLP block.
DENSE_MLP_KERNELS = 4.0
#: Kernels of a routed-MoE block (without shared experts).
MOE_KERNELS = 8.0
#: Kernels of the shared experts beside a routed-MoE block.
SHARED_EXPERT_KERNELS = 4.0
#: DeepSeek-R1's layers: 61, the first 3 with a dense MLP, the others routed MoE beside
#: one shared expert (its ``config.json``: ``num_hidden_layers``, ``first_k_dense_replace``,
#: ``n_shared_experts``; the models table's row).
_REFERENCE = {"layers": 61.0, "dense_layers": 3.0, "shared_experts": 1.0}


def layer_kernels(
    *, mla: bool, moe: bool, shared_experts: float = 0.0, dense_layers: float = 0.0, layers: float
) -> float:
    """Mean kernels per layer of one decode step (see the module docstring).

    ``dense_layers``: a MoE model's leading layers with a dense MLP instead
    (DeepSeek's ``first_k_dense_replace``); ``shared_experts``: any always-active experts
    beside the routed ones (0 = none).

    >>> layer_kernels(mla=False, moe=False, layers=80)
    10.0
    >>> round(layer_kernels(mla=True, moe=True, shared_experts=1, dense_layers=3, layers=61), 2)
    22.61
    """
    attention = ATTENTION_KERNELS["mla" if mla else "gqa"]
    if not moe:
        return attention + DENSE_MLP_KERNELS
    moe_block = MOE_KERNELS + (SHARED_EXPERT_KERNELS if shared_experts > 0 else 0.0)
    dense = float(np.clip(dense_layers, 0.0, layers))
    mlp = (dense * DENSE_MLP_KERNELS + (layers - dense) * moe_block) / layers
    return attention + mlp


#: The unit of ``overhead_layer_s``: DeepSeek-R1's mean layer (22.61 kernels), the model of
#: the sweeps it is fitted on, so that the fitted values keep their meaning there (61
#: layers) and every other model pays in proportion to its kernels.
REFERENCE_LAYER_KERNELS = layer_kernels(mla=True, moe=True, **_REFERENCE)


def overhead_layers(mp: dict[str, Any]) -> float:
    """The layers a model's step pays ``overhead_layer_s`` for, in reference layers.

    ``layers x layer_kernels / REFERENCE_LAYER_KERNELS`` from :func:`model_params
    <analysis.inference.roofline.model_params>`'s numbers: 61 for DeepSeek-R1's 61 (the
    unit), 35.4 for Llama 2 70B's 80, 22.3 for gpt-oss-120b's 36.
    """
    per_layer = layer_kernels(
        mla=bool(mp["mla"]),
        moe=mp["routed_b"] > 0,
        shared_experts=mp.get("shared_experts", 0.0),
        dense_layers=mp.get("dense_layers", 0.0),
        layers=mp["layers"],
    )
    return float(mp["layers"]) * per_layer / REFERENCE_LAYER_KERNELS
