"""How layers compare: completeness per layer, the JSD matrix, two layers side by side, token-vector maps."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rcqa.analysis.projection import GROUPS, Projection, project, token_groups
from rcqa.analysis.registry import Inputs, register_figure
from rcqa.analysis.similarity import LayerSimilarity, describe, jsd_matrix
from rcqa.analysis.words import passage_distribution
from rcqa.attribution.layerwise import layerwise_method
from rcqa.figures.common import (
    COMPLETENESS_WARNING,
    CONSERVATION_THRESHOLD,
    Chart,
    apply_layout,
    escape_label,
    largest,
    settings_line,
    word_ticks,
)
from rcqa.figures.words import word_table
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution, Completeness

_SMALLEST_ERROR_PCT = 1e-6  # floor of the log-scale completeness chart (an exact 0 has no logarithm)


def completeness(result: Attribution, threshold: float = COMPLETENESS_WARNING) -> Chart:
    """IG's check per layer: do the attributions add up to F(input) − F(baseline)? On a log scale, since good
    errors are tiny. For AttnLRP, its conservation per layer (conservation). A method that promises no completeness
    (gradient × activation) draws its gap as information: no warning colour, no threshold, no advice."""
    if any(c.kind == "conservation" for c in result.completeness):
        return conservation(result)
    method = layerwise_method(result.settings.method)
    data = _checks(result, threshold if method.completeness_remedy else None)
    figure = go.Figure()
    for name, part in data.groupby("target", sort=False):
        figure.add_bar(x=part.layer_label, y=part.relative_error_pct.clip(lower=_SMALLEST_ERROR_PCT), name=name,
                       text=[f"{error:.2g}% · {steps} step{'s' * (steps != 1)}"
                             for error, steps in zip(part.relative_error_pct, part.steps)],
                       textposition="outside", showlegend=len(result.targets) > 1, marker_color=part.colour,
                       customdata=np.stack([part.delta, part.attribution_sum], axis=-1),
                       hovertemplate=("%{x}: %{text}<br>F(input) − F(baseline) = %{customdata[0]:.4f}"
                                      "<br>Σ attributions = %{customdata[1]:.4f}<extra></extra>"))
    measured = "Relative error |Σ attributions − ΔF| / |ΔF| with ΔF = F(input) − F(baseline)"
    if method.completeness_remedy:
        _threshold_line(figure, data, threshold, f"warning above {100 * threshold:g}%")
        subtitle = f"{measured}; red bars: {method.completeness_remedy}"
    else:
        _log_axis(figure, data, None)
        subtitle = (f"{measured} · {method.label} promises no completeness: the bars say how far its scores are from "
                    "adding up, for information (no setting closes the gap)")
    apply_layout(figure, "Completeness per layer: do the attributions add up?", subtitle, "Layer (output of)",
                 "Relative completeness error (%, log scale)", height=400)
    figure.update_layout(legend={"orientation": "h", "y": -0.25, "x": 1, "xanchor": "right"})
    return Chart(f"completeness-{result.example.id}", data, figure)


def conservation(result: Attribution, threshold: float = CONSERVATION_THRESHOLD) -> Chart:
    """AttnLRP's conservation per layer: does the relevance add up to what entered at the target (logits ⊙
    ∂F/∂logits)? Red above `threshold` of it: the rules absorbed more than that above the layer (the ledger,
    conservation_ledger, says which). A result written before the entering relevance was kept is checked against
    F, and says so."""
    data = _checks(result, threshold)
    figure = go.Figure()
    for name, part in data.groupby("target", sort=False):
        figure.add_bar(x=part.layer_label, y=part.relative_error_pct.clip(lower=_SMALLEST_ERROR_PCT), name=name,
                       text=[f"{error:.2g}%" for error in part.relative_error_pct], textposition="outside",
                       showlegend=len(result.targets) > 1, marker_color=part.colour,
                       customdata=np.stack([part.expected, part.attribution_sum, part.f_input], axis=-1),
                       hovertemplate=("%{x}: %{text}<br>entering relevance = %{customdata[0]:.4f}"
                                      "<br>Σ relevance = %{customdata[1]:.4f}<br>F = %{customdata[2]:.4f}"
                                      "<extra></extra>"))
    _threshold_line(figure, data, threshold, f"threshold: {100 * threshold:g}% of the entering relevance")
    measured = ("Relative error |Σ relevance − entering| / |entering|, entering = logits ⊙ ∂F/∂logits, the relevance "
                "the target hands the rules (F for a sum of logits; z − E_p[z] for a log-probability, whose F is that "
                "− H(p))" if "entering" in data else
                "Relative error |Σ relevance − F| / |F|: this result was saved before the entering relevance was kept "
                "(explain it again for the ledger)")
    apply_layout(figure, "AttnLRP's conservation per layer: does the relevance add up to what entered?",
                 f"{measured} · red above {100 * threshold:g}% of it: the rules absorbed more than that above the layer "
                 "(the ledger below says which) · docs: AttnLRP", "Layer (output of)",
                 "Relative conservation error (%, log scale)", height=400)
    figure.update_layout(legend={"orientation": "h", "y": -0.25, "x": 1, "xanchor": "right"})
    return Chart(f"conservation-{result.example.id}", data, figure)


def _checks(result: Attribution, threshold: float | None) -> pd.DataFrame:
    """One row per check: its fields, its error in %, and its bar's colour (red above the threshold; one neutral
    colour where there is no threshold to judge by)."""
    def colour(check: Completeness) -> str:
        return _NEUTRAL if threshold is None else _FAIL if check.relative_error > threshold else _PASS

    return pd.DataFrame([{"layer": c.layer, "layer_label": result.layers[c.layer], **c.to_dict(),
                          "expected": c.expected, "relative_error_pct": 100 * c.relative_error,
                          "colour": colour(c)} for c in result.completeness])


def _threshold_line(figure: go.Figure, data: pd.DataFrame, threshold: float, name: str) -> None:
    """The threshold as a dashed line named in the legend, and the log-scale axis that shows it and every bar."""
    figure.add_hline(y=100 * threshold, line_dash="dash", line_color=_FAIL)
    figure.add_scatter(x=[None], y=[None], mode="lines", line={"dash": "dash", "color": _FAIL}, name=name)
    _log_axis(figure, data, threshold)


def _log_axis(figure: go.Figure, data: pd.DataFrame, threshold: float | None) -> None:
    """The log-scale axis that shows every bar, and the threshold where there is one."""
    highest = float(data.relative_error_pct.max())
    top = int(np.ceil(np.log10(highest if threshold is None else max(highest, 100 * min(threshold, 1.0))))) + 1
    powers = [10.0 ** p for p in range(int(np.log10(_SMALLEST_ERROR_PCT)), top + 1, 2)]
    figure.update_yaxes(type="log", range=[np.log10(_SMALLEST_ERROR_PCT), top], tickvals=powers,
                        ticktext=[f"{np.format_float_positional(p, trim='-')}%" for p in powers])


# the ledger's columns: what each absorbing rule of rcqa.attribution.lrp.rules took, in words
ABSORBING_RULES = {"softmax": "softmax rule", "layer_norm": "LayerNorm biases", "linear": "linear biases",
                   "attention_bias": "masks and position biases"}


def _ledger_row(check: Completeness, label: str, entering: float) -> dict:
    """One layer's row of the ledger, as % of the relevance entering at the target."""
    absorbed, unaccounted = check.absorbed, check.unaccounted
    assert absorbed is not None and unaccounted is not None  # conservation_ledger keeps the checks with a ledger
    return {"layer": check.layer, "layer_label": label, "relevance_pct": 100 * check.attribution_sum / entering,
            "conservation_error_pct": 100 * check.relative_error,
            **{f"{kind}_pct": 100 * absorbed.get(kind, 0.0) / entering for kind in ABSORBING_RULES},
            "unaccounted_pct": 100 * unaccounted / entering}


