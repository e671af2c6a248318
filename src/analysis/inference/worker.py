"""One serving worker's layout and what it holds and moves: the accounting of a worker.

Analytical decisions (the step times that use them are
:mod:`analysis.inference.deployments`'): a worker of ``g`` GPUs is tensor parallel (every
weight split ``g`` ways; GQA KV split by head, an MLA latent replicated on every rank) or
expert parallel with data-parallel attention (routed experts split ``g`` ways, dense and
attention weights whole on each GPU, each sequence's KV whole on the GPU that owns it).
Sliding-window layers (gpt-oss) attend to at most ``window`` tokens and hold a fixed
``window`` of KV per sequence, as in the roofline's step
(:func:`analysis.inference.roofline.model_params`: ``kv_tok_bf16`` is the full-attention
layers' KV per token, ``kv_window_bf16`` the sliding layers' per sequence).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from analysis.inference.roofline import BYTES_PER_PARAM, KV_BYTES, _kv_split, shared_weight_bytes


@dataclass(frozen=True)
class Layout:
    """One worker layout: ``gpus`` GPUs, expert parallel (``ep``) or tensor parallel."""

    gpus: int
    ep: bool

    @property
    def label(self) -> str:
        """Reader-facing name, e.g. ``EP16 + DP attention`` or ``TP8``."""
        return f"EP{self.gpus} + DP attention" if self.ep else f"TP{self.gpus}"


def link_bytes_s(hw: Mapping[str, float], gpus: float) -> tuple[float, str]:
    """Per-GPU one-direction bandwidth (bytes/s) of a ``gpus`` worker, and which fabric."""
    if gpus <= hw["domain"]:
        return hw["link_gbps"] * 1e9 / 2.0, "scaleup"
    return min(hw["link_gbps"] * 1e9 / 2.0, hw["scaleout_gbps"] * 1e9 / 8.0), "scaleout"


def resident_weights(
    mp: Mapping[str, float], precision: str, lay: Layout, hw: Mapping[str, float]
) -> tuple[float, float]:
    """(dense bytes per GPU, routed-expert bytes per GPU) of one worker's resident weights.

    ``hw`` says whose checkpoint (its BF16-kept dense weights, :func:`shared_weight_bytes`).
    """
    bpw = BYTES_PER_PARAM[precision]
    dense = float(shared_weight_bytes(mp, hw, precision))
    routed = mp["routed_b"] * 1e9 * bpw / lay.gpus
    return (dense if lay.ep else dense / lay.gpus), routed


def kv_bytes(mp: Mapping[str, float], precision: str, lay: Layout) -> tuple[float, float]:
    """KV bytes one GPU holds for each sequence it serves: (per token of context, fixed).

    A sequence of n tokens (n at least the window) holds ``n x first + second``; the
    second is the sliding-window layers' (zero for a model without them).

    >>> mp = {"kv_tok_bf16": 36864.0, "kv_window_bf16": 4718592.0, "mla": 0.0,
    ...       "kv_heads": 8.0}  # gpt-oss-120b: 18 full and 18 128-token window layers
    >>> kv_bytes(mp, "fp8", Layout(4, ep=False))  # fp8, split by KV head over TP4
    (4608.0, 589824.0)
    """
    scale = KV_BYTES[precision] / 2.0
    if not lay.ep:  # tensor parallel: GQA split by KV head, an MLA latent on every rank
        scale /= float(_kv_split(mp, lay.gpus, dp_attention=0.0))
    return mp["kv_tok_bf16"] * scale, mp["kv_window_bf16"] * scale
