"""What each layer's top-k words are: the paper's categories, parts of speech, and the quantifier ratio."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rcqa.analysis.pos import GROUP_NAMES
from rcqa.analysis.pos import GROUPS as POS_GROUPS
from rcqa.analysis.pos import PosShares, answer_pos, pos_shares
from rcqa.analysis.registry import Inputs, register_figure
from rcqa.analysis.roles.categories import category_labels, explains_abstention
from rcqa.analysis.roles.readings import phase_readings
from rcqa.analysis.roles.result import RoleShares
from rcqa.analysis.roles.shares import (RoleNumbers, category_shares, kind_of, kind_share, quantifier_share,
                                        role_numbers)
from rcqa.analysis.words import passage_distribution, top_k
from rcqa.figures.common import Chart, apply_layout, escape_label
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution

# exclusive labels of a top-k word (a word can be a query word and an answer or supporting word at once)
ROLE_COLOURS = {"answer": "#d62728", "answer+query": "#8c1c13", "supporting": "#ff7f0e",
                "supporting+query": "#b85c00", "query": "#2ca02c", "foil": "#1f77b4", "other": "#c7c7c7",
                "other_numbers": "#9467bd", "shared": "#17becf"}
POS_COLOURS = dict(zip(POS_GROUPS, ("#1f77b4", "#d62728", "#ff7f0e", "#9467bd", "#c7c7c7", "#7f7f7f", "#e377c2")))


def roles(result: Attribution, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """Per layer, what its top-k passage words are: answer, supporting (±5 words around it), query, or other; with
    the most of the top-k the answer's words can fill (its ceiling) and their share of the layer's attribution (the
    heatmap's shares summed over them).

    Bars stack exclusive labels (reading_shares: a query word inside the answer counts once, as 'answer+query', in
    the legend's group of the answer's words), the numbers role_readings reads, so every bar is 100 % of the layer's
    top words; a contrast's foil word counts as 'foil' whatever else it is (the category is shown only for a
    contrast), and a boundary contrast's word in both spans as 'shared'. The data also holds every stack's share of
    the attribution and the paper's overlapping per-category shares."""
    distribution = passage_distribution(result, aggregation, target)
    labels = category_labels(result, target)
    top = top_k(distribution, k)
    numbers = role_numbers(result, distribution, k, target)  # the numbers role_readings reads too
    colours = {name: ROLE_COLOURS[name] for name in numbers.top}
    data = pd.concat([_per_layer_table(result, top, numbers.top, "exclusive"),
                      _per_layer_table(result, top, numbers.attribution, "attribution"),
                      _per_layer_table(result, top, {"answer": numbers.ceiling}, "answer ceiling"),
                      _per_layer_table(result, top, category_shares(result, distribution, k, target),
                                       "paper (overlapping)")], ignore_index=True)
    names = {label: "+".join(labels.get(part, part) for part in label.split("+")) for label in colours}
    figure = _stacked_shares(result, data[data.measure == "exclusive"], colours, k, names,
                             groups={name: kind_of(name) for name in colours})
    _answer_lines(figure, result, numbers, explains_abstention(result, target))
    figure.update_layout(legend={"title": {"text": "Top-k word is"}, "groupclick": "toggleitem"})
    inside = ("the words of the best span the model weighed against no answer" if explains_abstention(result, target)
              else "inside the explained span")
    foil = f" · foil = inside the foil {_foil_text(result, target)}" if "foil" in labels else ""
    if "shared" in labels:  # a boundary contrast: the foil overlaps the span
        inside, foil = (f"{inside}, not the foil", f" · {labels['foil']} = inside the foil {_foil_text(result, target)}"
                                                   f", not the answer · shared = in both")
    apply_layout(figure, f"What each layer's top-{k} passage words are",
            f"{labels['answer']} = {inside} · supporting = within 5 words of it · query = also in the "
            f"question (stopwords excluded){foil} · punctuation is no word", "Layer (output of)",
            f"% of the layer's top-{k} words (bars) or attribution (line)")
    return Chart(f"roles-top{k}-{result.example.id}", data, figure)


def _answer_lines(figure: go.Figure, result: Attribution, numbers: RoleNumbers, abstention: bool) -> None:
    """Over the bars: the answer's ceiling in the top-k (a dash per layer) and its share of the layer's attribution
    (a line), named for the answer's word count; neither where the passage shown holds no word of it (a boundary
    contrast's answer inside its foil)."""
    answer, count = "best span" if abstention else "answer", numbers.answer_words
    if not count:
        return
    words = f"{count} word{'s' * (count != 1)}"
    figure.add_scatter(x=result.layers, y=numbers.ceiling, mode="markers", name=f"{answer}'s ceiling: its {words} of "
                       f"{numbers.k}", legendgroup="lines",
                       marker={"symbol": "line-ew-open", "size": 44, "color": "#222", "line": {"width": 4}},
                       hovertemplate=f"%{{x}}: the {answer}'s {words} can fill at most %{{y:.0f}}% of the top-"
                                     f"{numbers.k}<extra></extra>")
    figure.add_scatter(x=result.layers, y=kind_share(numbers.attribution, "answer"), mode="lines+markers",
                       name=f"{answer}'s share of the layer's attribution", legendgroup="lines",
                       line={"color": "#222", "dash": "dot"}, marker={"symbol": "diamond", "size": 8},
                       hovertemplate=f"%{{x}}: the {answer}'s {words} hold{'s' * (count == 1)} %{{y:.1f}}% of the "
                                     "layer's attribution<extra></extra>")