def conservation_ledger(result: Attribution, target: int = 0,
                        threshold: float = CONSERVATION_THRESHOLD) -> Chart | None:
    """AttnLRP's ledger of one target, per layer, as shares of the relevance entering at the target (signed): Σ
    relevance there, the conservation error, what each absorbing rule took between the logits and the layer, and
    what the ledger leaves unaccounted for (entering − Σ absorbed − Σ relevance); the error and the unaccounted
    cells red above `threshold`, green under it. None where the result keeps no ledger (IG's, or saved before)."""
    name = result.targets[target].name
    checks = [c for c in result.completeness if c.target == name and c.absorbed is not None]
    if not checks:
        return None
    entering, f = checks[0].entering, checks[0].f_input
    assert entering is not None  # AttnLRP's checks keep the entering relevance with the ledger
    data = pd.DataFrame([_ledger_row(c, result.layers[c.layer], entering) for c in checks])
    judged = {"conservation_error_pct", "unaccounted_pct"}
    columns = ["relevance_pct", "conservation_error_pct", *(f"{kind}_pct" for kind in ABSORBING_RULES),
               "unaccounted_pct"]
    fills = [["white"] * len(data)] + [
        [_PASS_CELL if abs(v) <= 100 * threshold else _FAIL_CELL for v in data[column]] if column in judged
        else ["white"] * len(data) for column in columns]
    headers = ["Layer (output of)", "Σ relevance", "conservation error",
               *(f"absorbed: {words}" for words in ABSORBING_RULES.values()), "unaccounted"]
    figure = go.Figure(go.Table(
        header={"values": headers, "align": "left"},
        cells={"values": [data.layer_label] + [[f"{v:+.2f}%" for v in data[column]] for column in columns],
               "fill_color": fills, "align": ["left"] + ["right"] * len(columns)}))
    apply_layout(figure, f"The ledger of {name}: where the entering relevance went, layer by layer",
                 f"Shares of the relevance entering at the target ({entering:.4g}; F = {f:.4g}, so the target "
                 f"function itself keeps F − entering = {f - entering:+.4g}) · absorbed between the logits and the "
                 "layer: entering − Σ absorbed = Σ relevance · red above "
                 f"{100 * threshold:g}% of the entering relevance, green under it", "", "",
                 height=150 + 24 * len(data))  # a three-line header, then a row per layer
    figure.update_layout(margin={"b": 10})  # no axes below a table
    return Chart(f"conservation-ledger-{name}-{result.example.id}", data, figure)


