"""An explanation's sentences beside what the model itself says of them (rcqa.faithfulness.sentences): per passage
sentence, how much deleting it lowers the answer's probability, ContextCite's surrogate weight, and the share the
explanation gives it at one layer; and, in sentences read from the chart's own data, which sentence matters most to
the model, which the explanation puts first, and how far their rankings agree at every layer."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rcqa.faithfulness.sentences import SentenceCheck, SentenceEvidence
from rcqa.faithfulness.sentences.agreement import read_sentences
from rcqa.figures.common import Chart, apply_layout, settings_line
from rcqa.figures.units import unit_labels
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution, overlaps

LABEL_CHARS = 48


def sentence_check_table(result: Attribution, evidence: SentenceEvidence, layer: int,
                         aggregation: Aggregation = DEFAULT_AGGREGATION) -> pd.DataFrame:
    """One row per passage sentence, in text order: its text, whether it holds the answer, how much deleting it
    lowers the answer's probability (probability_lost), the surrogate's weight (NaN without one), and the
    explanation's share of the layer's |attribution| over the passage at `layer` (NaN outside the explained
    window)."""
    ablation, surrogate = evidence.ablation, evidence.surrogate
    units = result.granularity("sentence", aggregation)
    position = {unit: n for n, unit in enumerate(units.passage_units())}  # the columns of shares()
    shares, read = units.shares()[layer] * 100, read_sentences(units, ablation.sentences)
    return pd.DataFrame([
        {"sentence": n + 1, "text": result.example.passage[start:end],
         "holds_answer": overlaps(start, end, *ablation.answer_chars), "probability_lost": float(ablation.drops[n]),
         "surrogate_weight": np.nan if surrogate is None else surrogate.weights[n],
         "share_pct": float(shares[position[read[n]]]) if n in read else np.nan,
         "layer_label": result.layers[layer]}
        for n, (start, end) in enumerate(ablation.sentences)])


def sentence_check_chart(result: Attribution, evidence: SentenceEvidence, layer: int,
                         aggregation: Aggregation = DEFAULT_AGGREGATION) -> Chart:
    """Sentences down the rows: the drop deleting each causes (left), the surrogate's weight (middle, where fitted)
    and the explanation's share at `layer` (right); the answer's sentence marked ▶."""
    table = sentence_check_table(result, evidence, layer, aggregation)
    labels = unit_labels(table.sentence, table.text, table.holds_answer, LABEL_CHARS)
    panels = [("probability_lost", "Probability lost when deleted"), ("surrogate_weight", "ContextCite weight (log-odds)"),
              ("share_pct", f"Share at {result.layers[layer]} (%)")]
    shown = [(column, title) for column, title in panels if table[column].notna().any()]
    figure = make_subplots(rows=1, cols=len(shown), shared_yaxes=True, subplot_titles=[t for _, t in shown])
    for col, (column, title) in enumerate(shown, start=1):
        figure.add_trace(go.Bar(x=table[column], y=labels, orientation="h", name=title, showlegend=False,
                                hovertemplate=f"%{{y}}<br>{title}: %{{x:.3f}}<extra></extra>"), row=1, col=col)
    figure.update_yaxes(autorange="reversed", type="category", automargin=True)
    apply_layout(figure, "What the model says of each sentence, beside the explanation",
                 f"{settings_line(result, aggregation, 0)} · ▶ holds the answer · the model re-answered with "
                 "sentences deleted", "", "", height=max(320, 26 * len(table) + 200),
                 subplot_titles=True)
    return Chart(f"sentence-check-{result.example.id}", table, figure)


def sentence_check_readings(table: pd.DataFrame, check: SentenceCheck, layers: list[str], layer: int,
                            method: str, surrogate_r2: float | None) -> list[str]:
    """In words, from the chart's table and the explanation's check: the context sentence whose deletion lowers the
    answer most, the one the explanation puts first at `layer` and what deleting it does against a random context
    sentence, the rankings' agreement, and the surrogate's fit. One question tells nothing apart: the sentence-check
    verb measures it over many, with paired intervals."""
    context = table[~table["holds_answer"]]
    if len(context) < 2:
        return [f"The passage has {len(context)} sentence{'s' * (len(context) != 1)} besides the answer's: there is "
                "no ranking of the context to check."]
    said = []
    lost = context["probability_lost"]
    most = context.loc[lost.idxmax()]
    said.append(f"Deleting sentence #{most['sentence']} lowers the answer's probability most among the context "
                f"sentences ({lost.max():+.3f}); a random context sentence lowers it by {lost.mean():+.3f} on "
                "average.")
    drop, rho, top1 = check.top_sentence_drop[layer], check.rho_leave_one_out[layer], check.top1_leave_one_out[layer]
    at = layers[layer]
    if drop is None:
        said.append(f"At {at}, {method} scores no context sentence.")
    else:
        top = context.loc[context["share_pct"].fillna(-1.0).idxmax()]
        said.append(f"At {at}, {method} puts sentence #{top['sentence']} first among the context sentences; deleting it "
                    f"lowers the answer's probability by {drop:+.3f}" + (" — the most of any." if top1 else "."))
    said.append(f"At {at}, its ranking of the {check.context_sentences} context sentences agrees with leaving each "
                f"out at Spearman's ρ = {rho:+.2f}." if rho is not None else
                f"At {at}, Spearman's ρ with leaving each out is undefined (fewer than 3 context sentences, or a side "
                "constant).")
    if surrogate_r2 is not None:
        with_surrogate = check.rho_surrogate[layer]
        said.append(f"ContextCite's surrogate fits its held-out ablations with R² = {surrogate_r2:.2f}"
                    + (f"; the ranking agrees with its weights at ρ = {with_surrogate:+.2f}." if with_surrogate
                       is not None else "."))
    said.append("One question tells no method apart from a random ranking: `python -m rcqa sentence-check` measures "
                "this over many questions, with paired intervals.")
    return said