def _foil_text(result: Attribution, target: int) -> str:
    foil = result.targets[target].foil
    assert foil is not None  # asked only for a contrast's target
    text = foil.text
    return f"“{escape_label(text if len(text) <= 40 else text[:39] + '…')}”"


def pos_mix(result: Attribution, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """Per layer, the parts of speech of its top-k passage words (the paper's groups), beside those of the
    explained span's words."""
    distribution = passage_distribution(result, aggregation, target)
    top = top_k(distribution, k)
    data = _per_layer_table(result, top, pos_shares(result, distribution, k), "top-k")
    span = answer_pos(result, target)
    if span is not None:
        data = pd.concat([data, pd.DataFrame([{"layer": -1, "layer_label": "explained span", "measure": "span",
                                               "category": group, "share_pct": share, "top_words": None}
                                              for group, share in span.items()])], ignore_index=True)
    figure = _stacked_shares(result, data, POS_COLOURS, k, GROUP_NAMES, extra_bar="explained span")
    figure.update_layout(legend={"title": {"text": "Part of speech"}})
    apply_layout(figure, f"Parts of speech of each layer's top-{k} passage words",
            "noun, pronoun or number (the paper's “entity”): NN NNS NNP NNPS PRP PRP$ CD · verb: VB* · adjective: "
            "JJ* · adverb: RB* · function word: CC DT EX IN LS MD PDT POS RP TO UH WDT WP WP$ WRB (spaCy's Penn "
            "Treebank tags); last bar: the explained span's words",
            "Layer (output of)", f"Share of the layer's top-{k} passage words (%)")
    return Chart(f"pos-top{k}-{result.example.id}", data, figure)


def _per_layer_table(result: Attribution, top: list[np.ndarray], shares: dict[str, np.ndarray],
                     measure: str) -> pd.DataFrame:
    """Long table: one row per layer and category, its share (NaN for a layer with no top words) and how many
    top words the layer has."""
    return pd.DataFrame([{"layer": layer, "layer_label": label, "measure": measure, "category": name,
                          "share_pct": float(values[layer]), "top_words": len(top[layer])}
                         for name, values in shares.items() for layer, label in enumerate(result.layers)])


def _stacked_shares(result: Attribution, data: pd.DataFrame, colours: dict[str, str], k: int,
                    names: dict[str, str] | None = None, extra_bar: str | None = None,
                    groups: dict[str, str] | None = None) -> go.Figure:
    """Stacked bars of shares per layer (and an extra bar), each category shown under its name in `names` and in
    its legend group in `groups` (titled where it holds two categories); a layer with fewer than k top words says so
    above its bar, and one with none says that its shares are undefined."""
    figure = go.Figure()
    members = pd.Series(groups or {}).value_counts()
    for category, colour in colours.items():
        part, name = data[data.category == category], (names or {}).get(category, category)
        group = (groups or {}).get(category)
        figure.add_bar(x=part.layer_label, y=part.share_pct, name=name, marker_color=colour, legendgroup=group,
                       legendgrouptitle_text=f"{group} words" if group and members[group] > 1 else None,
                       hovertemplate=f"%{{x}}: %{{y:.0f}}% {name}<extra></extra>")
    counts = data.drop_duplicates("layer_label").set_index("layer_label").top_words
    for label in result.layers:
        found = counts.get(label)
        if found is not None and found < k:
            note = ("no words with attribution: undefined" if found == 0 else
                    f"only {int(found)} top word{'s' * (int(found) != 1)}")
            figure.add_annotation(x=label, y=100, text=note, showarrow=False, yshift=12, font={"size": 10})
    order = list(result.layers) + ([extra_bar] if extra_bar else [])
    figure.update_layout(barmode="stack")
    figure.update_xaxes(categoryorder="array", categoryarray=order)
    figure.update_yaxes(range=[0, 110])
    return figure


def role_readings(result: Attribution, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> list[tuple[str, str]]:
    """The phases in plain words (early / middle / late layers), from the numbers the roles chart draws: its stacks
    (each word counted once, so the shares add up to 100 %), the answer's ceiling and its share of the attribution."""
    numbers = role_numbers(result, passage_distribution(result, aggregation, target), k, target)
    return phase_readings(result.layers, numbers, explains_abstention(result, target))


def quantifiers(result: Attribution, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart | None:
    """For 'how many / how much' questions over a passage with ≥ 2 numbers: the paper's quantifier ratio."""
    shares = quantifier_share(result, passage_distribution(result, aggregation, target), k, target)
    if shares is None:
        return None
    data = pd.DataFrame({"layer": range(len(result.layers)), "layer_label": result.layers, "ratio_pct": shares})
    figure = go.Figure(go.Scatter(x=data.layer_label, y=data.ratio_pct, mode="lines+markers", line_color="#9467bd",
                                  hovertemplate="%{x}: %{y:.1f}%<extra></extra>"))
    apply_layout(figure, f"Quantifier question: how much the top-{k} words dwell on the passage's numbers",
            "(numbers among the top-k, less one if one is in the explained span) / numbers in the passage "
            "(words tagged CD); a gap: the layer has no top words",
            "Layer (output of)", "Passage numbers in the top-k (%)", height=380)
    figure.update_yaxes(rangemode="tozero")
    return Chart(f"quantifiers-top{k}-{result.example.id}", data, figure)


# the registered analyses' figures draw from the explanation, as the Explore page does, so that both read alike
@register_figure("roles")
def role_figure(found: RoleShares, inputs: Inputs) -> Chart:
    return roles(inputs.result, inputs.k, inputs.aggregation, inputs.target)


@register_figure("pos")
def pos_figure(found: PosShares, inputs: Inputs) -> Chart:
    return pos_mix(inputs.result, inputs.k, inputs.aggregation, inputs.target)