_PASS, _FAIL, _NEUTRAL = "#2ca02c", "#d62728", "#7f7f7f"
_PASS_CELL, _FAIL_CELL = "#dff0d8", "#f8d7da"


def incomplete_layers(result: Attribution, threshold: float = COMPLETENESS_WARNING) -> list[str]:
    """Layer labels whose relative completeness error exceeds the threshold for any target (IG's; AttnLRP's
    conservation is not complete by design), each once, in layer order; none for a method that promises no
    completeness (gradient × activation), whose gap is no fault."""
    if layerwise_method(result.settings.method).completeness_remedy is None:
        return []
    return [result.layers[layer] for layer in sorted({c.layer for c in result.completeness
                                                      if c.kind == "completeness" and c.relative_error > threshold})]


def jsd(result: Attribution, variant: str = "full", k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """Jensen–Shannon divergence between every pair of layers' passage-word distributions."""
    return _jsd_chart(result.layers, jsd_matrix(passage_distribution(result, aggregation, target), variant, k), variant,
                      k, result.example.id)


@register_figure("similarity")
def similarity(found: LayerSimilarity, inputs: Inputs, variant: str = "full") -> Chart:
    """The similarity analysis' JSD matrix of one variant (see jsd)."""
    return _jsd_chart(found.layers, found.matrix(variant), variant, found.k, inputs.result.example.id)


def _jsd_chart(layers: list[str], matrix: np.ndarray, variant: str, k: int, example_id: str) -> Chart:
    data = pd.DataFrame([{"layer_a": a, "layer_b": b, "value": float(matrix[i, j])}
                         for i, a in enumerate(layers) for j, b in enumerate(layers)])
    text = np.where(np.isnan(matrix), "undefined", np.char.mod("%.2f", np.nan_to_num(matrix)))
    figure = go.Figure(go.Heatmap(
        z=matrix, x=layers, y=layers, zmin=0, zmax=largest(matrix), colorscale="Viridis", hoverongaps=True,
        text=text, texttemplate="%{text}" if len(layers) <= 13 else None,
        colorbar={"title": {"text": "JSD (bits)"}},
        hovertemplate="%{y} vs %{x}: JSD %{text}<extra></extra>"))
    figure.update_yaxes(autorange="reversed")
    description = describe(variant, k)
    undefined = [layers[i] for i in np.flatnonzero(np.isnan(np.diag(matrix)))]
    note = (f" · undefined at {', '.join(undefined)}: no attribution left there after restriction" if undefined
            else "")
    apply_layout(figure, f"How differently layers spread their attribution: Jensen–Shannon divergence ({description})",
            "JSD compares the two layers' distributions of attribution over the passage words (their proportions, "
            f"not their ranks): 0 = identical, 1 = on disjoint words; renormalised after restriction{note}", "Layer (output of)", "Layer (output of)",
            height=max(420, 40 * len(layers) + 200))
    return Chart(f"jsd-{variant}-{example_id}", data, figure)


def layer_pair(result: Attribution, first: int, second: int, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """Two layers' word shares side by side, and their difference (second − first)."""
    table = word_table(result, aggregation, target)
    a, b = (table[table.layer == layer].reset_index(drop=True) for layer in (first, second))
    label_a, label_b = result.layers[first], result.layers[second]
    data = pd.DataFrame({"position": a.position, "word": a.word, "category": a.category,
                         f"share_pct_{label_a}": a.share_pct, f"share_pct_{label_b}": b.share_pct,
                         "difference_pct": b.share_pct - a.share_pct})
    words = [escape_label(w) for w in a.word]
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4],
                           subplot_titles=(f"Share of each layer's attribution: {label_a} vs {label_b}",
                                           f"Difference: {label_b} − {label_a} (percentage points)"))
    for layer_table, label, colour in ((a, label_a, "#1f77b4"), (b, label_b, "#ff7f0e")):
        figure.add_bar(x=a.position, y=layer_table.share_pct, name=label, marker_color=colour, customdata=words,
                       hovertemplate=f"%{{customdata}}: %{{y:.2f}}% in {label}<extra></extra>", row=1, col=1)
    figure.add_bar(x=a.position, y=data.difference_pct, name="difference", showlegend=False, customdata=words,
                   marker_color=np.where(data.difference_pct >= 0, "#ff7f0e", "#1f77b4"),
                   hovertemplate="%{customdata}: %{y:+.2f} points<extra></extra>", row=2, col=1)
    word_ticks(figure, words, row=2, col=1)
    figure.update_layout(barmode="group")
    apply_layout(figure, f"Comparing two layers: {label_a} and {label_b}", settings_line(result, aggregation, target),
            "", "Share of the layer (%)", height=640, subplot_titles=True)
    figure.update_xaxes(title_text="Passage words (in passage order)", row=2, col=1)
    figure.update_yaxes(title_text="Points", row=2, col=1)
    return Chart(f"layers-{label_a}-vs-{label_b}-{result.example.id}".replace(" ", ""), data, figure)


