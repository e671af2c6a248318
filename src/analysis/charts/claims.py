"""Figures of the claims chapter (15-claims)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analysis import outputs

#: Colour per claim verdict (claims chapter).
VERDICT_COLORS = {
    "supported": "#2a7f3f",
    "contradicted": "#b2182b",
    "mixes generations": "#e08214",
    "unverifiable": "#8c8c8c",
}


def plot_claim_verdicts(counts: pd.DataFrame) -> alt.Chart:
    """Bar chart of the article's claims per verdict (``claims.verdict_counts`` output)."""
    total = int(counts["claims"].sum())
    return (
        alt.Chart(counts)
        .mark_bar()
        .encode(
            x=alt.X("claims:Q", title="Claims (count)"),
            y=alt.Y("verdict:N", title=outputs.title("verdict"), sort=list(VERDICT_COLORS)),
            color=alt.Color(
                "verdict:N",
                scale=alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values())),
                legend=None,
            ),
            tooltip=["verdict:N", "claims:Q"],
        )
        .properties(
            title=f"The article's {total} claims, by verdict",
            description=(
                f"Horizontal bars: number of the seed article's {total} claims per verdict "
                "(supported, contradicted, mixes generations, unverifiable)."
            ),
            height=160,
        )
    )
