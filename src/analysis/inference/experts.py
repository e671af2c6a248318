"""Routed experts: how much of a MoE layer one step reads, and how unevenly.

Uniform top-k routing throughout. :func:`expert_touched_fraction` is the share of a
layer's experts a batch of tokens touches, :func:`chunked_expert_reads` the same with
chunked prefill amortized, and :func:`ep_imbalance` the load of the busiest GPU when the
experts are spread expert-parallel, which a step waits for. Used by the serving roofline
(:mod:`analysis.inference.roofline`) and the decode model
(:mod:`analysis.inference.decode_model`).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import numpy.typing as npt


def expert_touched_fraction(route_frac: npt.ArrayLike, tokens: npt.ArrayLike) -> np.ndarray:
    """Fraction of a MoE layer's routed experts ``tokens`` tokens touch: 1 - (1 - k/E)^T.

    Uniform routing, ``route_frac`` = k/E (top-k of E experts); broadcasts.
    """
    r = np.asarray(route_frac, dtype=float)
    out: np.ndarray = 1.0 - np.power(1.0 - r, np.asarray(tokens, dtype=float))
    return out


def _expected_max_normal(n: npt.ArrayLike) -> np.ndarray:
    """Expected maximum of ``n`` standard normals (Blom's approximation; 0 for n = 1)."""
    m = np.maximum(np.asarray(n, dtype=float), 1.0)
    q = (m - 0.375) / (m + 0.25)
    z = np.array([NormalDist().inv_cdf(float(x)) for x in np.ravel(q)]).reshape(q.shape)
    out: np.ndarray = np.where(m > 1, z, 0.0)
    return out


def ep_imbalance(
    experts: npt.ArrayLike, touched: npt.ArrayLike, activations: npt.ArrayLike, ep: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """(weight, token) load of the busiest of ``ep`` expert-parallel GPUs over the mean.

    With expert parallelism each GPU holds ``E / ep`` whole experts and a step waits for
    the busiest. The distinct experts it reads are binomial (``E / ep`` trials at the
    ``touched`` fraction) and its routed token-activations about Poisson (``activations``
    in all, tokens x k, spread over ``ep`` GPUs), so the busiest of ``ep`` sits about
    ``z_ep`` standard deviations above the mean (:func:`_expected_max_normal`).
    Tensor-parallel experts (``ep`` = 1) are balanced: ones. Broadcasts.
    """
    n_experts = float(np.max(np.asarray(experts, dtype=float), initial=0.0))
    # More ranks than experts leaves some idle: the busiest still holds one expert.
    # A width not recorded (NaN) counts as tensor-parallel experts: balanced.
    e = np.clip(np.nan_to_num(np.asarray(ep, dtype=float), nan=1.0), 1.0, max(n_experts, 1.0))
    p = np.asarray(touched, dtype=float)
    act_all = np.asarray(activations, dtype=float)
    shape = np.broadcast_shapes(e.shape, p.shape, act_all.shape)
    if float(np.max(e, initial=1.0)) <= 1.0 or n_experts <= 0:
        return np.ones(shape), np.ones(shape)
    levels, inv = np.unique(e, return_inverse=True)
    z = _expected_max_normal(levels)[inv].reshape(e.shape)
    local = np.asarray(experts, dtype=float) / e
    mu = local * p
    spread = np.sqrt(np.maximum(local * p * (1.0 - p), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(mu > 0, np.minimum(local, mu + z * spread) / mu, 1.0)
        act = act_all / e
        # The busiest GPU cannot take more than every activation: at most ep x the mean.
        tok = np.where(act > 0, np.minimum((act + z * np.sqrt(act)) / act, e), 1.0)
    return np.broadcast_to(w, shape).copy(), np.broadcast_to(tok, shape).copy()


def expert_imbalance(
    experts: float, r: float, tokens: npt.ArrayLike, ep: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ep_imbalance` of ``tokens`` tokens routed uniformly (top-k of E: ``r`` = k/E).

    At concurrency 4 with 256 experts on 8 GPUs the busiest reads 1.7x the mean; at 64,
    1.1x.
    """
    t = np.asarray(tokens, dtype=float)
    return ep_imbalance(experts, expert_touched_fraction(r, t), t * r * experts, ep)


def chunked_expert_reads(
    route_frac: npt.ArrayLike, decode: npt.ArrayLike, joins: npt.ArrayLike, chunk: npt.ArrayLike
) -> np.ndarray:
    """Routed-weight fraction one decode step reads on average, prefill chunks amortized.

    ``decode`` sequences decode a token each step; ``joins`` prompt tokens enter per step in
    steady state and are prefilled in chunks of ``chunk`` tokens (chunked prefill:
    :data:`~analysis.inference.roofline.PREFILL_CHUNK_TOKENS`, or the whole prompt when it
    is shorter). A step that carries a chunk reads the experts of ``decode + chunk`` tokens
    once; the others read only the decode tokens' experts. So per step touched(decode) +
    (joins / chunk) x (touched(decode + chunk) - touched(decode)): the prompt tokens'
    experts are read once per chunk, not spread over every step (the touched fraction is
    concave in tokens, so spreading them would charge far more weight reads than an engine
    makes). With more than one chunk a step (``joins > chunk``: short answers, long prompts)
    the linear share would overshoot, so the fraction is capped at the spread value
    touched(decode + joins), which is then the smaller (and at most 1). The average enters
    the step's max(bytes, FLOPs) terms as one step, an approximation: a decode-only step is
    bandwidth-bound and a chunk step compute-bound, so the step time is slightly
    understated. FLOPs, KV reads and messages stay linear in tokens
    (:func:`~analysis.inference.roofline._terms`).
    Broadcasts.

    >>> round(float(chunked_expert_reads(8 / 256, 4, 4, 1024)), 4)  # DeepSeek, 1k/1k, b = 4
    0.1227
    >>> round(float(chunked_expert_reads(1 / 32, 20, 2 * 8192, 8192)), 4)  # two chunks a step
    1.0
    """
    b = np.asarray(decode, dtype=float)
    j = np.asarray(joins, dtype=float)
    c = np.maximum(np.asarray(chunk, dtype=float), 1.0)  # a chunk holds one token at least
    base = expert_touched_fraction(route_frac, b)
    with_chunk = expert_touched_fraction(route_frac, b + c)
    chunked = base + j / c * (with_chunk - base)
    out: np.ndarray = np.minimum(chunked, expert_touched_fraction(route_frac, b + j))
    return out