def projection(result: Attribution, layer: int, method: str = "tsne") -> Chart:
    """A 2-D map of every token vector at one layer, coloured as in the paper."""
    if result.hidden_states is None:
        raise ValueError("this result holds no layer outputs (hidden states); explain it again to project them")
    return projection_map(result, layer, project(result.hidden_states[layer], method))


def projection_map(result: Attribution, layer: int, projected: Projection) -> Chart:
    """projection's map, of the layer's vectors projected already (the dashboard projects them in a worker)."""
    method = "tsne" if projected.perplexity is not None else "pca"
    mapped = range(len(result.tokens)) if result.hidden_tokens is None else result.hidden_tokens  # one window's
    groups = token_groups(result)
    data = pd.DataFrame({"position": mapped, "token": [result.tokens[i] for i in mapped],
                         "group": [groups[i] for i in mapped], "x": projected.points[:, 0],
                         "y": projected.points[:, 1]})
    figure = go.Figure()
    for group, colour in GROUPS.items():
        part = data[data.group == group]
        answer = group == "answer"  # a star as well as red: it stays apart from its sentence's dots
        figure.add_scatter(x=part.x, y=part.y, mode="markers", name=group,
                           marker={"color": colour, "size": 12 if answer else 8, "symbol": "star" if answer else "circle"},
                           customdata=np.stack([[escape_label(t) for t in part.token], part.position], axis=-1)
                           if len(part) else None,
                           hovertemplate="<b>%{customdata[0]}</b> (token %{customdata[1]})<extra>" + group + "</extra>")
    name = f"t-SNE (perplexity {projected.perplexity:.3g}, seed 0)" if method == "tsne" else "PCA"
    apply_layout(figure, f"Token vectors at {result.layers[layer]}: {name}",
            "Red stars: predicted answer · black: [CLS]/[SEP] · green: question · blue: the answer's sentence · "
            "grey: the rest", *projected.axes, height=520)
    return Chart(f"{method}-{result.layers[layer].replace(' ', '')}-{result.example.id}", data, figure)
