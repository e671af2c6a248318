"""Appendix helpers: cited sources, run information, the register, the glossary."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis.params import Scenario
from analysis.textsafe import html_text, markdown_text
from analysis.typst_tables import typst_string, typst_text


def cited_source_ids(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Every ``sources.csv`` id cited by the given tables, sorted.

    Reads columns ``source_id``, ``*_source_id``, ``*_source`` and ``*_sources`` (``;``-
    separated lists: the claims' ``fact_sources``, the models' ``checkpoint_sources``).
    """
    found: set[str] = set()
    for df in tables.values():
        for col in df.columns:
            if col == "source_id" or col.endswith(("_source_id", "_source", "_sources")):
                for v in df[col].dropna().astype(str):
                    found |= {s.strip() for s in v.split(";") if s.strip()}
    return sorted(found)


def cited_sources(sources: pd.DataFrame, cited: list[str]) -> pd.DataFrame:
    """The rows of the ``sources`` table whose ``source_id`` is in ``cited``, in table order.

    The original index is kept. Cited ids missing from ``sources`` (e.g. MLPerf result
    paths) have no row.

    >>> src = pd.DataFrame({"source_id": ["a", "b", "c"], "url": ["u1", "u2", "u3"]})
    >>> cited_sources(src, ["c", "a", "mlperf/x"])["source_id"].tolist()
    ['a', 'c']
    """
    return sources.loc[sources["source_id"].isin(cited)]


#: What the appendix's version table shows when the orchestrator passed no ``run_info``.
RUN_INFO_MISSING: dict[str, str] = {"version": "not run by the orchestrator"}


def run_info_table(run_info: Mapping[str, object] | None) -> pd.DataFrame:
    """The orchestrator's ``run_info`` as rows ``item``, ``value`` (values as strings).

    An empty or missing ``run_info`` (the notebook opened by hand) gives one row saying so
    (:data:`RUN_INFO_MISSING`).

    >>> run_info_table({"version": "v0001", "dirty": False})["value"].tolist()
    ['v0001', 'False']
    >>> run_info_table({}).to_numpy().tolist()
    [['version', 'not run by the orchestrator']]
    """
    return pd.DataFrame(
        [{"item": k, "value": str(v)} for k, v in (run_info or RUN_INFO_MISSING).items()]
    )


def appendix_key_results(
    register: pd.DataFrame, cited: list[str], run_info: Mapping[str, object] | None
) -> dict[str, object]:
    """The appendix's key results: ``assumptions``, ``sources_cited`` and ``version``.

    ``version`` is ``run_info["version"]`` as a string, ``""`` when the orchestrator passed
    none.

    >>> appendix_key_results(pd.DataFrame({"id": ["A-x"]}), ["s1", "s2"], {})
    {'assumptions': 1, 'sources_cited': 2, 'version': ''}
    """
    return {
        "assumptions": len(register),
        "sources_cited": len(cited),
        "version": str(run_info.get("version", "")) if run_info else "",
    }


def _esc(text: Any) -> str:
    s = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    return html_text(s)


def assumptions_register_html(
    register: pd.DataFrame, sources: pd.DataFrame, *, compact: bool = False, anchors: bool = True
) -> str:
    """The assumptions register as an HTML table, one anchor per entry.

    Each row starts with ``<a id="A-..."></a>`` (the TCO chapter links ``#A-...``) and links
    its source. ``compact`` leaves out the rationale and date (the PDF's version: one line
    per entry); ``anchors=False`` leaves out the anchors (a second, full copy of the
    register in the same page must not repeat the ids).
    """
    urls = dict(zip(sources["source_id"], sources["url"], strict=True))
    head = ["id", "parameter", "value", "range", "unit", "quality", "source", "date", "rationale"]
    if compact:
        head = head[:7]
    body = []
    for r in register.itertuples(index=False):
        rid = str(r.id) if str(r.id).startswith("A-") else f"A-{r.id}"
        url = urls.get(r.source_id)
        src = (
            f'<a href="{_esc(url)}">{_esc(r.source_id)}</a>'
            if isinstance(url, str)
            else _esc(r.source_id)
        )
        anchor = f'<a id="{_esc(rid)}"></a>' if anchors else ""
        cells = [
            f"{anchor}<code>{_esc(rid)}</code>",
            f"<code>{_esc(r.parameter)}</code>",
            f"{r.value:g}",
            f"{r.low:g} to {r.high:g}",
            _esc(r.unit),
            _esc(r.quality),
            src,
            _esc(r.value_date),
            _esc(r.rationale),
        ][: len(head)]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        '<table class="assumptions-register"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )


def sources_list_bundle(sources: pd.DataFrame) -> dict[str, str]:
    """The cited sources as a compact list: HTML (linked titles) and Typst (one paragraph).

    One entry per source, "id: title, publisher, read on date", in table order. The HTML is
    an ordered list (two columns on paper); the Typst form is a small-print paragraph, so
    about 90 sources take one page rather than five. All text is escaped.
    """
    items, typ = [], []
    for r in sources.itertuples(index=False):
        url = r.url if isinstance(r.url, str) and r.url else ""
        title = _esc(r.title)
        linked = f'<a href="{_esc(url)}">{title}</a>' if url else title
        items.append(
            f"<li><code>{_esc(r.source_id)}</code>: {linked}, {_esc(r.publisher)}, "
            f"read {_esc(r.accessed)}</li>"
        )
        t = typst_text(str(r.title))
        if url:
            t = f"#link({_typst_str(url)})[{t}]"
        typ.append(
            f"*{typst_text(str(r.source_id))}*: {t}, {typst_text(str(r.publisher))}, "
            f"read {typst_text(str(r.accessed))}"
        )
    html = '<ol class="sources-list">' + "".join(items) + "</ol>"
    typst = "#text(size: 7pt)[" + " · ".join(typ) + "]"
    fence = "`" * 4
    return {"text/html": html, "text/markdown": f"{fence}{{=typst}}\n{typst}\n{fence}\n"}


def _typst_str(text: str) -> str:
    return typst_string(text)


#: The glossary (appendix): every abbreviation and term the chapters use.
GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "TPOT",
        "Time per output token: the gap between two generated tokens of one request "
        "(ms). A tier's bound; 1000 / TPOT is the tokens per second each user sees.",
    ),
    (
        "TTFT",
        "Time to first token: from a request's arrival to its first output token "
        "(prefill plus queueing).",
    ),
    ("ISL / OSL", "Input / output sequence length: tokens in the prompt and in the answer."),
    (
        "APE",
        "Absolute percentage error of a prediction against a measured result; the "
        "models' error is quoted as the median APE out of sample.",
    ),
    (
        "MFU",
        "Model FLOPs utilization: the share of the GPU's peak FLOP/s that training's "
        "model arithmetic uses.",
    ),
    (
        "Roofline",
        "The bound a kernel cannot beat: bytes moved over memory bandwidth or "
        "FLOPs over peak compute, whichever is slower.",
    ),
    (
        "TP / PP / DP",
        "Tensor, pipeline and data parallelism: splitting each layer across GPUs, "
        "splitting the layers into stages, or replicating the model over batches.",
    ),
    (
        "FSDP",
        "Fully sharded data parallelism: data parallelism with weights, gradients and "
        "optimizer state sharded across the GPUs.",
    ),
    (
        "Paid vs useful GPU-hour",
        "A paid GPU-hour is what the owner or provider charges for; "
        "a useful one does work. Useful cost = paid cost / utilization: at 70% "
        "utilization, a token costs 1 / 0.7 of the paid hour.",
    ),
    ("Cost margin", "1 - AMD/NVIDIA cost: +25% means AMD costs a quarter less."),
    (
        "Break-even",
        "The value of one input (server price, rental quote, throughput, "
        "utilization) at which the two vendors cost the same, all else held.",
    ),
    (
        "Announced part",
        "A product with vendor figures but no shipping systems (projections, never winners).",
    ),
)


def glossary_bundle() -> dict[str, str]:
    """:data:`GLOSSARY` as a definition list (HTML) and a Markdown list (Typst path)."""
    html = (
        '<dl class="glossary">'
        + "".join(f"<dt>{_esc(t)}</dt><dd>{_esc(d)}</dd>" for t, d in GLOSSARY)
        + "</dl>"
    )
    md = "\n".join(f"- **{markdown_text(t)}**: {markdown_text(d)}" for t, d in GLOSSARY)
    return {"text/html": html, "text/markdown": md}


#: ISL/OSL at or above which prefill dominates a request's FLOPs (the model does the
#: arithmetic; this only decides which sentence describes it): prefill does ISL tokens of
#: work per request in one pass, decode OSL tokens, so at 4x the prompt's work is most of it.
PREFILL_HEAVY_RATIO = 4.0


def inference_reading_note(scenario: Scenario, mape_pct: float) -> str:
    """How to read the tier results, computed from the scenario (Markdown).

    The measured error bounds what counts as a clear win; the request shape (ISL/OSL)
    decides whether prefill or decode limits throughput, which says how much a looser
    TPOT bound can buy.
    """
    inf = scenario.inference
    ratio = inf.isl / inf.osl
    err = f"{mape_pct:.0f}%" if math.isfinite(mape_pct) else "not measured in this run"
    txt = (
        f"**Reading the result with its error.** The model's out-of-sample median error "
        f"(MLPerf rounds held out) is {err}; a tier margin smaller than that is not a clear "
        f"win. The model chooses tensor parallelism (1 to {inf.gpus_per_replica}) per tier "
        "and assumes continuous batching with chunked prefill; disaggregated prefill, "
        "speculative decoding, pipeline and expert parallelism are not modelled. "
    )
    if ratio >= PREFILL_HEAVY_RATIO:
        txt += (
            f"This scenario's requests carry {ratio:g} input tokens per output token "
            f"(ISL {inf.isl:,}, OSL {inf.osl:,}): prefill FLOPs bound throughput, so a looser "
            "TPOT bound adds little and the tiers differ less than a decode-only view suggests."
        )
    else:
        txt += (
            f"This scenario's requests carry {ratio:g} input tokens per output token "
            f"(ISL {inf.isl:,}, OSL {inf.osl:,}): decode dominates, so a looser TPOT bound "
            "buys larger batches and more tokens per GPU."
        )
    return txt
